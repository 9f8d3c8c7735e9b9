import FakeTimers from '@sinonjs/fake-timers';
import type { Clock } from '../../src/core/base/clock';

export type FakeClock = ReturnType<typeof FakeTimers.createClock>;

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
