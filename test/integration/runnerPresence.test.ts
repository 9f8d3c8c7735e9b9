/**
 * A remote runner's presence (src/core/remote/presence.ts): a runner that vanishes from the broker
 * fails its open jobs at once (`runner_lost`) instead of leaving them to their timers; a runner
 * stopped on purpose fails nothing; forged and stale presence changes nothing; what the runner
 * relayed before it went is applied first; and its sessions come back in their conversations.
 *
 * Two workspaces on one host share a broker, as two hosts would (the multi-host version, with
 * network namespaces, is test/faults/manyHosts.test.ts). Every job's timers are set far beyond the
 * test's own bound (300 s), so a job that ends within it was not ended by a timer.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { brokerFiles } from '../../src/core/messaging/brokerRecord';
import { connectClient, uniqueClientId } from '../../src/core/messaging/mqttClient';
import { signatureOf, topics, type EventPayload } from '../../src/core/messaging/protocol';
import { publishOnce } from '../../src/core/messaging/quickPublish';
import { dispatchTopics, readDispatch, type DispatchPayload } from '../../src/core/remote/dispatchMessage';
import { RunnerPresence } from '../../src/core/remote/presence';
import { readAgentLog, until } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';
import { mosquittoMissing } from '../support/mosquitto';
import { itNeeds } from '../support/needs';
import { shareBroker, startRunner, type RunnerProcess, type SharedBroker, type SharedBrokerKind } from '../support/remote';

const SECRET = randomBytes(24).toString('hex');
/** Timers no test waits out: a job that ends is ended by something else. */
const FAR = ['--idle-timeout', '300', '--start-timeout', '300', '--timeout', '600'];

