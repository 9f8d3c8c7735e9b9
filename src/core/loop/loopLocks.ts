import { createHash } from 'node:crypto';
import { LockTimeoutError } from '../base/errors';
import type { Logger } from '../base/log';
import type { ControlPlanePaths } from '../store/paths';
import { acquire } from '../store/lock';
import { LoopNotStartedError } from './loopRequest';
import type { LoopState } from './loopState';

/**
 * Which loops may run at once: one per checkout, and a `--type loop` job's loop on its own (its
 * checkout may hold others' work). Each is a lock held for the loop's whole run, taken at once or
 * not at all: a second loop is refused with the holder named, never queued.
 */
export class LoopLocks {
  constructor(
    private readonly paths: ControlPlanePaths,
    private readonly logger: Logger,
  ) {}

  /** The lock `state`'s loop runs under: its own for a `--type loop` job's, else its checkout's. */
  forLoop(state: LoopState): Promise<() => void> {
    return state.job ? this.take(`loop-${state.id}`, `the loop ${state.id}`) : this.forCheckout(state.checkout);
  }

  forCheckout(checkout: string): Promise<() => void> {
    return this.take(`loop-${createHash('sha256').update(checkout).digest('hex').slice(0, 16)}`, `the checkout ${checkout}`);
  }

  private async take(name: string, what: string): Promise<() => void> {
    try {
      return await acquire(this.paths.lock(name), { timeoutMs: 0, what, logger: this.logger });
    } catch (err) {
      if (err instanceof LockTimeoutError) throw new LoopNotStartedError(`another loop is running on ${what}: ${err.message}`);
      throw err;
    }
  }
}
