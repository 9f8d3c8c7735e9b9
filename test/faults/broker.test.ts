/**
 * The message path under faults, on the embedded broker and on Mosquitto: a broker killed and
 * restarted mid-job; duplicated, replayed, out-of-order, forged, unsigned, oversized and
 * malformed messages; a subscriber frozen while 2,000 events pile up; 50 publishers at once.
 * Every event an agent sends is applied exactly once, whatever the broker did with it.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { execa } from 'execa';
import { waitForEvent } from '../../src/core/base/emitter';
import type { MemoryLogger } from '../../src/core/base/log';
import { newJobId } from '../../src/core/base/ids';
import { brokerFiles } from '../../src/core/messaging/brokerRecord';
import { connectClient, uniqueClientId } from '../../src/core/messaging/mqttClient';
import { publishJobEvent } from '../../src/core/messaging/publisher';
import { signatureOf, topics, type EventPayload } from '../../src/core/messaging/protocol';
import type { JobEngine } from '../../src/core/jobs/jobEngine';
import { forEachBroker, type BrokerUnderTest } from '../support/brokers';
import { CLI, jobRecord, until } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';

// Mosquitto as deployed by default would drop part of a burst for a frozen subscriber (its queue
// limit is 1,000, NOTES.md); that is the point of the burst test: the outboxes make up for it.
forEachBroker('broker faults', brokerFaults, { mosquitto: { maxQueuedMessages: 1000, maxInflightMessages: 20 } });

function brokerFaults(brokerName: string, makeBroker: () => Promise<BrokerUnderTest>): void {
  describe(`faults: the message path (${brokerName})`, function () {
    this.timeout(120_000);
    let f: JobFixture;
    let broker: BrokerUnderTest;
    beforeEach(async () => {
      broker = await makeBroker();
      // The subscriber under test is the test's own (or the frozen monitor): the embedded broker's
      // job warden would race it to every event.
      f = jobFixture({ ...broker.env, MAM_NO_WARDEN: '1' });
    });
    afterEach(async () => {
      await f.dispose();
      await broker.dispose();
    });

    /** A signed job, dispatched, in an engine connected as the subscriber. */
    const signedJob = async (engine: JobEngine, token = randomBytes(32).toString('hex')): Promise<string> => {
      const id = newJobId();
      await engine.ledger.register({ ...jobRecord({ id }), signed: true }, token);
      await engine.ledger.transition(id, 'dispatched', null, { fields: { dispatched_at: new Date().toISOString() } });
      return id;
    };
    const loggedSeqs = (id: string) => f.controlPlane.audit.readEntries(id).entries.filter((e) => e.type === 'event').map((e) => e.seq as number);

    it('the broker is killed mid-job and restarted: the job completes, every event in the audit log exactly once', async () => {
      await f.agent('w1', 'work', ['--work-ms', '3000']);
      const running = f.run(['job', 'submit', '--session', 'w1', '--prompt', 'survive the outage', '--heartbeat', '0.4', '--idle-timeout', '20', '--json']);
      await until(() => f.controlPlane.jobs.list().jobs.some((j) => j.state === 'started'), 20_000, 'the job to start');
      const id = f.controlPlane.jobs.list().jobs[0]!.id;
      await broker.kill(f);
      // Heartbeats go on into the outbox while the broker is down; the submitter applies them from disk.
      const seqBefore = f.controlPlane.jobs.require(id).seq;
      await until(() => f.controlPlane.jobs.require(id).seq >= seqBefore + 2, 20_000, 'events to arrive while the broker is down');
      await broker.restart(f);
      const r = await running;
      assert.equal(r.exitCode, 0, r.stderr);
      assert.equal(f.controlPlane.jobs.require(id).state, 'completed');
      const logged = loggedSeqs(id);
      assert.deepEqual(logged, [...new Set(logged)], 'no event twice');
      const completedSeq = f.controlPlane.audit.readEntries(id).entries.find((e) => e.type === 'event' && e.event === 'completed')!.seq as number;
      const sent = fs.readFileSync(path.join(f.workspace, '.mam', 'jobs', id, 'outbox.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.t === 'event').map((l) => l.payload.seq as number);
      assert.deepEqual(logged.filter((s) => s <= completedSeq).sort((a, b) => a - b), sent.filter((s) => s <= completedSeq).sort((a, b) => a - b), 'every event the agent sent up to its completion is in the audit log');
    });

    it('drops duplicated, replayed, out-of-order, forged, unsigned, oversized and malformed messages, logs them, and keeps applying valid ones', async () => {
      const engine = f.engine();
      await engine.connect();
      const token = randomBytes(32).toString('hex');
      const jobId = await signedJob(engine, token);
      const client: MqttClient = await connectClient(engine.endpoint!, { clientId: uniqueClientId('attacker') });
      try {
        const event = (seq: number, name: EventPayload['event'], extra: Partial<EventPayload> = {}, sign = true): EventPayload => {
          const p: EventPayload = { v: 1, job_id: jobId, event: name, seq, ts: new Date().toISOString(), sender: 'test', detail: `${name} ${seq}`, ...extra };
          if (sign) p.sig = signatureOf(p, token);
          return p;
        };
        const send = (payload: unknown, topic = topics.events(engine.workspaceId, jobId)) =>
          client.publishAsync(topic, typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload), { qos: 1 });
        /** Publishes `last` and waits until the subscriber applied it: everything before it was judged (it handles them in order). */
        const sendAndSettle = async (last: EventPayload) => {
          const applied = waitForEvent(engine.ledger.onDidApplyEvent, (e) => e.payload.seq === last.seq && e.job.id === jobId, 10_000, `seq ${last.seq}`);
          await send(last);
          await applied;
        };
        const started = event(1, 'started');
        await sendAndSettle(started);
        await send(started); // a duplicate delivery: quietly dropped
        await send(event(1, 'completed')); // a replayed seq with other content
        await send(event(3, 'progress', {}, false)); // unsigned
        await send({ ...event(3, 'progress'), sig: 'f'.repeat(64) }); // forged
        await send({ ...event(3, 'progress'), sig: signatureOf(event(3, 'progress'), 'not-the-token') }); // signed with another key
        await send(Buffer.alloc(600 * 1024, 0x20)); // oversized (under the brokers' packet limit, over the subscriber's)
        await send('{"v":1, "job_id": '); // malformed JSON
        await send(`{"v":1,"job_id":"${jobId}","__proto__":{"polluted":true}}`);
        await send({ ...event(3, 'progress'), extra: 'field' }); // schema
        await send({ ...event(3, 'progress'), seq: -1 });
        await send(event(3, 'progress'), topics.events(engine.workspaceId, newJobId())); // on another job's topic
        await send('garbage', 'mam/not-our-workspace/jobs/x/events');
        await sendAndSettle(event(2, 'progress'));
        assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');
        assert.deepEqual(f.controlPlane.audit.readEntries(jobId).entries.filter((e) => e.type === 'event').map((e) => [e.seq, e.event]), [[1, 'started'], [2, 'progress']]);
        const warnings = (engine.deps.logger as MemoryLogger).messages('warn').join('\n');
        for (const reason of ['stale_seq', 'missing_signature', 'bad_signature', 'oversize', 'malformed_json', 'forbidden_key', 'schema', 'wrong_topic']) {
          assert.match(warnings, new RegExp(`: ${reason}: `), `logged ${reason}`);
        }
        assert.deepEqual(f.controlPlane.audit.readEntries(jobId).entries.filter((e) => e.type === 'note'), [], 'the bad messages changed nothing');

        // Out of order: seq 5 arrives before 4 (the gap 3..4 is logged); 4 then fills its place in
        // the gap, once (a second copy is a duplicate); 6 applies; 3 never came and stays missing.
        await sendAndSettle(event(5, 'progress'));
        await sendAndSettle(event(4, 'progress'));
        await send(event(4, 'progress'));
        await sendAndSettle(event(6, 'completed'));
        assert.deepEqual(loggedSeqs(jobId), [1, 2, 5, 4, 6]);
        assert.match((engine.deps.logger as MemoryLogger).messages('warn').join('\n'), /seq_gap 3\.\.4/);
        const job = f.controlPlane.jobs.require(jobId);
        assert.deepEqual([job.state, job.seq, job.missing], ['completed', 6, [3]]);
      } finally {
        await client.endAsync(true);
      }
    });

    it('a subscriber frozen while 2,000 events pile up applies every one exactly once when it thaws, whatever the broker kept', async () => {
      const engine = f.engine(); // only to register the job; the subscriber under test is a monitor process
      const id = await signedJob(engine);
      await engine.connect();
      const endpoint = engine.endpoint!;
      engine.dispose();
      const monitor = execa(process.execPath, [CLI, 'monitor', '--interval', '1'], { cwd: f.workspace, env: f.env, reject: false });
      try {
        await until(() => fs.existsSync(path.join(f.workspace, '.mam', 'delegate_job_logs', id)) && f.controlPlane.jobs.get(id)?.state === 'dispatched', 10_000, 'the monitor');
        // Connected: a first event reaches it and is applied.
        await publishJobEvent({ workspace: f.workspace, jobId: id, event: 'started', sender: 'test', endpoint });
        await until(() => f.controlPlane.jobs.get(id)?.state === 'started', 20_000, 'the monitor to apply started');
        process.kill(monitor.pid!, 'SIGSTOP');
        try {
          for (let i = 0; i < 2000; i++) {
            const r = await publishJobEvent({ workspace: f.workspace, jobId: id, event: 'progress', detail: `step ${i}`, sender: 'test', endpoint });
            assert.ok(r.delivered, `event ${i} was taken by the broker: ${r.problem ?? ''}`);
          }
        } finally {
          process.kill(monitor.pid!, 'SIGCONT');
        }
        await until(() => f.controlPlane.jobs.get(id)?.seq === 2001 && (f.controlPlane.jobs.get(id)?.missing ?? []).length === 0, 60_000, 'all 2,001 events applied');
        assert.deepEqual(loggedSeqs(id), Array.from({ length: 2001 }, (_, i) => i + 1), 'each once, and none missing');
      } finally {
        monitor.kill('SIGTERM');
        await monitor;
      }
    });

    it('50 mam event processes at once, for one job and for 50 jobs: every event applied once, each seq once', async () => {
      const engine = f.engine();
      await engine.connect();
      const one = await signedJob(engine);
      const many: string[] = [];
      for (let i = 0; i < 50; i++) many.push(await signedJob(engine));
      const event = (id: string, detail: string) => execa(process.execPath, [CLI, 'event', 'progress', '--job', id, '--detail', detail], { cwd: f.workspace, env: f.env, reject: false });
      const results = await Promise.all([...Array.from({ length: 50 }, (_, i) => event(one, `publisher ${i}`)), ...many.map((id) => event(id, `hello ${id}`))]);
      for (const r of results) assert.equal(r.exitCode, 0, String(r.stderr));
      for (const r of results) assert.equal(String(r.stderr), '', 'delivered at once: no retry warnings');
      await until(() => f.controlPlane.jobs.get(one)?.seq === 50 && many.every((id) => f.controlPlane.jobs.get(id)?.seq === 1), 30_000, 'every event applied');
      // One job, 50 publishers: seqs 1..50, each allocated once (the outbox lock), applied once.
      const logged = f.controlPlane.audit.readEntries(one).entries.filter((e) => e.type === 'event');
      assert.deepEqual(logged.map((e) => e.seq).sort((a, b) => (a as number) - (b as number)), Array.from({ length: 50 }, (_, i) => i + 1));
      assert.deepEqual(logged.map((e) => e.detail).sort(), Array.from({ length: 50 }, (_, i) => `publisher ${i}`).sort());
      assert.deepEqual(f.controlPlane.jobs.get(one)!.missing ?? [], []);
      for (const id of many) {
        const events = f.controlPlane.audit.readEntries(id).entries.filter((e) => e.type === 'event');
        assert.deepEqual(events.map((e) => [e.event, e.seq, e.detail]), [['progress', 1, `hello ${id}`]]);
      }
      // aedes logs a client that takes over another's ID; no publisher should have been kicked.
      const log = fs.existsSync(brokerFiles(f.controlPlane.paths).log) ? fs.readFileSync(brokerFiles(f.controlPlane.paths).log, 'utf8') : '';
      assert.doesNotMatch(log, /duplicate|takeover|kicked/i);
    });
  });
}
