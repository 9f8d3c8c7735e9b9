import { systemClock, unrefTimer, type Clock } from '../base/clock';
import { ExitCode, UsageError } from '../base/errors';
import { checkId } from '../base/ids';
import { isTerminal, type JobRecord, type JobState } from '../store/jobSchema';
import type { JobChange } from './jobAnnouncer';
import type { JobEngine } from './jobEngine';
import { exitCodeOf } from './submit';

export interface JobWaitRequest {
  /** The jobs to wait for, in the order the caller named them (duplicates count once). */
  ids: readonly string[];
  /** Until the first of them ends (else until every one has). */
  any: boolean;
  /** Give up after this many seconds; the jobs go on. */
  timeoutS?: number;
  /** Stops the wait (not the jobs): an MCP client cancelling its call. */
  signal?: AbortSignal;
  /** A change to one of the jobs waited for (progress for the caller to show). */
  onChange?: (change: JobChange) => void;
  /**
   * The state the caller last showed of each job (a submit's answer): a change from it is reported
   * even when it came before the wait began. Else changes are reported from the state `onStart` gets.
   */
  since?: ReadonlyMap<string, JobState>;
  /** The jobs as the wait found them when it began, before any change is reported (once the IDs are checked). */
  onStart?: (jobs: readonly JobRecord[]) => void;
  clock?: Clock;
}

export interface JobWaitResult {
  /** The jobs waited for, as they are now, in the order asked. */
  jobs: JobRecord[];
  /** The IDs that had ended when the wait returned, in the order they ended (those ended before it began first, in the order asked). */
  ended: string[];
  /** The wait ran out (or was stopped) with the jobs it waits for still open. */
  timedOut: boolean;
  /**
   * As the job table: with `any`, the exit code of the first job to end; else 0 when every job
   * completed, or the code of the first job (in the order asked) that did not. 75 when the wait ran
   * out first.
   */
  exitCode: ExitCode;
}

/**
 * `mam job wait`: follows jobs someone else submitted (`--no-wait`, a loop, another agent) to their
 * end. It only watches: the jobs' timers belong to whoever owns them (the submitter, else the job
 * warden), so a wait that is stopped or runs out changes nothing. Unknown or malformed IDs are bad
 * input, found before anything connects.
 */
export async function waitForJobs(engine: JobEngine, req: JobWaitRequest): Promise<JobWaitResult> {
  const jobs = engine.deps.controlPlane.jobs;
  const ids = [...new Set(req.ids)];
  if (ids.length === 0) throw new UsageError('name at least one job to wait for');
  for (const id of ids) {
    checkId(id);
    if (!jobs.get(id)) throw new UsageError(`unknown job '${id}'`);
  }
  if (req.timeoutS !== undefined && !(req.timeoutS >= 0)) throw new UsageError('--timeout must be 0 seconds or more');

  const ended: string[] = [];
  const done = (): boolean => (req.any ? ended.length > 0 : ended.length === ids.length);
  // The state each job was last reported in: a change is reported once, whether this process applied
  // it or read it from the disk after another process did (the caller sees every job reach its end).
  const first = ids.map((id) => jobs.require(id));
  const known = new Map(first.map((job) => [job.id, req.since?.get(job.id) ?? job.state]));
  req.onStart?.(first);
  const report = (job: JobRecord): void => {
    const previous = known.get(job.id)!;
    if (job.state === previous) return;
    known.set(job.id, job.state);
    req.onChange?.({ job, previous });
  };
  const look = (): void => {
    for (const id of ids) {
      const job = jobs.require(id);
      report(job);
      if (!ended.includes(id) && isTerminal(job.state)) ended.push(id);
    }
  };
  look();
  let timedOut = false;
  if (!done() && !req.signal?.aborted) {
    // Events reach a job's record through whoever applies them; connecting makes this process one
    // of them, so the wait does not depend on another one being up (and is exit 3 without a broker).
    await engine.connect();
    const clock = req.clock ?? systemClock;
    await new Promise<void>((resolve) => {
      let over = false;
      const finish = (): void => {
        over = true;
        sub.dispose();
        clock.clearTimeout(poll);
        if (deadline !== undefined) clock.clearTimeout(deadline);
        req.signal?.removeEventListener('abort', stop);
        resolve();
      };
      const check = (): void => {
        look();
        if (done()) finish();
      };
      const stop = (): void => {
        timedOut = true;
        finish();
      };
      const sub = engine.ledger.onDidChangeJob((change) => {
        if (!ids.includes(change.job.id)) return;
        report(change.job);
        check();
      });
      // A change another process wrote whose state message never reached us is still seen.
      let poll: unknown;
      const repoll = (): void => {
        poll = unrefTimer(
          clock.setTimeout(() => {
            check();
            if (!over) repoll();
          }, 1000),
        );
      };
      repoll();
      const deadline = req.timeoutS === undefined ? undefined : unrefTimer(clock.setTimeout(stop, req.timeoutS * 1000));
      req.signal?.addEventListener('abort', stop);
      check();
    });
    // Ended just as the wait ran out: the jobs decide, not the timer.
    look();
    if (done()) timedOut = false;
  }
  const records = ids.map((id) => jobs.require(id));
  return { jobs: records, ended, timedOut, exitCode: timedOut ? ExitCode.stillOpen : exitCodeOfWait(records, ended, req.any) };
}

function exitCodeOfWait(records: JobRecord[], ended: string[], any: boolean): ExitCode {
  if (any) return exitCodeOf(records.find((j) => j.id === ended[0])!);
  return records.map(exitCodeOf).find((code) => code !== ExitCode.ok) ?? ExitCode.ok;
}
