import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { newJobId } from '../../src/core/base/ids';
import { jobRecord } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';

describe('mam event and onboarding', function () {
  this.timeout(90_000);
  let f: JobFixture;
  beforeEach(() => {
    f = jobFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  it('with the broker unreachable, mam event keeps the event in the outbox, warns, exits 0, and the monitor applies it', async () => {
    const engine = f.engine();
    await engine.connect();
    const id = newJobId();
    await engine.ledger.register({ ...jobRecord({ id }), signed: true }, 'tok');
    await engine.ledger.transition(id, 'dispatched', null, { fields: { dispatched_at: new Date().toISOString() } });
    engine.dispose();
    const r = await f.run(['event', 'completed', '--job', id, '--detail', 'done offline'], { MQTT_BROKER: '127.0.0.1', MQTT_PORT: '1' });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stderr, /^mam: warning: .*event completed \(seq 1\) is safe in the job's outbox and will be delivered later$/);
    assert.equal(f.controlPlane.jobs.require(id).state, 'dispatched');
    const monitor = await f.run(['monitor', '--once']);
    assert.equal(monitor.exitCode, 0, monitor.stderr);
    assert.equal(f.controlPlane.jobs.require(id).state, 'completed');
    assert.equal(f.controlPlane.jobs.require(id).detail, 'done offline');
  });

  it('session create --onboard: 0 when the agent follows the protocol, 44 when it fails, 45 when it does not finish in time', async () => {
    // T only for the one that must run out of it: the others start at once, however loaded the machine.
    const create = (name: string, mode: string, startTimeoutS = '180') => {
      const command = [process.execPath, path.resolve(__dirname, '../fixtures/fake-agent.js'), '--as', 'claude', '--log', f.log, '--mode', mode].map((w) => JSON.stringify(w)).join(' ');
      return f.run(['session', 'create', '--agent', 'claude', '--name', name, '--command', command, '--onboard'], { MAM_START_TIMEOUT_S: startTimeoutS });
    };
    const ok = await create('good', 'instant');
    assert.equal(ok.exitCode, 0, ok.stderr);
    assert.match(ok.stdout, /Onboarded good \(job j-/);
    const failed = await create('bad', 'error');
    assert.equal(failed.exitCode, 44, failed.stderr);
    assert.match(failed.stdout, /Onboarding of bad failed: .* failed \(agent_error\)\. The session is kept\./);
    const slow = await create('slow', 'silent', '1');
    assert.equal(slow.exitCode, 45, slow.stderr);
    assert.match(slow.stdout, /Onboarding of slow did not finish in time/);
    const rows = await f.controlPlane.sessions.list();
    assert.deepEqual(rows.map((r) => [r.name, r.status]), [['bad', 'running'], ['good', 'running'], ['slow', 'running']], 'every session is kept');
    assert.ok(rows.every((r) => r.current_job === null), 'and free for the next job');
  });
});

describe('job types: loop and discuss', function () {
  this.timeout(90_000);
  let f: JobFixture;
  beforeEach(() => {
    f = jobFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  it('loop: worker then reviewer until PASS; the children are jobs of their own', async () => {
    await f.agent('worker', 'work');
    await f.agent('reviewer', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    const r = await f.run(['job', 'submit', '--session', 'worker', '--type', 'loop', '--reviewer', 'reviewer', '--prompt', 'Add input validation', '--json']);
    assert.equal(r.exitCode, 0, r.stderr);
    const parent = JSON.parse(r.stdout);
    assert.deepEqual([parent.type, parent.state, parent.detail], ['loop', 'completed', 'PASS after 2 iteration(s)']);
    const children = f.controlPlane.jobs.list().jobs.filter((j) => j.parent_job === parent.id).reverse();
    assert.deepEqual(children.map((j) => [j.session, j.role, j.state]), [
      ['worker', 'worker', 'completed'], ['reviewer', 'reviewer', 'completed'], ['worker', 'worker', 'completed'], ['reviewer', 'reviewer', 'completed'],
    ]);
    const secondBrief = fs.readFileSync(children[2]!.brief!, 'utf8');
    assert.match(secondBrief, /Review findings to address \(iteration 2 of 3\)/);
    assert.match(secondBrief, /\[VERDICT: NOT PASS\]/);
  });

  it('loop: no PASS within --max-iter → 1', async () => {
    await f.agent('worker', 'instant');
    await f.agent('reviewer', 'reviewer', ['--verdicts', 'NOT PASS']);
    const r = await f.run(['job', 'submit', '--session', 'worker', '--type', 'loop', '--reviewer', 'reviewer', '--max-iter', '2', '--prompt', 'x', '--json']);
    assert.equal(r.exitCode, 1, r.stderr);
    assert.deepEqual([JSON.parse(r.stdout).state, JSON.parse(r.stdout).reason], ['failed', 'max_iterations']);
  });

  it('discuss: two sessions take turns until both say [AGREE]; 1 when the turns run out', async () => {
    await f.agent('alice', 'agree');
    await f.agent('bob', 'agree');
    const r = await f.run(['job', 'submit', '--session', 'alice', '--type', 'discuss', '--with', 'bob', '--prompt', 'Tabs or spaces?', '--json']);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).detail, 'agreed after 2 turns');
    await f.agent('carol', 'disagree');
    const no = await f.run(['job', 'submit', '--session', 'alice', '--type', 'discuss', '--with', 'carol', '--max-turns', '3', '--prompt', 'Vim or Emacs?', '--json']);
    assert.equal(no.exitCode, 1, no.stderr);
    assert.deepEqual([JSON.parse(no.stdout).state, JSON.parse(no.stdout).reason], ['failed', 'no_agreement']);
  });

  it('refuses type-specific flags on the wrong type', async () => {
    const r = await f.run(['job', 'submit', '--session', 'x', '--prompt', 'y', '--reviewer', 'z']);
    assert.equal(r.exitCode, 64);
    assert.match(r.stderr, /^mam: --reviewer goes with --type loop$/m);
  });
});
