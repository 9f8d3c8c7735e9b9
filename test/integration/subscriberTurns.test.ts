import { strict as assert } from 'node:assert';
import * as os from 'node:os';
import { waitForEvent } from '../../src/core/base/emitter';
import { newJobId } from '../../src/core/base/ids';
import { publishJobEvent } from '../../src/core/messaging/publisher';
import { acquire } from '../../src/core/store/lock';
import { newJobRecord } from '../../src/core/store/newJobRecord';
import type { JobEngine } from '../../src/core/jobs/jobEngine';
import { jobFixture, type JobFixture } from '../support/jobs';

/**
 * The subscriber takes different jobs' events side by side and one job's in order (jobBus.ts
 * `inTurn`): a job whose event waits — here for its lock, which the test holds as a slow writer
 * would — holds up its own later events, not another job's.
 */
describe('the subscriber: one job in order, different jobs side by side', function () {
  this.timeout(60_000);
  let f: JobFixture;
  let engine: JobEngine;
  beforeEach(async () => {
    f = jobFixture();
    engine = f.engine();
    await engine.connect();
  });
  afterEach(() => f.dispose());

  async function openJob(): Promise<string> {
    const id = newJobId();
    await engine.ledger.register(newJobRecord({ id, session: 'human:ann', type: 'direct', target: { kind: 'human', name: 'ann' }, owner: { pid: process.pid, host: os.hostname(), token: 'me' } }), 'ab'.repeat(16));
    await engine.ledger.transition(id, 'dispatched', null);
    return id;
  }

  const send = (id: string, event: 'started' | 'progress', detail: string) =>
    publishJobEvent({ workspace: f.workspace, jobId: id, event, detail, sender: 'test', endpoint: engine.endpoint! });

  it("a job held up does not hold up another job's events; its own wait and come in order", async () => {
    const slow = await openJob();
    const quick = await openJob();
    const release = await acquire(f.controlPlane.paths.lock(`job-${slow}`));
    let released = false;
    try {
      const applied: string[] = [];
      const sub = engine.ledger.onDidApplyEvent(({ job, payload }) => applied.push(`${job.id === slow ? 'slow' : 'quick'}:${payload.detail}`));
      await send(slow, 'started', 'a');
      await send(slow, 'progress', 'b');
      const quickApplied = waitForEvent(engine.ledger.onDidApplyEvent, (e) => e.job.id === quick, 20_000, 'the quick job\'s event');
      await send(quick, 'started', 'c');
      await quickApplied;
      assert.deepEqual(applied, ['quick:c'], 'the quick job went ahead while the slow one waited for its lock');
      const slowDone = waitForEvent(engine.ledger.onDidApplyEvent, (e) => e.job.id === slow && e.payload.detail === 'b', 20_000, 'the slow job\'s second event');
      release();
      released = true;
      await slowDone;
      assert.deepEqual(applied, ['quick:c', 'slow:a', 'slow:b'], "the slow job's events in the order they were sent");
      // Read as this process's views read it: the record may still be landing on disk (JobStore.replaceBehind).
      const job = engine.deps.controlPlane.jobs.require(slow);
      assert.deepEqual([job.seq, job.missing ?? []], [2, []]);
      sub.dispose();
    } finally {
      if (!released) release();
    }
  });
});
