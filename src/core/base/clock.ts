/**
 * Time as the core keeps it: the job engine and everything it builds (ledger, bus, supervisor,
 * usage readings, delivery), the loop, the merge queue and the overlap watcher. Production code
 * uses `systemClock`; tests pass a fake (`clockOf(FakeTimers.createClock())`, test/support/clock.ts)
 * and move time on without waiting. The few places left on the global clock are listed, each with
 * its reason, in test/unit/clockUse.test.ts.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};

/** The clock's time as a Date. */
export function dateOn(clock: Clock): Date {
  return new Date(clock.now());
}

/** The clock's time as an ISO 8601 timestamp, the form every record of `.mam/` keeps. */
export function isoOn(clock: Clock): string {
  return isoOf(new Date(clock.now()));
}

/**
 * `date.toISOString()`, from its UTC fields: the first `toISOString` in a process costs ~0.6 ms
 * (measured on Node 20), the fields ~0.05, and a cold `mam event` stamps its event and its lock
 * once each (docs/benchmarks.md). Years outside 0–9999 (and invalid dates) go to `toISOString`.
 */
export function isoOf(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
  const ms = date.getUTCMilliseconds();
  return `${String(year).padStart(4, '0')}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}T${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

/** Lets the process exit while `handle` (a timer of systemClock) waits; other clocks' handles pass through. */
export function unrefTimer(handle: unknown): unknown {
  (handle as { unref?: () => void } | undefined)?.unref?.();
  return handle;
}

/** Resolves after `ms` of the clock's time. */
export function sleepOn(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}
