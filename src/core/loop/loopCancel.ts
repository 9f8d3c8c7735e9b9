import * as os from 'node:os';
import { sleepOn, type Clock } from '../base/clock';
import { ExitCode, UsageError } from '../base/errors';
import { cancelJob } from '../jobs/jobActions';
import type { JobEngine } from '../jobs/jobEngine';
import { isTerminal } from '../store/jobSchema';
import { isAlive } from '../base/process';
import { endLoopJob } from './jobLoop';
import type { LoopState, LoopStore } from './loopState';

/** How often a cancel looks again at the loop's owner and its jobs while the owner lets go. */
export const RECHECK_MS = 50;

const CANCELLED = { status: 'cancelled', reason: 'cancelled by the user', exit_code: ExitCode.failed } as const;

/**
 * Cancels a running loop without signalling anyone: its owner may be `mam loop` in a terminal, but
 * also a VS Code extension host (this one, or another window's). The status is written first; the
 * loop's open jobs are cancelled, which ends the step its runner waits on; the runner then sees
 * the status at its next save and lets go (LoopRunner). Waits, within `waitMs`, for a live owner
 * on this host to let go, cancelling any job it managed to start meanwhile, and writes the
 * cancelled state last, so that no late write of the runner's survives. A `--type loop` job's
 * parent is cancelled with it. Time is the `clock`'s (tests pass a fake).
 */
export async function cancelLoop(engine: JobEngine, store: LoopStore, id: string, options: { waitMs?: number; clock?: Clock } = {}): Promise<{ loop: LoopState; changed: boolean }> {
  const clock = options.clock ?? engine.clock;
  const loop = store.get(id);
  if (!loop) throw new UsageError(`unknown loop '${id}'`);
  if (loop.status !== 'running') return { loop, changed: false };
  store.save({ ...loop, ...CANCELLED });
  const jobs = engine.deps.controlPlane.jobs;
  const deadline = clock.now() + (options.waitMs ?? 10_000);
  for (;;) {
    const now = store.get(id) ?? loop;
    for (const step of now.steps) {
      const job = jobs.get(step.job_id);
      if (job && !isTerminal(job.state)) await cancelJob(engine, job.id);
    }
    const owner = now.owner;
    if (!owner || owner.host !== os.hostname() || !isAlive(owner.pid) || clock.now() > deadline) break;
    await sleepOn(clock, RECHECK_MS);
  }
  const latest = { ...(store.get(id) ?? loop), ...CANCELLED, owner: null };
  store.save(latest);
  if (latest.job) await endLoopJob(engine, latest, latest.job);
  return { loop: latest, changed: true };
}
