import FakeTimers from '@sinonjs/fake-timers';
import type { Clock } from '../../src/core/base/clock';

export type FakeClock = ReturnType<typeof FakeTimers.createClock>;
export type InstalledFakeClock = ReturnType<typeof FakeTimers.install>;

/** A fake-timers clock as a `Clock` (fake-timers keeps `now` as a number; a Clock reads it through a function). */
export function clockOf(fake: FakeClock): Clock {
  return {
    now: () => fake.now,
    setTimeout: (fn, ms) => fake.setTimeout(fn, ms),
    clearTimeout: (h) => fake.clearTimeout(h as number),
    setInterval: (fn, ms) => fake.setInterval(fn, ms),
    clearInterval: (h) => fake.clearInterval(h as number),
  };
}

/**
 * A fake clock that also stands in for the global `Date` (and nothing else: real timers, I/O and
 * locks keep running), so records stamped by code without a clock — the ledger's `last_event_at` —
 * follow the same time. Uninstall it after the test.
 */
export function fakeDateClock(): InstalledFakeClock {
  return FakeTimers.withGlobal(globalThis).install({ toFake: ['Date'], now: Date.now() });
}
