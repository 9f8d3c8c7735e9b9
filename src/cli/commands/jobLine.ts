import { printable } from '../../core/base/ids';
import type { JobRecord } from '../../core/store/jobSchema';

/** One job as one line: `ID STATE (reason): detail` — what `job submit` and `job wait` print. */
export function describeJob(job: JobRecord): string {
  const said = job.detail ? printable(job.detail, 2000) : job.why ? printable(job.why, 2000) : '';
  return `${job.id} ${job.state}${job.reason ? ` (${job.reason})` : ''}${said ? `: ${said}` : ''}`;
}

/** A state change of one job, for stderr while a command waits on it. */
export function describeChange(job: JobRecord, previous: string | null): string {
  return `mam: job ${job.id}: ${previous ?? 'new'} → ${job.state}${job.reason ? ` (${job.reason})` : ''}\n`;
}
