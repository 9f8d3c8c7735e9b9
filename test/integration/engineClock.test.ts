import { strict as assert } from 'node:assert';
import * as os from 'node:os';
import FakeTimers from '@sinonjs/fake-timers';
import { dateOn } from '../../src/core/base/clock';
import { waitForEvent } from '../../src/core/base/emitter';
import { newJobId } from '../../src/core/base/ids';
import { MemoryLogger } from '../../src/core/base/log';
import type { JobEngine } from '../../src/core/jobs/jobEngine';
import { buildCore } from '../../src/core/core';
import { newJobRecord } from '../../src/core/store/newJobRecord';
import { clockOf, type FakeClock } from '../support/clock';
import { CLI } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';

const T0 = Date.UTC(2030, 0, 2, 3, 4, 5);
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The outbox poll runs on the engine's clock: an event the real `mam event` could not get to the
 * broker waits in the job's outbox until the engine's clock moves on by its poll, then is applied
 * — stamped with that clock's time — with the real broker up and nothing waited for in real time.
 */
describe("the job engine's outbox poll on a fake clock", function () {
  this.timeout(60_000);
  let f: JobFixture;
  let fake: FakeClock;
  let engine: JobEngine;
  beforeEach(() => {
    f = jobFixture();
    fake = FakeTimers.createClock(T0);
    const logger = new MemoryLogger();
    engine = buildCore(f.workspace, { env: f.env, logger, cliPath: CLI, clock: clockOf(fake) }).jobs;
  });
  afterEach(async () => {
    engine.dispose();
    assert.equal(fake.countTimers(), 0, 'disposed, the engine leaves nothing armed on its clock');
    await f.dispose();
  });

  it('an event left in the outbox is applied when the clock moves one poll on, not before', async () => {
    await engine.connect();
    assert.equal(fake.countTimers(), 1, "the outbox poll is armed on the engine's clock (and nothing else yet)");
    // This process waits on the job (as a submitter does): its engine, not the broker's warden, applies the job's events.
    const owner = { pid: process.pid, host: os.hostname(), token: 'me' };
    const id = newJobId(dateOn(engine.clock));
    await engine.ledger.register(newJobRecord({ id, session: 'human:ann', type: 'direct', target: { kind: 'human', name: 'ann' }, owner }, dateOn(engine.clock)), 'ab'.repeat(16));
    await engine.ledger.transition(id, 'dispatched', null, { fields: { dispatched_at: iso(fake.now), delivered_at: iso(fake.now), delivery: 'assigned' } });

    // started arrives through the broker: the job's outbox is now looked at on every poll.
    const started = waitForEvent(engine.ledger.onDidApplyEvent, (e) => e.job.id === id && e.payload.seq === 1, 20_000, 'started through the broker');
    const first = await f.run(['event', 'started', '--job', id]);
    assert.equal(first.exitCode, 0, first.stderr);
    await started;

    // progress cannot reach the broker: it waits in the outbox.
    const second = await f.run(['event', 'progress', '--job', id, '--detail', 'half way'], { MQTT_BROKER: '127.0.0.1', MQTT_PORT: '1' });
    assert.equal(second.exitCode, 0, second.stderr);
    assert.match(second.stderr, /is safe in the job's outbox/);
    assert.equal(f.controlPlane.jobs.require(id).seq, 1, 'nothing applies it while the clock stands still');

    const polled = waitForEvent(engine.ledger.onDidApplyEvent, (e) => e.job.id === id && e.payload.seq === 2, 10_000, 'the poll to apply progress');
    await fake.tickAsync(1_000);
    await polled;
    // Read as this process's views read it: the record may still be landing on disk (JobStore.replaceBehind).
    const job = engine.deps.controlPlane.jobs.require(id);
    assert.deepEqual([job.seq, job.detail, job.last_event_at], [2, 'half way', iso(T0 + 1_000)]);
    const events = f.controlPlane.audit.readEntries(id).entries.filter((e) => e.type === 'event');
    assert.deepEqual(events.map((e) => [e.seq, e.at, e.from ?? 'broker']), [[1, iso(T0), 'broker'], [2, iso(T0 + 1_000), 'outbox']]);
  });
});
