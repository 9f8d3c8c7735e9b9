import { strict as assert } from 'node:assert';
import * as os from 'node:os';
import FakeTimers from '@sinonjs/fake-timers';
import { dateOn } from '../../src/core/base/clock';
import { waitForEvent } from '../../src/core/base/emitter';
import { newJobId } from '../../src/core/base/ids';
import { MemoryLogger } from '../../src/core/base/log';
import type { JobEngine } from '../../src/core/jobs/jobEngine';
import { JobLedger } from '../../src/core/jobs/jobLedger';
import { buildCore } from '../../src/core/core';
import { parseTarget } from '../../src/core/jobs/targetAddress';
import { signatureOf, type EventPayload } from '../../src/core/messaging/protocol';
import { ControlPlane } from '../../src/core/store/controlPlane';
import type { JobTimers } from '../../src/core/store/jobSchema';
import { newJobRecord } from '../../src/core/store/newJobRecord';
import { clockOf, type FakeClock } from '../support/clock';
import { tempWorkspace } from '../support/helpers';

/** Far from the real time: a stamp taken from the system clock instead cannot pass for one of these. */
const T0 = Date.UTC(2030, 0, 2, 3, 4, 5);
const iso = (ms: number) => new Date(ms).toISOString();
const TIMERS: JobTimers = { start_timeout_s: 10, heartbeat_s: 5, idle_timeout_s: 20, timeout_s: 600 };

/**
 * A JobEngine given a fake clock keeps all its time on it: what its ledger writes is stamped with
 * the clock's time, and its timers fire when the clock is moved on, with no real waiting. No broker
 * here (the outbox poll, which needs one, is test/integration/engineClock.test.ts).
 */
describe('the job engine keeps time on the clock it is given', () => {
  let fake: FakeClock;
  let cp: ControlPlane;
  let engine: JobEngine;
  const disposables: Array<{ dispose(): void }> = [];

  beforeEach(() => {
    fake = FakeTimers.createClock(T0);
    const workspace = tempWorkspace();
    const logger = new MemoryLogger();
    const env = { ...process.env };
    const core = buildCore(workspace, { env, logger, cliPath: '/nonexistent/cli.js', clock: clockOf(fake) });
    cp = core.controlPlane;
    engine = core.jobs;
    disposables.push(core);
  });
  afterEach(() => {
    for (const d of disposables.splice(0)) d.dispose();
  });

  const token = 'ab'.repeat(16);
  const owner = { pid: process.pid, host: os.hostname(), token: 'me' };
  let seq = 0;
  const signed = (jobId: string, event: EventPayload['event']): EventPayload => {
    const p: EventPayload = { v: 1, job_id: jobId, event, seq: ++seq, ts: iso(fake.now), sender: 'ann', detail: null };
    return { ...p, sig: signatureOf(p, token) };
  };

  it("stamps the record, the audit log and status.json with the clock's time: register, assign, events, patch", async () => {
    const address = parseTarget('human:ann');
    const id = newJobId(dateOn(engine.clock));
    let job = await engine.ledger.register(newJobRecord({ id, session: 'human:ann', type: 'direct', target: { kind: 'human', name: 'ann' }, timers: TIMERS, owner }, dateOn(engine.clock)), token);
    assert.match(job.id, /^j-20300102T030405Z-/, 'the job ID carries the time it was made');
    assert.deepEqual([job.created_at, job.updated_at], [iso(T0), iso(T0)]);

    fake.tick(2_000);
    const delivery = await engine.deps.targets.of('human').deliver(engine, { job, address, task: 't', token, ownerToken: owner.token });
    job = delivery.job;
    assert.deepEqual([job.state, job.dispatched_at, job.delivered_at, job.updated_at], ['dispatched', iso(T0 + 2_000), iso(T0 + 2_000), iso(T0 + 2_000)]);

    fake.tick(3_000);
    const outcome = await engine.ledger.applyEvent(signed(id, 'started'));
    assert.equal(outcome.status, 'applied');
    job = cp.jobs.require(id);
    assert.deepEqual([job.state, job.started_at, job.last_event_at, job.updated_at], ['started', iso(T0 + 5_000), iso(T0 + 5_000), iso(T0 + 5_000)]);

    fake.tick(1_000);
    job = await engine.ledger.patch(id, { detail: 'noted' });
    assert.equal(job.updated_at, iso(T0 + 6_000));

    const entries = cp.audit.readEntries(id).entries.map((e) => [e.type, e.type === 'transition' ? e.to : e.type === 'event' ? e.event : '', e.at]);
    assert.deepEqual(entries, [
      ['transition', 'registered', iso(T0)],
      ['transition', 'dispatched', iso(T0 + 2_000)],
      ['event', 'started', iso(T0 + 5_000)],
      ['transition', 'started', iso(T0 + 5_000)],
    ]);
    assert.deepEqual([cp.audit.readStatus(id)?.state, cp.audit.readStatus(id)?.updated_at], ['started', iso(T0 + 5_000)], 'status.json says when the state last changed (a patch changes no state)');
  });

  it('rescans and judges on the clock: a job another process assigned is found at the rescan and judged at its deadline, with no real wait', async () => {
    engine.supervise('orphans', { rescanEveryMs: 25_000 }); // scans now, before the job exists
    // Another process (its own ledger; same time) assigns a job to a person; nothing tells this engine.
    const other = new JobLedger(cp, new MemoryLogger(), clockOf(fake));
    disposables.push(other);
    const id = newJobId(dateOn(engine.clock));
    const timers = { ...TIMERS, start_timeout_s: 60 };
    await other.register(newJobRecord({ id, session: 'human:ann', type: 'direct', target: { kind: 'human', name: 'ann' }, timers }, dateOn(engine.clock)), token);
    await other.transition(id, 'dispatched', null, { fields: { dispatched_at: iso(T0), delivered_at: iso(T0), delivery: 'assigned' } });

    // The rescan at 25 s finds it and arms its T (60 s from delivery): only timers on the clock can judge it then.
    await fake.tickAsync(60_000 - 1);
    assert.equal(cp.jobs.require(id).state, 'dispatched', 'not judged a millisecond early');
    const ended = waitForEvent(engine.ledger.onDidChangeJob, (c) => c.job.id === id && c.job.state === 'failed', 5_000, 'the deadline the rescan armed');
    await fake.tickAsync(1);
    const { job } = await ended;
    assert.deepEqual([job.reason, job.finished_at, job.updated_at], ['agent_blocked', iso(T0 + 60_000), iso(T0 + 60_000)]);
  });
});
