import { errorMessage, ExitCode, LockTimeoutError, MamError, UsageError } from '../base/errors';
import type { Logger } from '../base/log';
import type { JobEngine } from '../jobs/jobEngine';
import { REASONS } from '../jobs/lifecycle';
import { cancelLoop } from '../loop/loopCancel';
import { LoopStore } from '../loop/loopState';
import { isTerminal } from '../store/jobSchema';
import { acquire } from '../store/lock';
import { Lander } from './lander';
import { MergeLog } from './mergeLog';
import { ENTRY_ID_PATTERN, MergeQueueStore, type MergeEntry } from './mergeQueue';
import { removeScratch } from './repo';

/** Another `mam merge run` holds the queue: exit 5, like a loop that could not start. */
export class MergeBusyError extends MamError {
  constructor(message: string) {
    super(message, 'merge_busy', ExitCode.notDelivered);
  }
}

export interface MergeRunOptions {
  engine: JobEngine;
  logger: Logger;
  /** A checkout of the repository: the workspace. */
  repo: string;
  validateTimeoutMs?: number;
  say?: (line: string) => void;
}

export interface MergeRunResult {
  /** Entries this run landed, in order. */
  landed: MergeEntry[];
  /** The queue after the run. */
  entries: MergeEntry[];
}

/** Job endings that mean the job never reached its session: the queue gives the job again. */
const UNDELIVERED = new Set<string>([REASONS.sessionBusy, REASONS.targetNotFound, REASONS.notDelivered, REASONS.claimed]);

export const DEFAULT_VALIDATE_TIMEOUT_MS = 30 * 60_000;

/**
 * `mam merge run`: one runner per workspace (the run lock), one entry at a time, in queue order.
 * An entry that waits does not hold up the ones behind it. An entry left midway by a runner that
 * died is resumed from its recorded step (Lander); one waiting on its creator's job runs again
 * once that job completed.
 */
export class MergeRunner {
  readonly store: MergeQueueStore;
  readonly log: MergeLog;

  constructor(private readonly options: MergeRunOptions) {
    this.store = new MergeQueueStore(options.engine.deps.controlPlane.paths, options.engine.clock);
    this.log = new MergeLog(this.store.paths, () => this.store.now());
  }

  async run(): Promise<MergeRunResult> {
    const release = await lockRun(this.store);
    try {
      const lander = new Lander({
        engine: this.options.engine, store: this.store, log: this.log, repo: this.options.repo, logger: this.options.logger,
        validateTimeoutMs: this.options.validateTimeoutMs ?? DEFAULT_VALIDATE_TIMEOUT_MS, ...(this.options.say ? { say: this.options.say } : {}),
      });
      const landed: MergeEntry[] = [];
      for (const id of this.store.read().map((e) => e.id)) {
        const entry = this.store.get(id);
        if (!entry) continue;
        try {
          const todo = this.whatToDo(entry);
          if (todo === 'land') {
            const after = await lander.land(entry);
            if (after.state === 'landed') landed.push(after);
          } else if (todo === 'resubmit') {
            await lander.submit(entry);
          }
        } catch (err) {
          // Something unforeseen (git refused, a disk error): this entry waits, the others go on.
          const reason = `stopped: ${errorMessage(err)}`;
          this.log.write(id, reason);
          await this.store.patch(id, { state: 'waiting', step: null, attempt: null, reason });
          await removeScratch(this.options.repo, this.store.paths, id).catch(() => undefined);
        }
      }
      return { landed, entries: this.store.read() };
    } finally {
      release();
    }
  }

  /** What a run does with an entry: land it, give its creator's job again, or leave it. */
  private whatToDo(entry: MergeEntry): 'land' | 'resubmit' | 'leave' {
    if (entry.state === 'landed') return 'leave';
    if (entry.state !== 'waiting' || !entry.job_id) return 'land';
    const job = this.options.engine.deps.controlPlane.jobs.get(entry.job_id);
    if (!job) return entry.job_prompt ? 'resubmit' : 'land';
    if (!isTerminal(job.state)) return 'leave';
    if (job.state === 'completed') return 'land';
    if (job.state === 'cancelled' && UNDELIVERED.has(job.reason ?? '') && entry.job_prompt) return 'resubmit';
    return 'leave';
  }
}

/** Whether a `mam merge run` holds the queue now. */
export async function isRunning(store: MergeQueueStore): Promise<boolean> {
  try {
    (await lockRun(store))();
    return false;
  } catch (err) {
    if (err instanceof MergeBusyError) return true;
    throw err;
  }
}

async function lockRun(store: MergeQueueStore): Promise<() => void> {
  store.paths.ensureDir();
  try {
    return await acquire(store.paths.lock('merge-run'), { timeoutMs: 0, what: 'the merge queue' });
  } catch (err) {
    if (err instanceof LockTimeoutError) throw new MergeBusyError(`another mam merge run is landing: ${err.message}`);
    throw err;
  }
}

/**
 * `mam merge remove`: takes an entry out of the queue, with its scratch worktree and an unfinished
 * review loop of it. Refused while a runner is landing that very entry.
 */
export async function removeEntry(engine: JobEngine, repo: string, id: string): Promise<MergeEntry> {
  if (!ENTRY_ID_PATTERN.test(id)) throw new UsageError(`'${id.slice(0, 40)}' is not a merge queue entry ID`);
  const store = new MergeQueueStore(engine.deps.controlPlane.paths, engine.clock);
  const entry = store.get(id);
  if (!entry) throw new UsageError(`no entry '${id}' in the merge queue`);
  if (entry.state === 'running' && (await isRunning(store))) throw new MergeBusyError(`entry ${id} is being landed by mam merge run (${entry.step}); wait for it, or stop that run first`);
  const removed = await store.update((entries) => {
    const i = entries.findIndex((e) => e.id === id);
    if (i < 0) throw new UsageError(`no entry '${id}' in the merge queue`);
    return entries.splice(i, 1)[0]!;
  });
  await removeScratch(repo, store.paths, id);
  // A review round a killed runner left unfinished on the entry's scratch worktree ends with it.
  const loops = new LoopStore(store.paths);
  const scratch = store.paths.mergeScratch(id);
  for (const loop of loops.list()) if (loop.status === 'running' && (loop.checkout === scratch || loop.id === removed.attempt?.review_loop)) await cancelLoop(engine, loops, loop.id);
  new MergeLog(store.paths, () => store.now()).write(id, 'removed from the queue');
  return removed;
}
