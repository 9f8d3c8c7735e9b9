import type { JobRecord } from '../../core/store/jobSchema';

export { describeJob } from '../../core/jobs/formatLog';

/** A state change of one job, for stderr while a command waits on it. */
export function describeChange(job: JobRecord, previous: string | null): string {
  return `mam: job ${job.id}: ${previous ?? 'new'} → ${job.state}${job.reason ? ` (${job.reason})` : ''}\n`;
}
