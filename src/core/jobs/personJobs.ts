import * as fs from 'node:fs';
import { UsageError } from '../base/errors';
import { printable } from '../base/ids';
import { publishJobEvent } from '../messaging/publisher';
import { handsInReport, reportPathOf } from './brief';
import type { JobEngine } from './jobEngine';
import { isTerminal, type JobRecord } from '../store/jobSchema';

/** What a person does with a job assigned to them (`human:NAME`), from VS Code. */
export type PersonAction = { event: 'started' } | { event: 'completed'; detail: string } | { event: 'error'; detail: string };

/**
 * Publishes a person's event for their job, exactly as `mam event` would from their terminal:
 * signed with the job's token, through the outbox, judged like any agent's. A reviewer or planner
 * hands in the report file its brief names (it must exist by then).
 */
export async function actAsPerson(engine: JobEngine, jobId: string, action: PersonAction): Promise<JobRecord> {
  engine.trust.require('report on a job');
  const { controlPlane } = engine.deps;
  const job = controlPlane.jobs.require(jobId);
  if (job.target?.kind !== 'human') throw new UsageError(`job ${jobId} is not a person's job (it went to ${printable(job.session, 60)})`);
  if (isTerminal(job.state)) throw new UsageError(`job ${jobId} has ended (${job.state})`);
  if (action.event === 'completed' && job.state !== 'started') throw new UsageError(`start job ${jobId} before completing it`);
  let reportFile: string | undefined;
  if (action.event === 'completed' && handsInReport(job.role) && job.brief) {
    reportFile = reportPathOf(job.brief);
    if (!fs.existsSync(reportFile)) throw new UsageError(`a ${job.role} hands in a report: write it at ${reportFile} first`, 'missing_report');
  }
  await engine.connect();
  await publishJobEvent({
    workspace: controlPlane.workspace,
    jobId,
    event: action.event,
    ...(action.event !== 'started' ? { detail: action.detail } : {}),
    ...(reportFile ? { reportFile } : {}),
    sender: `human:${job.target.name}`,
    endpoint: engine.endpoint,
  });
  // The event is in the outbox whatever the broker did: apply it here at once if nobody has yet.
  await engine.ledger.applyOutbox(jobId);
  return controlPlane.jobs.require(jobId);
}

/** The report file a person's reviewer or planner job hands in, with a start, made if missing. */
export function personReportFile(job: JobRecord): string | undefined {
  if (!handsInReport(job.role) || !job.brief) return undefined;
  const file = reportPathOf(job.brief);
  if (!fs.existsSync(file)) {
    const verdict = job.role === 'reviewer' ? '\n\n[VERDICT: NOT PASS]\n' : '\n';
    fs.writeFileSync(file, `# ${job.role === 'reviewer' ? 'Review' : 'Plan'}: ${job.title ?? job.id}\n\n${job.role === 'reviewer' ? '## Findings\n\n- …' : '…'}${verdict}`);
  }
  return file;
}
