import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { newJobId } from '../../src/core/base/ids';
import { connectClient, uniqueClientId } from '../../src/core/messaging/mqttClient';
import { publishOnce } from '../../src/core/messaging/quickPublish';
import { cancelTopics, dispatchTopics, signedCancel, signedDispatch, type DispatchPayload } from '../../src/core/remote/dispatchMessage';
import { readAgentLog, snapshotTree, until } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';
import { mosquittoMissing } from '../support/mosquitto';
import { itNeeds } from '../support/needs';
import { retainedTopics, shareBroker, startRunner, type RunnerProcess, type SharedBroker, type SharedBrokerKind } from '../support/remote';

const SECRET = randomBytes(24).toString('hex');
const WRONG = randomBytes(24).toString('hex');

describe('remote runners: mam remote run and job submit --session remote:R (two workspaces, one broker)', function () {
  this.timeout(120_000);
  let a: JobFixture; // the submitter
  let b: JobFixture; // the runner's host
  let broker: SharedBroker | undefined;
  let runners: RunnerProcess[];
  let clients: MqttClient[];
  beforeEach(() => {
    a = jobFixture();
    b = jobFixture();
    broker = undefined;
    runners = [];
    clients = [];
  });
  afterEach(async () => {
    for (const r of runners) await r.stop();
    for (const c of clients) await c.endAsync(true);
    await b.dispose();
    await a.dispose();
    await broker?.stop();
  });

  const runner = (args: string[], env: Record<string, string> = { MAM_DISPATCH_SECRET: SECRET }): RunnerProcess => {
    const r = startRunner(b, ['--name', 'R', ...args], env);
    runners.push(r);
    return r;
  };
  const submit = (secret: string, ...extra: string[]) =>
    a.run(['job', 'submit', '--session', 'remote:R', '--prompt', 'Fix the typo in README', '--json', ...extra], { MAM_DISPATCH_SECRET: secret });
  /** A retained dispatch or cancel (the runner's presence, `mam/remote/R/presence`, stays: it is the runner's word on itself). */
  const isJobMessage = (topic: string) => topic.startsWith('mam/remote/') && !topic.endsWith('/presence');
  const jobLines = (f: JobFixture) => readAgentLog(f.log).filter((e) => e.event === 'line' && /^MAM job /.test(e.text ?? ''));
  type LogEntry = { type: string; event?: string; seq?: number; to?: string; sig_ok?: boolean; detail?: string };
  const logsOf = async (f: JobFixture, id: string) => JSON.parse((await f.run(['job', 'logs', id, '--json'])).stdout) as LogEntry[];
  /** Every dispatch the broker carries for R, as raw bytes, from a client of the test's own. */
  const recordDispatches = async (): Promise<Array<{ topic: string; payload: Buffer }>> => {
    const seen: Array<{ topic: string; payload: Buffer }> = [];
    const client = await connectClient(broker!.endpoint, { clientId: uniqueClientId('test-recorder') });
    clients.push(client);
    client.on('message', (topic, payload) => payload.length > 0 && seen.push({ topic, payload: Buffer.from(payload) }));
    await client.subscribeAsync(dispatchTopics.all('R'), { qos: 1 });
    return seen;
  };
  const forged = (fields: Partial<DispatchPayload>, secret?: string): { topic: string; payload: string } => {
    const base = {
      job_id: newJobId(), workspace_id: 'feedfacefeedface', runner: 'R', task: 'rm -rf / (forged)', role: null, type: 'direct' as const,
      timers: { start_timeout_s: 60, heartbeat_s: 30, idle_timeout_s: 120, timeout_s: 600 }, token: randomBytes(32).toString('hex'), ...fields,
    };
    const d = signedDispatch(base, secret ?? WRONG);
    if (secret === undefined) delete d.sig;
    return { topic: dispatchTopics.job('R', d.job_id), payload: JSON.stringify(d) };
  };

  const happyPath = (kind: SharedBrokerKind) => async function (this: Mocha.Context) {
    broker = await shareBroker(kind, a, b);
    await b.agent('S', 'work');
    const r = runner(['--session', 'S', '--once']);
    await r.waitFor(/runner R listening on mam\/remote\/R\/dispatch\/\+/);

    const sub = await submit(SECRET, '--heartbeat', '1');
    assert.equal(sub.exitCode, 0, `${sub.stderr}\nrunner:\n${r.stdout}\n${r.stderr}`);
    const job = JSON.parse(sub.stdout);
    assert.deepEqual([job.state, job.target, job.delivery], ['completed', { kind: 'remote', name: 'R' }, 'published']);
    assert.match(job.detail, /^done: Fix the typo in README/);

    // The submitter's audit log: the relayed events, each signature-checked, each seq once, in order.
    const logs = await logsOf(a, job.id);
    const events = logs.filter((e) => e.type === 'event');
    assert.deepEqual(events.slice(0, 2).map((e) => e.event), ['started', 'progress']);
    assert.equal(events.at(-1)!.event, 'completed');
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
    assert.ok(events.every((e) => e.sig_ok), 'every relayed event carried a good signature');
    assert.deepEqual(logs.filter((e) => e.type === 'transition').map((e) => e.to), ['registered', 'dispatched', 'started', 'completed']);

    // The runner's mirror job: same ID, completed, delivered once into session S, which is free again.
    assert.equal(await r.exited, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`accepted job ${job.id} from workspace [0-9a-f]{16} for session S`));
    const mirror = b.controlPlane.jobs.get(job.id)!;
    assert.deepEqual([mirror.state, mirror.target?.name, (mirror.remote as { runner: string }).runner], ['completed', 'S', 'R']);
    assert.equal(jobLines(b).length, 1, 'the prompt was typed once');
    assert.equal(jobLines(a).length, 0);
    assert.match(jobLines(b)[0]!.text!, new RegExp(`^MAM job ${job.id}: read the brief at ${path.join(b.workspace, '.mam', 'jobs', job.id, 'brief.md').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `));
    assert.equal((await b.controlPlane.sessions.get('S'))!.current_job, null);
    if (kind === 'embedded') await until(() => !retainedTopics(a.workspace).some(isJobMessage), 5_000, 'the retained dispatch to be cleared');
  };

  it('a job sent to remote:R runs in the runner\'s session and completes → 0 (embedded broker of the submitter)', happyPath('embedded'));
  itNeeds(mosquittoMissing(), 'the same over a shared Mosquitto', happyPath('mosquitto'));

  it('forged dispatches (unsigned, wrong secret) are refused and never typed; the submitter ends agent_blocked → 1', async () => {
    broker = await shareBroker('embedded', a, b);
    await b.agent('S', 'work');
    const r = runner(['--session', 'S']);
    await r.waitFor(/listening on/);

    const unsigned = forged({});
    const wrong = forged({}, WRONG);
    await publishOnce(broker.endpoint, uniqueClientId('test-forger'), [{ ...unsigned, retain: true }, { ...wrong, retain: true }]);
    await r.waitFor(/refused a dispatch .*: missing_signature: unsigned dispatch/);
    await r.waitFor(/refused a dispatch .*: bad_signature: bad signature/);

    const sub = await submit(WRONG, '--start-timeout', '1.5');
    assert.equal(sub.exitCode, 1, sub.stderr);
    const job = JSON.parse(sub.stdout);
    assert.deepEqual([job.state, job.reason], ['failed', 'agent_blocked']);
    await r.waitFor(new RegExp(`refused a dispatch .*\\(job ${job.id}\\): bad_signature`));

    assert.equal(jobLines(b).length, 0, 'nothing was typed into the agent');
    assert.deepEqual(b.controlPlane.jobs.list().jobs, [], 'no mirror job was made');
    assert.doesNotMatch(r.stdout, /accepted job/);
    await until(() => !retainedTopics(a.workspace).includes(dispatchTopics.job('R', job.id)), 5_000, 'the submitter to clear its dispatch');
    assert.equal(await r.stop(), 0, r.stderr);
  });

  it('a dispatch published again after its job completed is refused as a replay, retained or live', async () => {
    broker = await shareBroker('embedded', a, b);
    await b.agent('S', 'instant');
    const recorded = await recordDispatches();
    const first = runner(['--session', 'S', '--once']);
    await first.waitFor(/listening on/);
    const sub = await submit(SECRET);
    assert.equal(sub.exitCode, 0, `${sub.stderr}\nrunner:\n${first.stdout}\n${first.stderr}`);
    const id = JSON.parse(sub.stdout).id as string;
    assert.equal(await first.exited, 0);
    await until(() => recorded.length > 0, 5_000, 'the recorder to see the dispatch');
    const original = recorded[0]!;

    // Retained, waiting for a runner that starts later; then live, to a runner that listens.
    await publishOnce(broker.endpoint, uniqueClientId('test-replayer'), [{ topic: original.topic, payload: original.payload, retain: true }]);
    const second = runner(['--session', 'S']);
    await second.waitFor(new RegExp(`refused a dispatch .*\\(job ${id}\\): replay`));
    await second.waitFor(/listening on/);
    await publishOnce(broker.endpoint, uniqueClientId('test-replayer'), [{ topic: original.topic, payload: original.payload }]);
    await until(() => (second.stderr.match(/: replay: /g) ?? []).length >= 2, 10_000, 'the live replay to be refused');

    assert.equal(jobLines(b).length, 1, 'the job ran once');
    assert.equal(b.controlPlane.jobs.get(id)!.state, 'completed');
    await until(() => !retainedTopics(a.workspace).some(isJobMessage), 5_000, 'the replayed dispatch to be cleared');
    assert.equal(await second.stop(), 0);
  });

  it('the agent dies on the runner → the runner reports it and the submitter fails at once → 1', async () => {
    broker = await shareBroker('embedded', a, b);
    await b.agent('S', 'die');
    const r = runner(['--session', 'S', '--once']);
    await r.waitFor(/listening on/);
    const sub = await submit(SECRET, '--heartbeat', '30', '--idle-timeout', '120');
    assert.equal(sub.exitCode, 1, sub.stderr);
    const job = JSON.parse(sub.stdout);
    assert.deepEqual([job.state, job.reason], ['failed', 'agent_error']);
    assert.match(job.detail, /remote runner 'R': the job ended failed \(agent_exited\)/);
    assert.equal(await r.exited, 1);
    assert.deepEqual([b.controlPlane.jobs.get(job.id)!.state, b.controlPlane.jobs.get(job.id)!.reason], ['failed', 'agent_exited']);
  });

  it('a session the runner does not have → the submitter fails with target_not_found in the detail → 1', async () => {
    broker = await shareBroker('embedded', a, b);
    const r = runner(['--session', 'nobody', '--once']);
    await r.waitFor(/listening on/);
    const sub = await submit(SECRET);
    assert.equal(sub.exitCode, 1, sub.stderr);
    assert.match(JSON.parse(sub.stdout).detail, /ended cancelled \(target_not_found\)/);
    assert.equal(await r.exited, 5);
  });

  it('a runner stopped while its session is busy cancels the waiting job, and the submitter hears at once → 1', async () => {
    broker = await shareBroker('embedded', a, b);
    await b.agent('S', 'heartbeats');
    const local = await b.run(['job', 'submit', '--session', 'S', '--prompt', 'hold the session', '--no-wait', '--heartbeat', '0.5', '--json']);
    assert.equal(local.exitCode, 0, local.stderr);
    const r = runner(['--session', 'S']);
    await r.waitFor(/listening on/);
    const pending = submit(SECRET);
    await r.waitFor(/accepted job/);
    assert.equal(await r.stop(), 0, r.stderr);
    const sub = await pending;
    assert.equal(sub.exitCode, 1, sub.stderr);
    assert.match(JSON.parse(sub.stdout).detail, /ended cancelled \(not_delivered\)/);
    assert.equal(jobLines(b).length, 1, 'only the local job reached the agent');
    assert.equal((await b.run(['job', 'cancel', JSON.parse(local.stdout).id])).exitCode, 0);
  });

  it('remote:R/S picks the session on the runner\'s host when the runner has no --session of its own → 0', async () => {
    broker = await shareBroker('embedded', a, b);
    await b.agent('S', 'instant');
    const r = runner(['--once']);
    await r.waitFor(/listening on/);
    const sub = await a.run(['job', 'submit', '--session', 'remote:R/S', '--prompt', 'Fix the typo in README', '--json'], { MAM_DISPATCH_SECRET: SECRET });
    assert.equal(sub.exitCode, 0, `${sub.stderr}\nrunner:\n${r.stdout}\n${r.stderr}`);
    const job = JSON.parse(sub.stdout);
    assert.deepEqual([job.state, job.session, job.target], ['completed', 'remote:R/S', { kind: 'remote', name: 'R' }]);
    assert.equal(b.controlPlane.jobs.get(job.id)!.target?.name, 'S');
    assert.equal(await r.exited, 0);
    for (const bad of ['remote:R/', 'remote:R/S/T', 'remote:/S', 'remote:R/bad name']) {
      const refused = await a.run(['job', 'submit', '--session', bad, '--prompt', 'x'], { MAM_DISPATCH_SECRET: SECRET });
      assert.equal(refused.exitCode, 64, `${bad}: ${refused.stderr}`);
      assert.match(refused.stderr, /^mam: --session remote:[^\n]*$/);
    }
  });

  it('a job its submitter cancels is cancelled on the runner too, which frees the session; forged cancels change nothing', async () => {
    broker = await shareBroker('embedded', a, b);
    await b.agent('S', 'heartbeats,instant');
    const r = runner(['--session', 'S']);
    await r.waitFor(/listening on/);
    const sub = await submit(SECRET, '--no-wait', '--heartbeat', '1');
    assert.equal(sub.exitCode, 0, sub.stderr);
    const id = JSON.parse(sub.stdout).id as string;
    const mirror = () => b.controlPlane.jobs.get(id);
    await until(() => mirror()?.state === 'started', 20_000, 'the mirror job to start');

    const topic = cancelTopics.job('R', id);
    const unsigned = signedCancel({ job_id: id, workspace_id: 'feedfacefeedface', runner: 'R' }, WRONG);
    delete unsigned.sig;
    const wrongSecret = signedCancel({ job_id: id, workspace_id: 'feedfacefeedface', runner: 'R' }, WRONG);
    const otherWorkspace = signedCancel({ job_id: id, workspace_id: 'feedfacefeedface', runner: 'R' }, SECRET);
    await publishOnce(broker.endpoint, uniqueClientId('test-forger'), [unsigned, wrongSecret, otherWorkspace].map((c) => ({ topic, payload: JSON.stringify(c) })));
    await r.waitFor(new RegExp(`refused a cancel .*\\(job ${id}\\): missing_signature`));
    await r.waitFor(new RegExp(`refused a cancel .*\\(job ${id}\\): bad_signature`));
    await r.waitFor(new RegExp(`refused a cancel .*\\(job ${id}\\): wrong_topic: workspace feedfacefeedface did not send job`));
    assert.equal(mirror()!.state, 'started', 'no forged cancel touched the mirror');

    const cancelled = await a.run(['job', 'cancel', id, '--json'], { MAM_DISPATCH_SECRET: SECRET });
    assert.equal(cancelled.exitCode, 0, cancelled.stderr);
    assert.deepEqual([JSON.parse(cancelled.stdout).state, JSON.parse(cancelled.stdout).reason], ['cancelled', 'cancelled_by_user']);
    await until(() => mirror()!.state === 'cancelled', 10_000, 'the runner to cancel the mirror');
    assert.equal(mirror()!.reason, 'cancelled_by_submitter');
    await until(() => !retainedTopics(a.workspace).some(isJobMessage), 5_000, 'the runner to clear the cancel');
    const submitterLog = await logsOf(a, id);
    assert.ok(!submitterLog.some((e) => e.type === 'event' && e.event === 'error'), 'the runner sends no error for an end its submitter asked for');

    // The session is free again: the next job runs at once instead of waiting for the first to end.
    const next = await submit(SECRET);
    assert.equal(next.exitCode, 0, `${next.stderr}\nrunner:\n${r.stdout}\n${r.stderr}`);
    assert.equal(JSON.parse(next.stdout).state, 'completed');
    assert.equal(await r.stop(), 0, r.stderr);
  });

  describe('without a usable MAM_DISPATCH_SECRET → 64, nothing written', () => {
    const cases: Array<[string, 'submit' | 'runner', Record<string, string>, RegExp]> = [
      ['submit, no secret', 'submit', {}, /remote jobs need MAM_DISPATCH_SECRET/],
      ['submit, a short secret', 'submit', { MAM_DISPATCH_SECRET: 'hunter2' }, /MAM_DISPATCH_SECRET is 7 characters long; use at least 16/],
      ['runner, no secret', 'runner', {}, /remote jobs need MAM_DISPATCH_SECRET/],
    ];
    for (const [name, who, env, message] of cases) {
      it(name, async () => {
        const f = who === 'submit' ? a : b;
        const before = snapshotTree(f.workspace);
        const r =
          who === 'submit'
            ? await a.run(['job', 'submit', '--session', 'remote:R', '--prompt', 'x'], env)
            : await b.run(['remote', 'run', '--name', 'R', '--session', 'S'], env);
        assert.equal(r.exitCode, 64, r.stderr);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr, message);
        assert.deepEqual(snapshotTree(f.workspace), before);
      });
    }
  });
});
