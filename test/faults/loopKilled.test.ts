/**
 * A loop killed while its creator works, and the creator completing meanwhile, with nobody
 * listening (no monitor, no VS Code, and the broker's job warden off): the completion exists only
 * in the job's outbox. `mam loop resume` must read it before any timer may judge the job.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import { LoopStore, type LoopState } from '../../src/core/loop/loopState';
import { UNPINNED } from '../../src/core/loop/snapshot';
import { JobOutbox } from '../../src/core/messaging/outbox';
import { CLI, until } from '../support/helpers';
import { loopFixture, type JobFixture } from '../support/jobs';

describe('faults: a loop killed midway loses no completion', function () {
  this.timeout(120_000);
  let f: JobFixture;
  beforeEach(() => {
    // Heartbeats every second, judged after 3 s of silence: a timer would be quick to judge.
    f = loopFixture({ MAM_NO_WARDEN: '1', MAM_HEARTBEAT_S: '1', MAM_LIVENESS_K: '3' });
  });
  afterEach(async () => {
    await f.dispose();
  });

  it('resume reads the completion waiting in the outbox: the job completes, is not asked again, and the loop passes', async () => {
    await f.agent('creator', 'creator', ['--work-ms', '2000']);
    const loop = execa(process.execPath, [CLI, 'loop', '--task', 'Survive the kill', '--creator', 'creator'], { cwd: f.workspace, env: f.env, reject: false });
    const loopsDir = f.controlPlane.paths.loopsDir;
    const state = (): LoopState | undefined => {
      const name = fs.existsSync(loopsDir) ? fs.readdirSync(loopsDir).find((n) => n.endsWith('.json')) : undefined;
      return name ? (JSON.parse(fs.readFileSync(path.join(loopsDir, name), 'utf8')) as LoopState) : undefined;
    };
    const implementJob = () => state()?.steps.find((s) => s.key === 'implement')?.job_id;
    try {
      await until(() => f.controlPlane.jobs.get(implementJob() ?? 'j-none')?.state === 'started', 30_000, 'the creator to start');
    } finally {
      loop.kill('SIGKILL');
      await loop;
    }
    const id = implementJob()!;
    // The creator completes with nobody listening: its completion is in the outbox, not in the record.
    await until(() => new JobOutbox(f.controlPlane.paths.jobDir(id)).events().some((e) => e.event === 'completed'), 30_000, 'the completion in the outbox');
    assert.equal(f.controlPlane.jobs.get(id)!.state, 'started', 'nobody applied it');

    const resumed = await f.run(['loop', 'resume', state()!.id, '--json']);
    assert.equal(resumed.exitCode, 0, resumed.stderr);
    const s = JSON.parse(resumed.stdout) as LoopState;
    assert.equal(s.status, 'passed');
    assert.equal(s.steps.find((x) => x.key === 'implement')!.job_id, id, 'the same job: not asked again');
    // Completed in time, not judged first (heartbeats its process sent after the completion, while
    // nobody had applied it, are late; the completion itself is not).
    const job = f.controlPlane.jobs.get(id)!;
    assert.deepEqual([job.state, (job.late_events ?? []).filter((e) => e.event !== 'heartbeat')], ['completed', []]);
  });

  it('a `--type loop` job killed mid-review resumes with mam loop resume: no finished job asked again, the parent completes, exit 0', async () => {
    // A `--type loop` job works in a folder that need not be a git checkout: its rounds review what the worker reported.
    fs.rmSync(path.join(f.workspace, '.git'), { recursive: true });
    fs.mkdirSync(path.join(f.workspace, '.mam'), { recursive: true }); // what marks it as the workspace, with no git root
    await f.agent('worker', 'work');
    await f.agent('reviewer', 'reviewer', ['--verdicts', 'NOT PASS,PASS', '--work-ms', '3000']);
    const submit = execa(process.execPath, [CLI, 'job', 'submit', '--session', 'worker', '--type', 'loop', '--reviewer', 'reviewer', '--prompt', 'Add input validation', '--json'], { cwd: f.workspace, env: f.env, reject: false });
    const loops = new LoopStore(f.controlPlane.paths);
    const stepJob = (key: string) => loops.list()[0]?.steps.find((s) => s.key === key)?.job_id;
    try {
      await until(() => f.controlPlane.jobs.get(stepJob('r1:review:reviewer') ?? 'j-none')?.state === 'started', 60_000, 'the first review to start');
    } finally {
      submit.kill('SIGKILL');
      await submit;
    }
    const before = loops.list()[0]!;
    assert.equal(before.status, 'running', 'killed, the loop is unfinished');
    assert.deepEqual(before.rounds.map((r) => r.identity), [UNPINNED], 'its round pins no snapshot');
    const parentId = before.job!.id;
    const implemented = stepJob('implement')!;
    const reviewing = stepJob('r1:review:reviewer')!;
    assert.equal(f.controlPlane.jobs.get(implemented)!.state, 'completed');

    const resumed = await f.run(['loop', 'resume', before.id, '--json']);
    assert.equal(resumed.exitCode, 0, resumed.stderr);
    const after = JSON.parse(resumed.stdout) as LoopState;
    assert.deepEqual([after.status, after.exit_code], ['passed', 0]);
    assert.equal(after.steps.find((s) => s.key === 'implement')!.job_id, implemented, 'the finished work is not asked again');
    assert.equal(after.steps.find((s) => s.key === 'r1:review:reviewer')!.job_id, reviewing, 'the review under way is awaited, not asked again');
    const parent = f.controlPlane.jobs.require(parentId);
    assert.deepEqual([parent.type, parent.state, parent.detail], ['loop', 'completed', 'PASS after 2 iteration(s)']);
    const children = f.controlPlane.jobs.list().jobs.filter((j) => j.parent_job === parentId).reverse();
    assert.deepEqual(children.map((j) => [j.id === implemented || j.id === reviewing, j.session, j.state]), [
      [true, 'worker', 'completed'], [true, 'reviewer', 'completed'], [false, 'worker', 'completed'], [false, 'reviewer', 'completed'],
    ]);
  });
});
