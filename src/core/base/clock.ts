/**
 * Time as the supervisor and the loop see it. Production code uses `systemClock`; tests pass a fake
 * (`clockOf(FakeTimers.createClock())`, test/support/clock.ts) and move time on without waiting.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Lets the process exit while `handle` (a timer of systemClock) waits; other clocks' handles pass through. */
export function unrefTimer(handle: unknown): unknown {
  (handle as { unref?: () => void } | undefined)?.unref?.();
  return handle;
}

/** Resolves after `ms` of the clock's time. */
export function sleepOn(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}
