/**
 * A person as an assignee: `--session human:NAME` makes a tracked job with the lifecycle and the
 * timers of any other; nothing is typed anywhere; the person reports with `mam event` from a
 * terminal, or Start and Complete in VS Code (the engine calls tested here).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { actAsPerson } from '../../src/core/jobs/personJobs';
import { reportPathOf } from '../../src/core/jobs/brief';
import { execa } from 'execa';
import type { LoopState } from '../../src/core/loop/loopState';
import { CLI, until } from '../support/helpers';
import { jobFixture, loopFixture, type JobFixture } from '../support/jobs';

describe('a person as an assignee (human:NAME)', function () {
  this.timeout(60_000);
  let f: JobFixture;
  beforeEach(() => {
    f = jobFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  it('from a terminal: submit → assigned, then the person\'s own mam event started and completed → 0', async () => {
    const submitting = f.run(['job', 'submit', '--session', 'human:alice', '--prompt', 'Read the new onboarding doc and say what is unclear', '--json']);
    let id: string | undefined;
    await until(() => (id = f.controlPlane.jobs.list().jobs.find((j) => j.state === 'dispatched')?.id) !== undefined, 20_000, 'the job to be assigned', 50);
    const assigned = f.controlPlane.jobs.get(id!)!;
    assert.deepEqual([assigned.target, assigned.delivery], [{ kind: 'human', name: 'alice' }, 'assigned']);
    assert.deepEqual([assigned.timers!.start_timeout_s, assigned.timers!.idle_timeout_s], [3600, 3600], 'a person is judged by the budget only');
    assert.match(fs.readFileSync(assigned.brief!, 'utf8'), /event started --job /, 'the brief tells the person how to report');
    for (const [event, extra] of [['started', []], ['completed', ['--detail', 'two sections need examples']]] as const) {
      const r = await f.run(['event', event, '--job', id!, ...extra]);
      assert.equal(r.exitCode, 0, r.stderr);
    }
    const done = await submitting;
    assert.equal(done.exitCode, 0, done.stderr);
    assert.deepEqual([JSON.parse(done.stdout).state, JSON.parse(done.stdout).detail], ['completed', 'two sections need examples']);
  });

  it('a person reviews in a loop: the loop waits for them, takes their report and verdict, and passes', async () => {
    await f.dispose();
    f = loopFixture();
    await f.agent('creator', 'creator');
    const loop = execa(process.execPath, [CLI, 'loop', '--task', 'Add a line to feature.txt', '--creator', 'creator', '--reviewer', 'human:dana', '--json'], { cwd: f.workspace, env: f.env, reject: false });
    let id: string | undefined;
    await until(() => (id = f.controlPlane.jobs.list().jobs.find((j) => j.session === 'human:dana' && j.state === 'dispatched')?.id) !== undefined, 60_000, 'the review to be assigned to dana');
    const job = f.controlPlane.jobs.get(id!)!;
    assert.equal(job.role, 'reviewer');
    const report = reportPathOf(job.brief!);
    assert.match(fs.readFileSync(job.brief!, 'utf8'), new RegExp(report.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'her brief names her report file');
    assert.equal((await f.run(['event', 'started', '--job', id!])).exitCode, 0);
    fs.writeFileSync(report, '# Review\n\nThe line is there.\n\n[VERDICT: PASS]\n');
    assert.equal((await f.run(['event', 'completed', '--job', id!, '--detail', 'read it', '--report', report])).exitCode, 0);
    const r = await loop;
    assert.equal(r.exitCode, 0, r.stderr);
    const s = JSON.parse(r.stdout) as LoopState;
    assert.deepEqual(s.rounds.map((x) => [x.status, x.reviews.map((v) => `${v.reviewer}:${v.verdict}`)]), [['passed', ['human:dana:PASS']]]);
    assert.ok(fs.existsSync(`${s.reports_dir ?? `${f.workspace}/.mam/reports`}/human-dana/report-${id}.md`), 'her report is promoted');
  });

  it('from VS Code: Start, then Complete; a reviewer hands in its report, and cannot complete without one', async () => {
    const engine = f.engine();
    const submit = await f.run(['job', 'submit', '--session', 'human:bob', '--role', 'reviewer', '--prompt', 'Review the release notes', '--no-wait', '--json']);
    assert.equal(submit.exitCode, 0, submit.stderr);
    const id = JSON.parse(submit.stdout).id as string;
    await assert.rejects(actAsPerson(engine, id, { event: 'completed', detail: 'x' }), /start job .* before completing it/);
    assert.equal((await actAsPerson(engine, id, { event: 'started' })).state, 'started');
    await assert.rejects(actAsPerson(engine, id, { event: 'completed', detail: 'looks fine' }), /a reviewer hands in a report: write it at .*report\.md first/);
    fs.writeFileSync(reportPathOf(f.controlPlane.jobs.get(id)!.brief!), '# Review\n\nFine.\n\n[VERDICT: PASS]\n');
    const done = await actAsPerson(engine, id, { event: 'completed', detail: 'looks fine' });
    assert.deepEqual([done.state, done.detail], ['completed', 'looks fine']);
    assert.match(fs.readFileSync(done.report!, 'utf8'), /\[VERDICT: PASS\]\n$/, 'the report is in the audit folder');
    const logs = await f.run(['job', 'logs', id]);
    assert.match(logs.stdout, /started\s+seq=1 from human:bob/);
    await assert.rejects(actAsPerson(engine, id, { event: 'started' }), /has ended/);
  });
});