describe('remote runners lost and back: presence on the shared broker', function () {
  this.timeout(120_000);
  let a: JobFixture; // the submitter
  let b: JobFixture; // the runner's host
  let broker: SharedBroker | undefined;
  let runners: RunnerProcess[];
  let clients: MqttClient[];
  beforeEach(() => {
    a = jobFixture({ MAM_DISPATCH_SECRET: SECRET });
    b = jobFixture({ MAM_DISPATCH_SECRET: SECRET });
    broker = undefined;
    runners = [];
    clients = [];
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') for (const r of runners) console.error(`--- runner (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
    for (const r of runners) await r.stop();
    for (const c of clients) await c.endAsync(true).catch(() => undefined);
    await b.dispose();
    await a.dispose();
    await broker?.stop();
  });

  const runner = (...args: string[]): RunnerProcess => {
    const r = startRunner(b, ['--name', 'R', ...args], {});
    runners.push(r);
    return r;
  };
  const submit = (prompt: string, ...extra: string[]) => a.run(['job', 'submit', '--session', 'remote:R', '--prompt', prompt, '--json', ...FAR, ...extra]);
  const onlyJob = () => a.controlPlane.jobs.list().jobs[0];
  type LogEntry = { type: string; event?: string; seq?: number; to?: string; reason?: string; note?: string };
  const logsOf = (f: JobFixture, id: string) => f.controlPlane.audit.readEntries(id).entries as unknown as LogEntry[];
  const wardenLog = () => {
    try {
      return fs.readFileSync(brokerFiles(a.controlPlane.paths).log, 'utf8');
    } catch {
      return '';
    }
  };

  const killedRunner = (kind: SharedBrokerKind) => async () => {
    broker = await shareBroker(kind, a, b);
    await b.agent('S', 'heartbeats');
    const conversation = (await b.controlPlane.sessions.get('S'))!.conversation_id;
    assert.ok(conversation, 'claude (the fake agent) has its conversation pre-assigned');
    const r = runner('--session', 'S');
    await r.waitFor(/listening on/);

    const pending = submit('Keep at it', '--heartbeat', '1');
    await until(() => {
      const job = onlyJob();
      return job?.state === 'started' && job.seq >= 3;
    }, 30_000, 'the submitter to apply started and two heartbeats relayed by the runner');
    process.kill(r.pid, 'SIGKILL');

    const sub = await pending;
    assert.equal(sub.exitCode, 1, `${sub.stdout}\n${sub.stderr}`);
    const job = JSON.parse(sub.stdout);
    assert.deepEqual([job.state, job.reason], ['failed', 'runner_lost']);
    assert.match(job.why, /remote runner 'R' went offline: its connection to the broker ended without a goodbye/);
    const status = await a.run(['job', 'status', job.id]);
    assert.match(status.stdout, /runner_lost/);
    assert.match(status.stdout, /remote runner 'R' went offline/);
    const log = logsOf(a, job.id);
    const events = log.filter((e) => e.type === 'event');
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'each relayed event applied once, in order, before the judgement');
    assert.equal(log.filter((e) => e.type === 'transition').at(-1)!.reason, 'runner_lost');

    // The host goes down with its runner: its tmux server too. It comes back: its sessions resume in
    // their own conversations, the runner starts again, and the session takes new jobs.
    await b.tmux.killServer();
    const resumed = await b.run(['session', 'resume', '--all', '--json']);
    assert.equal(resumed.exitCode, 0, resumed.stderr);
    const row = (await b.controlPlane.sessions.get('S'))!;
    assert.deepEqual([row.status, row.conversation_id], ['running', conversation], 'S runs again, in the conversation it had');
    const starts = readAgentLog(b.log).filter((e) => e.event === 'start');
    assert.equal(starts.length, 2);
    assert.equal(starts[1]!.resumed, true, 'the agent was started with its conversation (claude -r)');
    const mirror = b.controlPlane.jobs.get(job.id)!;
    assert.ok(['failed', 'cancelled'].includes(mirror.state), `the mirror job ended on the runner's host: ${mirror.state} (${mirror.reason})`);
    assert.equal(row.current_job, null, 'the session is free');

    const again = runner('--session', 'S');
    await again.waitFor(/listening on/);
    const next = await submit('[fake-agent mode: instant] The next one');
    assert.equal(next.exitCode, 0, `${next.stderr}\nrunner:\n${again.stdout}\n${again.stderr}`);
    assert.equal(JSON.parse(next.stdout).state, 'completed');
    const lines = readAgentLog(b.log).filter((e) => e.event === 'line' && /^MAM job /.test(e.text ?? ''));
    assert.equal(lines.length, 2, 'each job typed once, the second into the resumed agent');
    // What the runner relays of the lost job once it is back is late there: the outcome stays.
    assert.deepEqual([a.controlPlane.jobs.get(job.id)!.state, a.controlPlane.jobs.get(job.id)!.reason], ['failed', 'runner_lost']);
  };

  it('a runner killed mid-job (SIGKILL) fails its job at once (runner_lost, not a timer) → 1; its host comes back: the session resumes in its conversation and takes the next job → 0', killedRunner('embedded'));
  itNeeds(mosquittoMissing(), 'the same over a shared Mosquitto', killedRunner('mosquitto'));

  it('a runner stopped on purpose (SIGTERM) fails nothing: started again, it relays the rest and the job completes → 0', async () => {
    broker = await shareBroker('embedded', a, b);
    await b.agent('S', 'work', ['--work-ms', '3000']);
    const r = runner('--session', 'S');
    await r.waitFor(/listening on/);
    const pending = submit('Take your time', '--heartbeat', '1');
    await until(() => onlyJob()?.state === 'started', 30_000, 'the submitter to apply started');
    assert.equal(await r.stop(), 0, r.stderr);
    assert.match(r.stdout, /is still started: its timers are left to 'mam monitor'; a runner started again relays its events/);
    const again = runner('--session', 'S');
    await again.waitFor(/listening on/);
    const sub = await pending;
    assert.equal(sub.exitCode, 0, `${sub.stdout}\n${sub.stderr}`);
    assert.equal(JSON.parse(sub.stdout).state, 'completed');
    assert.doesNotMatch(wardenLog(), /runner_lost/);
  });

  it('a runner stopped while the broker is away still exits (it cannot say goodbye; its will speaks for it)', async () => {
    broker = await shareBroker('embedded', a, b);
    const r = runner();
    await r.waitFor(/listening on/);
    assert.equal((await a.run(['broker', 'stop'])).exitCode, 0);
    await r.waitFor(/MQTT mam-runner-R-\S+: .*following jobs from disk until it is back/);
    assert.equal(await r.stop(30_000), 0, `${r.stdout}\n${r.stderr}`);
  });

  /**
   * The test plays runner R itself, over MQTT, to choose exactly what R says and when it goes; the
   * judge is the submitter's job warden (in its broker daemon), whose log says what it refused.
   */
  describe('the judge, against a runner the test plays', () => {
    let run: RunnerPresence;
    let client: MqttClient;
    const taken: DispatchPayload[] = [];

    /** Connects as run `run` of R (its will: offline), says online, and takes every dispatch to R. */
    async function connectAsRunner(): Promise<void> {
      run = new RunnerPresence('R', SECRET);
      client = await connectClient(broker!.endpoint, { clientId: uniqueClientId('test-runner'), will: { topic: run.topic, payload: run.message('offline'), qos: 1, retain: true } });
      clients.push(client);
      client.on('message', (topic, bytes) => bytes.length > 0 && taken.push(readDispatch(bytes, topic, 'R', SECRET)));
      await client.subscribeAsync(dispatchTopics.all('R'), { qos: 1 });
      await client.publishAsync(run.topic, run.message('online'), { qos: 1, retain: true });
    }
    /** What R relays for a job: its agent's event, signed with the job's token (PUBACK awaited). */
    const relay = async (d: DispatchPayload, event: EventPayload['event'], seq: number) => {
      const p: EventPayload = { v: 1, job_id: d.job_id, event, seq, ts: new Date().toISOString(), sender: 'test-runner', detail: `${event} from R` };
      p.sig = signatureOf(p, d.token);
      await client.publishAsync(topics.events(d.workspace_id, d.job_id), JSON.stringify(p), { qos: 1 });
    };
    const noWait = async (prompt: string) => {
      const r = await submit(prompt, '--no-wait');
      assert.equal(r.exitCode, 0, r.stderr);
      const id = JSON.parse(r.stdout).id as string;
      await until(() => taken.some((d) => d.job_id === id), 10_000, 'R to receive the dispatch');
      return taken.find((d) => d.job_id === id)!;
    };
    const state = (id: string) => a.controlPlane.jobs.get(id)!;

    beforeEach(() => (taken.length = 0));

    it('what R relayed before it went is applied before the judgement: its last word `completed` stands; forged and stale offlines change nothing; then R goes → its open job fails runner_lost', async () => {
      broker = await shareBroker('embedded', a, b);
      await connectAsRunner();
      const first = await noWait('one');
      const second = await noWait('two');
      await relay(first, 'started', 1);
      await relay(second, 'started', 1);
      await until(() => state(first.job_id).state === 'started' && state(second.job_id).state === 'started', 10_000, 'both jobs to start');

      // Forged offlines of R: unsigned, signed with another secret, and a stale one (an earlier run,
      // validly signed: a replay). The last two are refused in the warden's log; the stale one, sent
      // before them by the same client, was heard before them.
      const stale = new RunnerPresence('R', SECRET);
      Object.defineProperty(stale, 'since', { value: new Date(Date.parse(run.since) - 60_000).toISOString() });
      const unsigned = { ...(JSON.parse(run.message('offline')) as Record<string, unknown>) };
      delete unsigned.sig;
      await publishOnce(broker.endpoint, uniqueClientId('test-forger'), [
        { topic: run.topic, payload: stale.message('offline') },
        { topic: run.topic, payload: JSON.stringify(unsigned) },
        { topic: run.topic, payload: new RunnerPresence('R', 'f'.repeat(32)).message('offline') },
      ]);
      await until(() => /refused a presence message .*missing_signature/.test(wardenLog()) && /refused a presence message .*bad_signature/.test(wardenLog()), 10_000, 'the warden to refuse the forged presences');
      assert.deepEqual([state(first.job_id).state, state(second.job_id).state], ['started', 'started'], 'no forged or stale offline failed anything');

      // R's last words: the first job completed; then its connection drops without a goodbye.
      await relay(first, 'completed', 2);
      await client.endAsync(true);
      await until(() => state(second.job_id).state === 'failed', 15_000, 'the warden to fail the job R left open');
      assert.deepEqual([state(first.job_id).state, state(first.job_id).reason], ['completed', null], "R's completed, relayed before it went, was applied first");
      assert.deepEqual([state(second.job_id).reason], ['runner_lost']);
      // Judged by whichever engine heard R go first (the warden, or the test's own): the audit log says it once.
      const judged = a.controlPlane.audit.readEntries(second.job_id).entries.filter((e) => e.type === 'transition' && e.to === 'failed');
      assert.deepEqual(judged.map((e) => (e as { reason?: string | null }).reason), ['runner_lost']);
      assert.doesNotMatch(wardenLog(), new RegExp(`job ${first.job_id}: failed`));
    });

    it('a job dispatched while R is offline waits for R (its timers), and R coming back online fails nothing', async () => {
      broker = await shareBroker('embedded', a, b);
      await connectAsRunner();
      await client.endAsync(true); // R goes: its will (offline) is R's retained word now
      await until(() => /runner R is offline/.test(wardenLog()), 10_000, 'the warden to hear that R is offline');
      const waiting = await noWaitWhileAway('waits for R');
      await connectAsRunner(); // R is back, takes the waiting dispatch
      await until(() => taken.some((d) => d.job_id === waiting), 10_000, 'R, back, to take the dispatch that waited');
      const d = taken.find((x) => x.job_id === waiting)!;
      await relay(d, 'started', 1);
      await relay(d, 'completed', 2);
      await until(() => state(waiting).state === 'completed', 10_000, 'the job to complete');
      assert.equal(state(waiting).reason, null);
    });

    /** A job submitted while R is away: nothing takes its dispatch yet. */
    async function noWaitWhileAway(prompt: string): Promise<string> {
      const r = await submit(prompt, '--no-wait');
      assert.equal(r.exitCode, 0, r.stderr);
      return JSON.parse(r.stdout).id as string;
    }
  });
});
