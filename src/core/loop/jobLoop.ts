import { ExitCode, UsageError } from '../base/errors';
import type { JobEngine } from '../jobs/jobEngine';
import { moveParent, registerParent, taskText, type CompositeRequest } from '../jobs/compositeJobs';
import { REASONS } from '../jobs/lifecycle';
import { exitCodeOf, type SubmitRequest } from '../jobs/submit';
import { parseTarget } from '../jobs/targetAddress';
import { isTerminal, type JobRecord } from '../store/jobSchema';
import type { LoopJob, LoopOptions, LoopRound, LoopState } from './loopState';

/**
 * `mam job submit --type loop` (SPEC §5) is a review loop with one reviewer: the worker (the
 * session) implements, the reviewer reviews what it reported, the worker addresses the findings,
 * until PASS or --max-iter rounds. The loop's state is saved like any loop's (`mam loop resume`);
 * the parent job stands for it in job lists, its jobs are the parent's children, and the parent
 * ends when the loop does. This file holds what differs from `mam loop`: its checks, its prompts
 * (the job type's own, unchanged) and how the loop's end becomes the parent's.
 */

/** Checks the request and registers the parent job; the options of the loop that carries it out. */
export async function loopJobOptions(engine: JobEngine, req: CompositeRequest): Promise<LoopOptions> {
  if (!req.reviewer) throw new UsageError('--type loop needs --reviewer SESSION');
  parseTarget(req.reviewer);
  parseTarget(req.session);
  const task = taskText(req);
  await engine.connect();
  const parent = await registerParent(engine, req, 'loop', task);
  const job: LoopJob = {
    id: parent.id,
    ...(req.timeoutS !== undefined ? { timeout_s: req.timeoutS } : {}),
    ...(req.idleTimeoutS !== undefined ? { idle_timeout_s: req.idleTimeoutS } : {}),
    ...(req.startTimeoutS !== undefined ? { start_timeout_s: req.startTimeoutS } : {}),
    ...(req.heartbeatS !== undefined ? { heartbeat_s: req.heartbeatS } : {}),
  };
  return {
    task, creator: req.session, planner: null, plan_talk: 0, reviewers: [req.reviewer], max_loop: req.maxIter ?? 3, max_rebut: 0, review_only: false,
    checkout: engine.deps.controlPlane.workspace, base: '', job,
  };
}

/** What every job of a `--type loop` loop is submitted with: its parent, and the submit's timing flags. */
export function loopJobSubmitOptions(job: LoopJob): Partial<SubmitRequest> {
  return {
    parentJob: job.id,
    ...(job.timeout_s !== undefined ? { timeoutS: job.timeout_s } : {}),
    ...(job.idle_timeout_s !== undefined ? { idleTimeoutS: job.idle_timeout_s } : {}),
    ...(job.start_timeout_s !== undefined ? { startTimeoutS: job.start_timeout_s } : {}),
    ...(job.heartbeat_s !== undefined ? { heartbeatS: job.heartbeat_s } : {}),
  };
}

/** The worker's first job: the task as given. */
export function workPrompt(state: LoopState): string {
  return state.task;
}

/** The worker's next job: the task, with the reviewer's findings to address. */
export function addressPrompt(state: LoopState, round: LoopRound, findings: string): string {
  return `${state.task}\n\n## Review findings to address (iteration ${round.n + 1} of ${state.max_loop})\n\n${findings}`;
}

/** The reviewer's job: what the worker reported, judged against the task. */
export function judgePrompt(state: LoopState, round: LoopRound, work: { job_id: string; text?: string }): string {
  return `Review the work done for this task (iteration ${round.n} of ${state.max_loop}).\n\n### Task\n\n${state.task}\n\n### What the worker reported (job ${work.job_id})\n\n${work.text ?? ''}\n\nWrite a report with your findings. End it with your verdict alone on the last line: [VERDICT: PASS] or [VERDICT: NOT PASS].`;
}

/**
 * The loop has ended: its parent job ends the same way (completed on PASS; failed with
 * max_iterations, or as the step that failed; cancelled with the loop). The exit status is the
 * job type's: 0, 1 with no PASS, else as the failed step's own job would give.
 */
export async function endLoopJob(engine: JobEngine, state: LoopState, job: LoopJob): Promise<ExitCode> {
  const jobs = engine.deps.controlPlane.jobs;
  const iterations = state.rounds.filter((r) => r.status !== 'stale').length;
  const failedStep = state.steps.filter((s) => s.status === 'done' && s.job_state !== undefined && s.job_state !== 'completed').at(-1);
  const failedJob: JobRecord | undefined = failedStep ? jobs.get(failedStep.job_id) : undefined;
  const end =
    state.status === 'passed' ? { to: 'completed' as const, reason: null, detail: `PASS after ${iterations} iteration(s)`, exitCode: ExitCode.ok }
    : state.status === 'cancelled' ? { to: 'cancelled' as const, reason: REASONS.cancelledByUser, detail: `loop ${state.id} was cancelled`, exitCode: ExitCode.failed }
    : state.reason === 'max_loop' ? { to: 'failed' as const, reason: 'max_iterations', detail: `no PASS within ${state.max_loop} iteration(s)`, exitCode: ExitCode.failed }
    : failedStep && failedJob ? {
        to: 'failed' as const, reason: failedJob.reason ?? failedJob.state, exitCode: exitCodeOf(failedJob),
        detail: `${failedStep.kind === 'review' ? 'reviewer' : 'worker'} job ${failedJob.id} ended ${failedJob.state}${failedJob.reason ? ` (${failedJob.reason})` : ''}`,
      }
    : { to: 'failed' as const, reason: 'error', detail: state.reason ?? `loop ${state.id} failed`, exitCode: ExitCode.failed };
  await moveParent(engine, job.id, 'started');
  await engine.ledger.transition(job.id, end.to, end.reason, { when: (j) => !isTerminal(j.state), fields: { detail: end.detail } });
  return end.exitCode;
}
