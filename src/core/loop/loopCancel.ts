import * as os from 'node:os';
import { ExitCode, UsageError } from '../base/errors';
import { cancelJob } from '../jobs/jobActions';
import type { JobEngine } from '../jobs/jobEngine';
import { isTerminal } from '../store/jobSchema';
import { isAlive, sleep } from '../base/process';
import type { LoopState, LoopStore } from './loopState';

const CANCELLED = { status: 'cancelled', reason: 'cancelled by the user', exit_code: ExitCode.failed } as const;

/**
 * Cancels a running loop without signalling anyone: its owner may be `mam loop` in a terminal, but
 * also a VS Code extension host (this one, or another window's). The status is written first; the
 * loop's open jobs are cancelled, which ends the step its runner waits on; the runner then sees
 * the status at its next save and lets go (LoopRunner). Waits, within `waitMs`, for a live owner
 * on this host to let go, cancelling any job it managed to start meanwhile, and writes the
 * cancelled state last, so that no late write of the runner's survives.
 */
export async function cancelLoop(engine: JobEngine, store: LoopStore, id: string, options: { waitMs?: number } = {}): Promise<{ loop: LoopState; changed: boolean }> {
  const loop = store.get(id);
  if (!loop) throw new UsageError(`unknown loop '${id}'`);
  if (loop.status !== 'running') return { loop, changed: false };
  store.save({ ...loop, ...CANCELLED });
  const jobs = engine.deps.controlPlane.jobs;
  const deadline = Date.now() + (options.waitMs ?? 10_000);
  for (;;) {
    const now = store.get(id) ?? loop;
    for (const step of now.steps) {
      const job = jobs.get(step.job_id);
      if (job && !isTerminal(job.state)) await cancelJob(engine, job.id);
    }
    const owner = now.owner;
    if (!owner || owner.host !== os.hostname() || !isAlive(owner.pid) || Date.now() > deadline) break;
    await sleep(50);
  }
  const latest = { ...(store.get(id) ?? loop), ...CANCELLED, owner: null };
  store.save(latest);
  return { loop: latest, changed: true };
}
