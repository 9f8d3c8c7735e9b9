import { strict as assert } from 'node:assert';
import * as os from 'node:os';
import FakeTimers from '@sinonjs/fake-timers';
import type { JobEngine } from '../../src/core/jobs/jobEngine';
import { cancelLoop, RECHECK_MS } from '../../src/core/loop/loopCancel';
import { LoopStore, type LoopState } from '../../src/core/loop/loopState';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { clockOf } from '../support/clock';
import { tempDir } from '../support/helpers';

function runningLoop(owner: LoopState['owner']): LoopState {
  return {
    id: 'l-20250101T000000Z-abcdef', task: 't', creator: 'dev', planner: null, plan_talk: 0, reviewers: ['rev'], max_loop: 3, max_rebut: 2, review_only: false,
    checkout: '/w', base: 'b', created_at: '2025-01-01T00:00:00.000Z', updated_at: '2025-01-01T00:00:00.000Z', status: 'running', reason: null,
    exit_code: null, owner, plan: null, rebuts_used: 0, rounds: [],
    steps: [{ key: 'implement', kind: 'implement', session: 'dev', job_id: 'j-1', round: null, status: 'planned' }],
  };
}

describe('cancelLoop waits for the runner to let go, on its clock', () => {
  let store: LoopStore;
  let looks: number;
  // Only the jobs the loop has open are asked for; none is open here, so nothing is cancelled.
  const engine = { deps: { controlPlane: { jobs: { get: () => void looks++ } } } } as unknown as JobEngine;
  beforeEach(() => {
    store = new LoopStore(new ControlPlanePaths(tempDir('cancel')));
    looks = 0;
  });

  it('a live owner on this host that never lets go: re-checked every RECHECK_MS until the wait runs out', async () => {
    const fake = FakeTimers.createClock();
    store.save(runningLoop({ pid: process.pid, host: os.hostname() }));
    let ended = false;
    const done = cancelLoop(engine, store, runningLoop(null).id, { waitMs: 1000, clock: clockOf(fake) }).then((r) => ((ended = true), r));
    await fake.tickAsync(10 * RECHECK_MS);
    assert.equal(looks, 11, 'the loop\'s jobs looked at once at the start and once per re-check');
    assert.equal(store.get(runningLoop(null).id)!.status, 'cancelled', 'the cancel is written first');
    await fake.tickAsync(1000 - 10 * RECHECK_MS);
    assert.equal(ended, false, 'still within the wait');
    await fake.tickAsync(RECHECK_MS);
    assert.equal(ended, true, 'given up once the wait ran out');
    const { loop, changed } = await done;
    assert.deepEqual([changed, loop.status, loop.owner, store.get(loop.id)!.owner], [true, 'cancelled', null, null]);
  });

  it('an owner that lets go ends the wait at the next re-check', async () => {
    const fake = FakeTimers.createClock();
    store.save(runningLoop({ pid: process.pid, host: os.hostname() }));
    let ended = false;
    const done = cancelLoop(engine, store, runningLoop(null).id, { waitMs: 10_000, clock: clockOf(fake) }).then(() => (ended = true));
    await fake.tickAsync(3 * RECHECK_MS);
    assert.equal(ended, false);
    store.save({ ...store.get(runningLoop(null).id)!, owner: null }); // the runner saw the cancel and let go
    await fake.tickAsync(RECHECK_MS);
    assert.equal(ended, true);
    await done;
  });

  it('no owner, or one on another host: no wait at all', async () => {
    for (const owner of [null, { pid: process.pid, host: `not-${os.hostname()}` }]) {
      store.save(runningLoop(owner));
      const fake = FakeTimers.createClock();
      const { loop } = await cancelLoop(engine, store, runningLoop(null).id, { clock: clockOf(fake) });
      assert.deepEqual([loop.status, fake.now], ['cancelled', 0], JSON.stringify(owner));
    }
  });

  it('an ended loop is left as it is', async () => {
    store.save({ ...runningLoop(null), status: 'passed', exit_code: 0 });
    const { loop, changed } = await cancelLoop(engine, store, runningLoop(null).id, { clock: clockOf(FakeTimers.createClock()) });
    assert.deepEqual([changed, loop.status], [false, 'passed']);
  });
});
