import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { waitForEvent } from '../../src/core/base/emitter';
import { MemoryLogger } from '../../src/core/base/log';
import { newJobId } from '../../src/core/base/ids';
import { resolveConfig } from '../../src/core/config/settings';
import { JobEngine } from '../../src/core/jobs/jobEngine';
import { connectClient, uniqueClientId } from '../../src/core/messaging/mqttClient';
import { stopEmbeddedBroker } from '../../src/core/messaging/embeddedBroker';
import { signatureOf, topics, type EventPayload } from '../../src/core/messaging/protocol';
import { realMuxFactory } from '../../src/core/mux';
import { SessionService } from '../../src/core/sessions/sessionService';
import { CLI, controlPlane, jobRecord, tempWorkspace } from '../support/helpers';

describe('the subscriber against bad messages', function () {
  this.timeout(60_000);
  let ws: string;
  let engine: JobEngine;
  let client: MqttClient;
  let logger: MemoryLogger;
  let jobId: string;
  const token = randomBytes(32).toString('hex');

  beforeEach(async () => {
    ws = tempWorkspace();
    logger = new MemoryLogger();
    const cp = controlPlane(ws, logger);
    const config = resolveConfig({ workspace: ws, env: process.env });
    const sessions = new SessionService({ controlPlane: cp, config, logger, env: process.env, muxFactory: realMuxFactory(process.env) });
    // This engine's subscriber is what is tested: the broker's own job warden would race it to every event.
    engine = new JobEngine({ controlPlane: cp, config, sessions, muxFactory: realMuxFactory(process.env), logger, env: { ...process.env, MAM_NO_WARDEN: '1' }, cliPath: CLI });
    await engine.connect();
    jobId = newJobId();
    await engine.ledger.register({ ...jobRecord({ id: jobId, state: 'registered' }), signed: true }, token);
    await engine.ledger.transition(jobId, 'dispatched', null, { fields: { dispatched_at: new Date().toISOString() } });
    client = await connectClient(engine.endpoint!, { clientId: uniqueClientId('attacker') });
  });
  afterEach(async () => {
    await client.endAsync(true);
    engine.dispose();
    await stopEmbeddedBroker(controlPlane(ws).paths);
  });

  const event = (seq: number, name: EventPayload['event'], extra: Partial<EventPayload> = {}, sign = true): EventPayload => {
    const p: EventPayload = { v: 1, job_id: jobId, event: name, seq, ts: new Date().toISOString(), sender: 'test', detail: `${name} ${seq}`, ...extra };
    if (sign) p.sig = signatureOf(p, token);
    return p;
  };
  const send = (payload: unknown, topic = topics.events(engine.workspaceId, jobId)) =>
    client.publishAsync(topic, typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload), { qos: 1 });
  /** Publishes `last` and waits until the subscriber applied it: everything before it was handled. */
  const sendAndSettle = async (last: EventPayload) => {
    const applied = waitForEvent(engine.ledger.onDidApplyEvent, (e) => e.payload.seq === last.seq && e.job.id === jobId, 10_000, `seq ${last.seq}`);
    await send(last);
    await applied;
  };
  const events = () => controlPlane(ws).audit.readEntries(jobId).entries.filter((e) => e.type === 'event');

  it('drops duplicated, replayed, out-of-order, forged, unsigned, oversized and malformed messages, logs them, and keeps applying valid ones', async () => {
    const started = event(1, 'started');
    await sendAndSettle(started);

    await send(started); // a duplicate delivery: quietly dropped
    await send(event(1, 'completed')); // a replayed seq with other content
    await send(event(3, 'progress', {}, false)); // unsigned
    await send({ ...event(3, 'progress'), sig: 'f'.repeat(64) }); // forged
    await send({ ...event(3, 'progress'), sig: signatureOf(event(3, 'progress'), 'not-the-token') }); // signed with another key
    await send(Buffer.alloc(600 * 1024, 0x20)); // oversized
    await send('{"v":1, "job_id": '); // malformed JSON
    await send(`{"v":1,"job_id":"${jobId}","__proto__":{"polluted":true}}`);
    await send({ ...event(3, 'progress'), extra: 'field' }); // schema
    await send({ ...event(3, 'progress'), seq: -1 });
    await send(event(3, 'progress'), topics.events(engine.workspaceId, newJobId())); // on another job's topic
    await send('garbage', 'mam/not-our-workspace/jobs/x/events');
    // The subscriber handles messages in order: once this one is applied, all of the above were judged.
    const progress = event(2, 'progress');
    await sendAndSettle(progress);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');

    const logged = events();
    assert.deepEqual(logged.map((e) => [e.seq, e.event]), [[1, 'started'], [2, 'progress']]);
    const warnings = logger.messages('warn').join('\n');
    for (const reason of ['stale_seq', 'missing_signature', 'bad_signature', 'oversize', 'malformed_json', 'forbidden_key', 'schema', 'wrong_topic']) {
      assert.match(warnings, new RegExp(`: ${reason}: `), `logged ${reason}`);
    }
    assert.deepEqual(controlPlane(ws).audit.readEntries(jobId).entries.filter((e) => e.type === 'note'), [], 'the bad messages changed nothing');

    // Out of order: seq 5 arrives before 4; 4 is then refused (the gap is logged), 6 applies.
    await sendAndSettle(event(5, 'progress'));
    await send(event(4, 'progress'));
    await sendAndSettle(event(6, 'completed'));
    assert.deepEqual(events().map((e) => e.seq), [1, 2, 5, 6]);
    assert.match(logger.messages('warn').join('\n'), /seq_gap 3\.\.4/);
    const gapNote = controlPlane(ws).audit.readEntries(jobId).entries.find((e) => e.type === 'note' && e.note === 'seq_gap');
    assert.ok(gapNote);
    const job = controlPlane(ws).jobs.require(jobId);
    assert.deepEqual([job.state, job.seq, job.missing], ['completed', 6, [3, 4]]);
  });
});
