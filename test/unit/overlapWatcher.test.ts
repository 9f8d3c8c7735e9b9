import { strict as assert } from 'node:assert';
import FakeTimers from '@sinonjs/fake-timers';
import { OverlapWatcher } from '../../src/core/overlap/overlapWatcher';
import type { OverlapPair, OverlapReport } from '../../src/core/overlap/overlapReport';
import { clockOf, type FakeClock } from '../support/clock';

function pair(x: string, y: string, kind: OverlapPair['kind']): OverlapPair {
  return { a: { sessions: [x], checkout: `/w/${x}` }, b: { sessions: [y], checkout: `/w/${y}` }, kind, files: [{ path: 'f.ts', a_lines: [[1, 1]], b_lines: [[1, 1]], conflict: kind === 'conflict' }] };
}

function report(...pairs: OverlapPair[]): OverlapReport {
  return { computed_at: new Date().toISOString(), checkouts: [], pairs, skipped: [] };
}

/** A check the test answers by hand: each call waits until the test resolves (or rejects) it. */
class ManualCheck {
  readonly calls: Array<{ resolve: (r: OverlapReport) => void; reject: (e: unknown) => void }> = [];
  readonly check = (): Promise<OverlapReport> => new Promise((resolve, reject) => this.calls.push({ resolve, reject }));
}

describe('OverlapWatcher: bounded recomputation, each conflict announced once (fake clock)', () => {
  let fake: FakeClock;
  let manual: ManualCheck;
  let watcher: OverlapWatcher;
  let changes: OverlapReport[];
  let announced: string[];
  let failures: unknown[];

  beforeEach(() => {
    fake = FakeTimers.createClock();
    manual = new ManualCheck();
    watcher = new OverlapWatcher({ check: manual.check, clock: clockOf(fake), delayMs: 1000 });
    changes = [];
    announced = [];
    failures = [];
    watcher.onDidChange((r) => changes.push(r));
    watcher.onNewConflict((p) => announced.push(`${p.a.sessions[0]}-${p.b.sessions[0]}`));
    watcher.onDidFail((e) => failures.push(e));
  });

  afterEach(() => watcher.dispose());

  /** Answers the look that runs (there is never more than one) and lets the watcher take it in. */
  async function answer(r: OverlapReport | Error): Promise<void> {
    const call = manual.calls[manual.calls.length - 1]!;
    if (r instanceof Error) call.reject(r);
    else call.resolve(r);
    await new Promise((resolve) => setImmediate(resolve));
  }

  it('gathers requests made within the delay into one look, run when the delay ends', () => {
    for (let i = 0; i < 5; i++) {
      watcher.schedule();
      fake.tick(100);
    }
    assert.equal(manual.calls.length, 0, 'nothing before the delay from the first request ends');
    fake.tick(499);
    assert.equal(manual.calls.length, 0);
    fake.tick(1);
    assert.equal(manual.calls.length, 1, 'one look for five requests');
  });

  it('never runs two looks at once, and serves every request made during one by a single look after it', async () => {
    watcher.schedule();
    fake.tick(1000);
    assert.equal(manual.calls.length, 1);
    for (let i = 0; i < 10; i++) {
      watcher.schedule();
      fake.tick(1000);
    }
    assert.equal(manual.calls.length, 1, 'no second look while the first runs');
    await answer(report());
    assert.equal(manual.calls.length, 1, 'the pending look waits its delay');
    fake.tick(1000);
    assert.equal(manual.calls.length, 2, 'one look for the ten requests');
    await answer(report());
    fake.tick(10_000);
    assert.equal(manual.calls.length, 2, 'nothing more was asked');
    await watcher.whenIdle();
  });

  it('announces a conflict once while it lasts, again when it comes back, and reports only changes', async () => {
    const look = async (r: OverlapReport): Promise<void> => {
      watcher.schedule();
      fake.tick(1000);
      await answer(r);
    };
    await look(report(pair('a', 'b', 'conflict')));
    assert.deepEqual(announced, ['a-b']);
    await look(report(pair('a', 'b', 'conflict')));
    assert.deepEqual(announced, ['a-b'], 'a conflict that persists is not announced again');
    assert.equal(changes.length, 1, 'the same report (but its time) is no change');
    await look(report(pair('a', 'b', 'conflict'), pair('a', 'c', 'overlap')));
    assert.deepEqual(announced, ['a-b'], 'an overlap is never announced');
    assert.equal(changes.length, 2);
    await look(report(pair('a', 'c', 'conflict'), pair('a', 'b', 'overlap')));
    assert.deepEqual(announced, ['a-b', 'a-c']);
    await look(report(pair('a', 'b', 'conflict'), pair('a', 'c', 'conflict')));
    assert.deepEqual(announced, ['a-b', 'a-c', 'a-b'], 'one that went away and came back is new');
    assert.equal(watcher.report?.pairs.length, 2);
  });

  it('a failed look is reported and changes nothing: a conflict seen before and after it is not new', async () => {
    watcher.schedule();
    fake.tick(1000);
    await answer(report(pair('a', 'b', 'conflict')));
    watcher.schedule();
    fake.tick(1000);
    await answer(new Error('git is gone'));
    assert.equal(failures.length, 1);
    assert.equal(watcher.report?.pairs.length, 1, 'the last good report stays');
    watcher.schedule();
    fake.tick(1000);
    await answer(report(pair('a', 'b', 'conflict')));
    assert.deepEqual(announced, ['a-b']);
  });

  it('once disposed, runs nothing more and tells nobody', async () => {
    watcher.schedule();
    watcher.dispose();
    fake.tick(5000);
    assert.equal(manual.calls.length, 0);
    watcher.schedule();
    fake.tick(5000);
    assert.equal(manual.calls.length, 0);
    await watcher.whenIdle();
  });
});
