import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HeartbeatRegistry } from '../../src/core/messaging/heartbeatRegistry';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { heartbeatServices, readAgentLog, snapshotTree, until } from '../support/helpers';
import { forEachBroker, type BrokerUnderTest } from '../support/brokers';
import { jobFixture, jobIdOf, type JobFixture } from '../support/jobs';

forEachBroker('jobs', jobSuite);

function jobSuite(brokerName: string, makeBroker: () => Promise<BrokerUnderTest>): void {
describe(`jobs: mam job submit and its exit codes (${brokerName})`, function () {
  this.timeout(90_000);
  let f: JobFixture;
  let broker: BrokerUnderTest;
  beforeEach(async () => {
    broker = await makeBroker();
    f = jobFixture(broker.env);
  });
  afterEach(async () => {
    await f.dispose();
    await broker.dispose();
  });

  // A timer does not depend on the broker: test/unit/supervisor.test.ts proves every deadline on a
  // fake clock. End to end (real tmux, CLI and heartbeat process), each is shown once, on the embedded broker.
  const onceEndToEnd = (title: string, fn: Mocha.AsyncFunc): void => void (brokerName === 'embedded broker' && it(title, fn));
  const submit = (session: string, ...extra: string[]) => f.run(['job', 'submit', '--session', session, '--prompt', 'Fix the typo in README', '--json', ...extra]);
  const jobLines = () => readAgentLog(f.log).filter((e) => e.event === 'line' && /^MAM job /.test(e.text ?? ''));

  it('completed → 0, with every event in the audit log once, in order', async () => {
    await f.agent('w1', 'work');
    const r = await submit('w1', '--heartbeat', '1');
    assert.equal(r.exitCode, 0, r.stderr);
    const job = JSON.parse(r.stdout);
    assert.equal(job.state, 'completed');
    assert.match(job.detail, /^done: Fix the typo in README/);
    const logs = JSON.parse((await f.run(['job', 'logs', job.id, '--json'])).stdout) as Array<{ type: string; event?: string; seq?: number; to?: string }>;
    const events = logs.filter((e) => e.type === 'event');
    assert.deepEqual(events.slice(0, 2).map((e) => e.event), ['started', 'progress']);
    assert.equal(events.at(-1)!.event, 'completed');
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'each seq once, in order');
    assert.deepEqual(logs.filter((e) => e.type === 'transition').map((e) => e.to), ['registered', 'dispatched', 'started', 'completed']);
    assert.equal(jobLines().length, 1, 'the prompt was typed once');
    const session = (await f.controlPlane.sessions.get('w1'))!;
    assert.equal(session.current_job, null, 'the session is free again');
    const brief = fs.readFileSync(job.brief, 'utf8');
    assert.match(brief, /Fix the typo in README/);
    assert.match(brief, new RegExp(`event started --job ${job.id} --workspace ".*" --heartbeat 1`));
    assert.match(jobLines()[0]!.text!, new RegExp(`^MAM job ${job.id}: read the brief at ${job.brief.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} and follow it exactly\\.$`));
  });

  it('error → 1', async () => {
    await f.agent('w1', 'error');
    const r = await submit('w1');
    assert.equal(r.exitCode, 1, r.stderr);
    assert.deepEqual([JSON.parse(r.stdout).state, JSON.parse(r.stdout).reason], ['failed', 'agent_error']);
  });

  onceEndToEnd('no started within T → 1 agent_blocked, and the prompt is never typed twice', async () => {
    await f.agent('w1', 'silent');
    const r = await submit('w1', '--start-timeout', '1');
    assert.equal(r.exitCode, 1, r.stderr);
    assert.deepEqual([JSON.parse(r.stdout).state, JSON.parse(r.stdout).reason], ['failed', 'agent_blocked']);
    assert.equal(jobLines().length, 1);
  });

  it('--no-wait and nobody watching (no monitor, no VS Code): the timers still judge, and the audit log keeps the pane\'s last screen', async () => {
    await f.agent('w1', 'silent');
    const r = await submit('w1', '--no-wait', '--start-timeout', '1');
    assert.equal(r.exitCode, 0, r.stderr);
    const id = JSON.parse(r.stdout).id as string;
    // Only the submitter has run, and it has exited: the workspace's broker daemon (or, on a broker
    // of the user's own, the watcher the submit started) enforces T.
    await until(() => f.controlPlane.jobs.get(id)?.state === 'failed', 30_000, 'the job to fail by its start timer');
    const job = f.controlPlane.jobs.get(id)!;
    assert.equal(job.reason, 'agent_blocked');
    const ended = f.controlPlane.audit.readEntries(id).entries.find((e) => e.type === 'transition' && e.to === 'failed')!;
    assert.match(String(ended.screen), /fake-agent ready/, 'the pane\'s last screen is in the audit log');
    const logs = await f.run(['job', 'logs', id]);
    assert.match(logs.stdout, /the pane's last screen:\n\s+│ /);
  });

  onceEndToEnd('started then silent → 2 deadline_timeout', async () => {
    await f.agent('w1', 'started-silent');
    const r = await submit('w1', '--idle-timeout', '1');
    assert.equal(r.exitCode, 2, r.stderr);
    assert.deepEqual([JSON.parse(r.stdout).state, JSON.parse(r.stdout).reason], ['timeout', 'deadline_timeout']);
  });

  // The agent asks for heartbeats (started --heartbeat N), or runs a plain started: the job's own N then.
  for (const [mode, how] of [['heartbeats', 'started --heartbeat N'], ['plain-started', 'a plain started, at the job\'s N']] as const) {
    onceEndToEnd(`heartbeats past the budget (${how}) → 2 wall_clock_timeout; the heartbeat service drops the job, then exits`, async () => {
      await f.agent('w1', mode);
      const r = await submit('w1', '--heartbeat', '0.3', '--idle-timeout', '1.5', '--timeout', '2.5');
      assert.equal(r.exitCode, 2, r.stderr);
      const job = JSON.parse(r.stdout);
      assert.deepEqual([job.state, job.reason], ['timeout', 'wall_clock_timeout']);
      const logs = JSON.parse((await f.run(['job', 'logs', job.id, '--json'])).stdout) as Array<{ event?: string }>;
      assert.ok(logs.filter((e) => e.event === 'heartbeat').length >= 2, 'heartbeats kept it alive past the idle timeout');
      // The host's heartbeat service drops the ended job, and with nothing left to serve, exits.
      const registry = new HeartbeatRegistry(new ControlPlanePaths(f.workspace));
      await until(() => registry.read(job.id) === undefined, 10_000, 'the job to leave the heartbeat service');
      await until(() => heartbeatServices(f.workspace).length === 0 && !fs.existsSync(registry.pidFile), 10_000, 'the heartbeat service to exit');
    });
  }

  it('the agent dies mid-job → failed agent_exited, well before K×N', async () => {
    await f.agent('w1', 'die');
    const r = await submit('w1', '--heartbeat', '30', '--idle-timeout', '120');
    assert.equal(r.exitCode, 1, r.stderr);
    assert.deepEqual([JSON.parse(r.stdout).state, JSON.parse(r.stdout).reason], ['failed', 'agent_exited']);
  });

  it('busy session → 5 session_busy, no prompt delivered', async () => {
    await f.agent('w1', 'heartbeats');
    const first = await submit('w1', '--no-wait', '--heartbeat', '0.5');
    assert.equal(first.exitCode, 0, first.stderr);
    const firstId = JSON.parse(first.stdout).id;
    const r = await f.run(['job', 'submit', '--session', 'w1', '--prompt', 'second task', '--json'], { MAM_DISPATCH_WAIT_S: '1' });
    assert.equal(r.exitCode, 5, r.stderr);
    assert.deepEqual([JSON.parse(r.stdout).state, JSON.parse(r.stdout).reason], ['cancelled', 'session_busy']);
    assert.equal(jobLines().length, 1, 'only the first job reached the agent');
    const cancelled = await f.run(['job', 'cancel', firstId]);
    assert.equal(cancelled.exitCode, 0, cancelled.stderr);
    assert.equal(cancelled.stdout, `Cancelled ${firstId}: session w1 takes new jobs again; the agent may still finish its current turn.`);
    const again = await f.run(['job', 'cancel', firstId]);
    assert.deepEqual([again.exitCode, again.stdout], [0, `${firstId} had already ended: cancelled (cancelled_by_user).`]);
  });

  it('unknown target → 5 target_not_found', async () => {
    const r = await submit('tmux:nobody');
    assert.equal(r.exitCode, 5, r.stderr);
    assert.deepEqual([JSON.parse(r.stdout).state, JSON.parse(r.stdout).reason], ['cancelled', 'target_not_found']);
  });

  it('broker unusable and nothing on disk → 3, and nothing is written', async () => {
    await f.agent('w1', 'work');
    const before = snapshotTree(path.join(f.workspace, '.mam', 'jobs'));
    const r = await f.run(['job', 'submit', '--session', 'w1', '--prompt', 'x'], { MQTT_BROKER: '127.0.0.1', MQTT_PORT: '1' });
    assert.equal(r.exitCode, 3, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.deepEqual(snapshotTree(path.join(f.workspace, '.mam', 'jobs')), before);
    assert.equal(jobLines().length, 0);
  });

  onceEndToEnd('a completion after a timeout is kept in the audit log as a late completion', async () => {
    await f.agent('w1', 'late', ['--work-ms', '2500']);
    const engine = f.engine();
    await engine.connect(); // a subscriber that outlives the submitter, as the extension would
    const r = await submit('w1', '--idle-timeout', '1');
    assert.equal(r.exitCode, 2, r.stderr);
    const id = JSON.parse(r.stdout).id;
    await until(() => (f.controlPlane.jobs.get(id)?.late_events ?? []).length > 0, 15_000, 'the late completion');
    const job = f.controlPlane.jobs.get(id)!;
    assert.equal(job.state, 'timeout');
    assert.deepEqual(job.late_events!.map((e) => e.event), ['completed']);
    const status = await f.run(['job', 'status', id]);
    assert.match(status.stdout, /^late\s+completed \(seq \d+\)/m);
  });

  it('permission_required keeps the job started and is logged', async () => {
    await f.agent('w1', 'permission');
    const r = await submit('w1');
    assert.equal(r.exitCode, 0, r.stderr);
    const logs = JSON.parse((await f.run(['job', 'logs', jobIdOf(r.stdout), '--json'])).stdout) as Array<{ event?: string; detail?: string }>;
    assert.ok(logs.some((e) => e.event === 'permission_required' && e.detail === 'may I delete build/?'));
  });

  describe('bad flags → 64, nothing written', () => {
    const cases: Array<[string, string[], RegExp]> = [
      ['no prompt', ['job', 'submit', '--session', 'w1'], /give exactly one of --prompt TEXT or --brief FILE/],
      ['prompt and brief', ['job', 'submit', '--session', 'w1', '--prompt', 'a', '--brief', 'b.md'], /give exactly one of/],
      ['missing brief file', ['job', 'submit', '--session', 'w1', '--brief', 'nope.md'], /--brief nope\.md does not exist/],
      ['non-numeric timeout', ['job', 'submit', '--session', 'w1', '--prompt', 'a', '--timeout', 'soon'], /--timeout must be a non-negative number of seconds/],
      ['negative timeout', ['job', 'submit', '--session', 'w1', '--prompt', 'a', '--idle-timeout', '-3'], /--idle-timeout/],
      ['zero start timeout', ['job', 'submit', '--session', 'w1', '--prompt', 'a', '--start-timeout', '0'], /--start-timeout must be more than 0 seconds/],
      ['bad type', ['job', 'submit', '--session', 'w1', '--prompt', 'a', '--type', 'vote'], /--type must be one of direct, loop, discuss/],
      ['bad session name', ['job', 'submit', '--session', 'tmux:a/b', '--prompt', 'a'], /--session tmux:a\/b: session name 'a\/b' contains '\/'/],
      ['unknown parent', ['job', 'submit', '--session', 'w1', '--prompt', 'a', '--parent-job', 'j-nope'], /unknown parent job 'j-nope'/],
      ['bad event name', ['event', 'finished', '--job', 'j-x'], /unknown event 'finished'/],
      ['event for an unknown job', ['event', 'started', '--job', 'j-20260101T000000Z-00000000'], /unknown job 'j-20260101T000000Z-00000000'/],
      ['heartbeat on the wrong event', ['event', 'progress', '--job', 'j-x', '--heartbeat', '5'], /--heartbeat goes with started/],
      ['cancel an unknown job', ['job', 'cancel', 'j-20260101T000000Z-00000000'], /unknown job/],
    ];
    for (const [name, args, message] of cases) {
      it(name, async () => {
        const before = snapshotTree(f.workspace);
        const r = await f.run(args);
        assert.equal(r.exitCode, 64, `exit ${r.exitCode}: ${r.stderr}`);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr, message);
        assert.deepEqual(snapshotTree(f.workspace), before);
      });
    }
  });
});
}
