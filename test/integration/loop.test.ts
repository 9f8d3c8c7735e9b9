import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import type { LoopState } from '../../src/core/loop/loopState';
import { CLI, readAgentLog, snapshotTree, tempDir, until } from '../support/helpers';
import { loopFixture, type JobFixture } from '../support/jobs';


describe('the review loop (real git, tmux, broker, scripted agents)', function () {
  this.timeout(120_000);
  let f: JobFixture;
  beforeEach(() => {
    f = loopFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  const loop = (...args: string[]) => f.run(['loop', '--task', 'Add input validation to the signup form', '--creator', 'creator', ...args, '--json']);
  const state = (r: { stdout: string }) => JSON.parse(r.stdout) as LoopState;
  const commits = () => execFileSync('git', ['log', '--format=%s'], { cwd: f.workspace, encoding: 'utf8' }).trim().split('\n');
  const linesTo = (session: string) => readAgentLog(f.log).filter((e) => e.event === 'job' && (e as { job?: string }).job && f.controlPlane.jobs.get(String((e as { job?: string }).job))?.session === session);

  it('two reviewers, NOT PASS then PASS → 0: two creator commits, reports and identity sidecars promoted', async () => {
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    await f.agent('rev-b', 'reviewer', ['--verdicts', 'PASS']);
    const r = await loop('--reviewer', 'rev-a,rev-b');
    assert.equal(r.exitCode, 0, r.stderr);
    const s = state(r);
    assert.equal(s.status, 'passed');
    assert.deepEqual(s.rounds.map((x) => [x.n, x.status, x.reviews.map((v) => `${v.reviewer}:${v.verdict}`)]), [
      [1, 'not_passed', ['rev-a:NOT PASS', 'rev-b:PASS']],
      [2, 'passed', ['rev-a:PASS', 'rev-b:PASS']],
    ]);
    assert.deepEqual(commits(), ['fix after round 1', 'implement', 'initial']);
    assert.equal(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: f.workspace, encoding: 'utf8' }), '', '.mam/ ignores itself: the checkout is clean');
    assert.ok(fs.existsSync(path.join(f.workspace, '.mam', '.gitignore')));
    const last = s.rounds[1]!;
    assert.equal(last.identity.head, execFileSync('git', ['rev-parse', 'HEAD'], { cwd: f.workspace, encoding: 'utf8' }).trim());
    for (const review of last.reviews) {
      const dir = path.join(f.workspace, '.mam', 'reports', review.reviewer);
      assert.match(fs.readFileSync(path.join(dir, `report-${review.job_id}.md`), 'utf8'), /\[VERDICT: PASS\]\n$/);
      const identity = JSON.parse(fs.readFileSync(path.join(dir, `report-${review.job_id}.identity.json`), 'utf8'));
      assert.deepEqual([identity.base, identity.head, identity.tree, identity.reviewer, identity.verdict, identity.round], [s.base, last.identity.head, last.identity.tree, review.reviewer, 'PASS', 2]);
    }
    const fixBrief = fs.readFileSync(f.controlPlane.jobs.get(s.steps.find((x) => x.key === 'r1:fix')!.job_id)!.brief!, 'utf8');
    assert.match(fixBrief, /#### rev-a\n\n# Review of .*\n\nFindings: the tests do not cover the edge case/);
  });

  it('--reports-dir .agents/reports: passing reports and their sidecars are promoted there, and the loop records where', async () => {
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'PASS']);
    const r = await loop('--reviewer', 'rev-a', '--reports-dir', '.agents/reports');
    assert.equal(r.exitCode, 0, r.stderr);
    const s = state(r);
    const dir = path.join(f.workspace, '.agents', 'reports');
    assert.equal(s.reports_dir, dir);
    const review = s.rounds.at(-1)!.reviews[0]!;
    const report = path.join(dir, 'rev-a', `report-${review.job_id}.md`);
    assert.equal(review.report, report);
    assert.match(fs.readFileSync(report, 'utf8'), /\[VERDICT: PASS\]\n$/);
    const identity = JSON.parse(fs.readFileSync(path.join(dir, 'rev-a', `report-${review.job_id}.identity.json`), 'utf8'));
    assert.deepEqual([identity.reviewer, identity.verdict, identity.loop, identity.job], ['rev-a', 'PASS', s.id, review.job_id]);
    assert.ok(!fs.existsSync(path.join(f.workspace, '.mam', 'reports')), 'nothing went to the default folder');
    const status = await f.run(['loop', 'status', s.id]);
    assert.match(status.stdout, new RegExp(`^reports: ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    assert.ok(status.stdout.includes(`rev-a: PASS (job ${review.job_id}) → ${report}`));
  });

  it('MAM_REPORTS_DIR names the reports folder when no flag does', async () => {
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'PASS']);
    const r = await f.run(['loop', '--task', 'Add input validation to the signup form', '--creator', 'creator', '--reviewer', 'rev-a', '--json'], { MAM_REPORTS_DIR: 'team/reports' });
    assert.equal(r.exitCode, 0, r.stderr);
    const review = state(r).rounds.at(-1)!.reviews[0]!;
    assert.ok(fs.existsSync(path.join(f.workspace, 'team', 'reports', 'rev-a', `report-${review.job_id}.identity.json`)));
  });

  it('a reports folder outside the workspace is refused: 64, one line, nothing written', async () => {
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'PASS']);
    const outside = tempDir('outside');
    const before = snapshotTree(f.workspace);
    fs.symlinkSync(outside, path.join(f.workspace, 'link-out')); // a folder inside that leads out
    for (const [dir, env, message] of [
      ['../escaped', {}, /^mam: --reports-dir '\.\.\/escaped' is not a folder inside the workspace .*; name one inside it, such as \.agents\/reports$/],
      [path.join(outside, 'reports'), {}, /^mam: --reports-dir '.*' is not a folder inside the workspace/],
      ['.agents/../../escaped', {}, /is not a folder inside the workspace/],
      ['link-out/reports', {}, /^mam: --reports-dir 'link-out\/reports' is not a folder inside the workspace/],
      ['.', {}, /is not a folder inside the workspace/],
      [undefined, { MAM_REPORTS_DIR: '../escaped' }, /^mam: MAM_REPORTS_DIR in the environment '\.\.\/escaped' is not a folder inside the workspace/],
    ] as const) {
      const r = await f.run(['loop', '--task', 'Add input validation to the signup form', '--creator', 'creator', '--reviewer', 'rev-a', ...(dir === undefined ? [] : ['--reports-dir', dir])], { ...env });
      assert.equal(r.exitCode, 64, `${dir}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr.trim(), message);
    }
    fs.unlinkSync(path.join(f.workspace, 'link-out'));
    const after = snapshotTree(f.workspace);
    delete after['.mam/locks/'];
    delete before['.mam/locks/'];
    assert.deepEqual(after, before, 'nothing written in the workspace');
    assert.deepEqual(fs.readdirSync(outside), [], 'nothing written outside it');
    assert.ok(!fs.existsSync(path.join(path.dirname(f.workspace), 'escaped')));
    assert.equal(readAgentLog(f.log).filter((e) => e.event === 'job').length, 0, 'no job reached an agent');
  });

  it('a report without a verdict line counts as NOT PASS; --max-loop reached → 1', async () => {
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'noverdict');
    const r = await loop('--reviewer', 'rev-a', '--max-loop', '2');
    assert.equal(r.exitCode, 1, r.stderr);
    const s = state(r);
    assert.deepEqual([s.status, s.reason], ['failed', 'max_loop']);
    assert.deepEqual(s.rounds.map((x) => x.reviews[0]!.verdict), ['NOT PASS', 'NOT PASS']);
  });

  it('the creator edits during the review: that approval is discarded and the round reviewed again', async () => {
    await f.agent('creator', 'meddler');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'PASS', '--hold-until-meddled']);
    const r = await loop('--reviewer', 'rev-a');
    assert.equal(r.exitCode, 0, r.stderr);
    const s = state(r);
    assert.deepEqual(s.rounds.map((x) => [x.status, x.reviews[0]!.verdict]), [['stale', 'PASS'], ['passed', 'PASS']]);
    assert.notEqual(s.rounds[0]!.identity.tree, s.rounds[1]!.identity.tree);
    assert.equal(s.rounds[0]!.identity.head, s.rounds[1]!.identity.head, 'the edit was not committed: only the tree changed');
    assert.deepEqual(s.rounds[0]!.changed_during_review, ['feature.txt'], 'the voided round names the file that changed');
    assert.ok(!s.steps.some((x) => x.kind === 'fix'), 'a stale round asks no fix');
  });

  it('the tree changes during every round: after 3 re-reviews the loop gives up → 1, tree_keeps_changing', async () => {
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'PASS', '--touch-tree']);
    const r = await loop('--reviewer', 'rev-a', '--max-loop', '2');
    assert.equal(r.exitCode, 1, r.stderr);
    const s = state(r);
    assert.deepEqual([s.status, s.reason], ['failed', 'tree_keeps_changing']);
    assert.deepEqual(s.rounds.map((x) => [x.status, x.reviews[0]!.verdict]), Array.from({ length: 4 }, () => ['stale', 'PASS']), 'stale rounds do not count toward --max-loop');
    assert.equal(new Set(s.rounds.map((x) => x.identity.tree)).size, 4, 'each round pinned the tree as it was then');
    assert.ok(!fs.existsSync(path.join(f.workspace, '.mam', 'reports', 'rev-a')), 'no approval of a moving tree is promoted');
  });

  it('a rebuttal goes to the reviewers instead of a fix', async () => {
    await f.agent('creator', 'creator', ['--rebut-first']);
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    const r = await loop('--reviewer', 'rev-a', '--max-rebut', '1');
    assert.equal(r.exitCode, 0, r.stderr);
    const s = state(r);
    assert.equal(s.rebuts_used, 1);
    assert.equal(s.rounds[1]!.rebut, 'the empty input case cannot happen: the form validates it first');
    assert.deepEqual(commits(), ['implement', 'initial'], 'the rebuttal changed no code');
    const review2 = f.controlPlane.jobs.get(s.rounds[1]!.reviews[0]!.job_id)!;
    assert.match(fs.readFileSync(review2.brief!, 'utf8'), /\[REBUT: the empty input case cannot happen/);
  });

  it('a second loop on the same checkout → 5', async () => {
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'PASS', '--work-ms', '4000']);
    const first = execa(process.execPath, [CLI, 'loop', '--task', 'first', '--creator', 'creator', '--reviewer', 'rev-a'], { cwd: f.workspace, env: f.env, reject: false });
    try {
      await until(() => fs.existsSync(path.join(f.workspace, '.mam', 'loops')) && fs.readdirSync(path.join(f.workspace, '.mam', 'loops')).length > 0, 20_000, 'the first loop to start');
      const second = await f.run(['loop', '--task', 'second', '--creator', 'creator', '--reviewer', 'rev-a']);
      assert.equal(second.exitCode, 5, second.stderr);
      assert.match(second.stderr, /^mam: another loop is running on /);
    } finally {
      assert.equal((await first).exitCode, 0);
    }
  });

  it('killed mid-round and started again, it resumes and finishes without repeating finished jobs', async () => {
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'NOT PASS,PASS', '--work-ms', '3000']);
    const args = ['loop', '--task', 'Survive a crash', '--creator', 'creator', '--reviewer', 'rev-a'];
    const first = execa(process.execPath, [CLI, ...args], { cwd: f.workspace, env: f.env, reject: false });
    const loopsDir = path.join(f.workspace, '.mam', 'loops');
    const current = () => {
      const name = fs.existsSync(loopsDir) ? fs.readdirSync(loopsDir).find((n) => /^l-.*\.json$/.test(n)) : undefined;
      return name ? (JSON.parse(fs.readFileSync(path.join(loopsDir, name), 'utf8')) as LoopState) : undefined;
    };
    try {
      await until(() => current()?.steps.some((x) => x.key === 'r1:review:rev-a') ?? false, 30_000, 'round 1 to be under review');
    } finally {
      first.kill('SIGKILL');
      await first;
    }
    const again = await f.run([...args, '--json']);
    assert.equal(again.exitCode, 0, again.stderr);
    const s = state(again);
    assert.equal(s.status, 'passed');
    assert.equal(s.id, current()!.id, 'the same loop, resumed');
    assert.deepEqual(s.steps.filter((x) => x.job_id).map((x) => x.key), ['implement', 'r1:review:rev-a', 'r1:fix', 'r2:review:rev-a']);
    assert.equal(linesTo('creator').length, 2, 'the creator got the implement and the fix, once each');
    assert.equal(linesTo('rev-a').length, 2, 'the reviewer got round 1 once and round 2 once');
    assert.deepEqual(commits(), ['fix after round 1', 'implement', 'initial']);
    assert.equal(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: f.workspace, encoding: 'utf8' }), '', '.mam/ ignores itself: the checkout is clean');
    assert.ok(fs.existsSync(path.join(f.workspace, '.mam', '.gitignore')));
  });

  it('a crash takes the loop and the tmux server mid-review: resume --all, then loop resume finishes it, asking the lost review again', async () => {
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'NOT PASS,PASS', '--work-ms', '3000']);
    const first = execa(process.execPath, [CLI, 'loop', '--task', 'Survive a reboot', '--creator', 'creator', '--reviewer', 'rev-a'], { cwd: f.workspace, env: f.env, reject: false });
    const review = () => {
      const loops = f.controlPlane.paths.loopsDir;
      const name = fs.existsSync(loops) ? fs.readdirSync(loops).find((n) => n.endsWith('.json')) : undefined;
      const s = name ? (JSON.parse(fs.readFileSync(path.join(loops, name), 'utf8')) as LoopState) : undefined;
      const step = s?.steps.find((x) => x.key === 'r1:review:rev-a');
      return step && f.controlPlane.jobs.get(step.job_id)?.state === 'started' ? { loop: s!, job: step.job_id } : undefined;
    };
    let lost: { loop: LoopState; job: string } | undefined;
    try {
      await until(() => (lost = review()) !== undefined, 30_000, 'round 1 to be under review');
    } finally {
      first.kill('SIGKILL');
      await first;
      await f.tmux.killServer();
    }

    const recovered = await f.run(['session', 'resume', '--all']);
    assert.equal(recovered.exitCode, 0, recovered.stderr);
    // The lost review ends failed (agent_exited): by resume --all, or already by the broker's job warden.
    assert.match(recovered.stdout, new RegExp(`^rev-a \\(claude\\): resumed: in conversation \\S+( \\(open job ${lost!.job} failed: agent_exited\\))?$`, 'm'));
    assert.deepEqual([f.controlPlane.jobs.get(lost!.job)!.state, f.controlPlane.jobs.get(lost!.job)!.reason], ['failed', 'agent_exited']);
    assert.match(recovered.stdout, new RegExp(`^creator \\(claude\\): resumed: `, 'm'));
    assert.match(recovered.stdout, new RegExp(`^Loop ${lost!.loop.id} was running: continue it with 'mam loop resume ${lost!.loop.id}'\\.$`, 'm'));

    const resumed = await f.run(['loop', 'resume', lost!.loop.id, '--json']);
    assert.equal(resumed.exitCode, 0, resumed.stderr);
    const s = state(resumed);
    assert.equal(s.status, 'passed');
    assert.notEqual(s.steps.find((x) => x.key === 'r1:review:rev-a')!.job_id, lost!.job, 'the lost review was asked again, as a new job');
    assert.deepEqual(s.rounds.map((x) => [x.n, x.status]), [[1, 'not_passed'], [2, 'passed']]);
  });

  // --plan is the seeds' word for --planner: the same loop either way.
  for (const flag of ['--planner', '--plan']) it(`a planner (${flag}) plans, the creator challenges it once, and the revised plan goes to the implementation`, async () => {
    await f.agent('creator', 'creator', ['--challenge-once']);
    await f.agent('planner', 'planner');
    await f.agent('rev-a', 'reviewer');
    const r = await loop(flag, 'planner', '--plan-talk', '2', '--reviewer', 'rev-a');
    assert.equal(r.exitCode, 0, r.stderr);
    const s = state(r);
    assert.deepEqual(s.steps.map((x) => `${x.key}@${x.session}`), ['plan@planner', 'plan:challenge:1@creator', 'plan:revise:1@planner', 'plan:challenge:2@creator', 'implement@creator', 'r1:review:rev-a@rev-a']);
    assert.match(s.plan ?? '', /^Plan v2/);
    const brief = (key: string) => fs.readFileSync(f.controlPlane.jobs.get(s.steps.find((x) => x.key === key)!.job_id)!.brief!, 'utf8');
    assert.match(brief('plan:revise:1'), /The plan forgets the test\./, 'the planner saw the objection');
    assert.match(brief('implement'), /Plan v2: append a line to feature\.txt, with a test\./);
  });

  it('review only, with every reviewer: nothing is implemented first; the creator fixes what they find', async () => {
    await f.agent('creator', 'creator', [], 'creator');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'NOT PASS,PASS'], 'reviewer');
    await f.agent('rev-b', 'reviewer', [], 'reviewer');
    await f.agent('bystander', 'work', [], 'planner');
    const r = await loop('--review-only', '--all-reviewer');
    assert.equal(r.exitCode, 0, r.stderr);
    const s = state(r);
    assert.deepEqual([...s.reviewers].sort(), ['rev-a', 'rev-b'], 'reviewer-role sessions only, not the creator or the planner');
    assert.deepEqual(s.steps.map((x) => x.key), ['r1:review:rev-a', 'r1:review:rev-b', 'r1:fix', 'r2:review:rev-a', 'r2:review:rev-b']);
    assert.deepEqual(commits(), ['fix after round 1', 'initial']);
    assert.equal(linesTo('bystander').length, 0);
  });

  it('without reviewers the creator reviews its own work', async () => {
    await f.agent('creator', 'creator');
    const r = await loop();
    assert.equal(r.exitCode, 0, r.stderr);
    const s = state(r);
    assert.deepEqual(s.reviewers, ['creator']);
    assert.deepEqual(s.steps.map((x) => `${x.key}@${x.session}`), ['implement@creator', 'r1:review:creator@creator']);
  });

  it('jobs the creator delegated are awaited before the review and listed in its brief', async () => {
    await f.agent('helper', 'work', ['--work-ms', '1500']);
    await f.agent('creator', 'delegator', ['--delegate-to', 'helper']);
    await f.agent('rev-a', 'reviewer');
    const r = await loop('--reviewer', 'rev-a');
    assert.equal(r.exitCode, 0, r.stderr);
    const s = state(r);
    const implement = s.steps.find((x) => x.key === 'implement')!.job_id;
    const child = f.controlPlane.jobs.list().jobs.find((j) => j.parent_job === implement);
    assert.ok(child, 'the creator delegated a job');
    assert.deepEqual(s.rounds[0]!.children, [{ id: child.id, state: 'completed', session: 'helper' }]);
    assert.ok(child.finished_at! <= s.rounds[0]!.started_at, 'the child had ended before round 1 began');
    const review = f.controlPlane.jobs.get(s.rounds[0]!.reviews[0]!.job_id)!;
    assert.match(fs.readFileSync(review.brief!, 'utf8'), new RegExp(`- ${child.id} \\(helper\\): completed`));
  });

  it('mam loop cancel stops the running loop and cancels its open jobs', async () => {
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'reviewer', ['--work-ms', '120000']);
    const running = execa(process.execPath, [CLI, 'loop', '--task', 'Never mind', '--creator', 'creator', '--reviewer', 'rev-a'], { cwd: f.workspace, env: f.env, reject: false });
    const loopsDir = path.join(f.workspace, '.mam', 'loops');
    let id = '';
    let review = '';
    try {
      await until(() => {
        const name = fs.existsSync(loopsDir) ? fs.readdirSync(loopsDir).find((n) => /^l-.*\.json$/.test(n)) : undefined;
        const s = name ? (JSON.parse(fs.readFileSync(path.join(loopsDir, name), 'utf8')) as LoopState) : undefined;
        const step = s?.steps.find((x) => x.key === 'r1:review:rev-a');
        [id, review] = [s?.id ?? '', step?.job_id ?? ''];
        return !!step && f.controlPlane.jobs.get(step.job_id)?.state === 'started';
      }, 30_000, 'the review to start');
      const c = await f.run(['loop', 'cancel', id]);
      assert.equal(c.exitCode, 0, c.stderr);
      assert.match(c.stdout, new RegExp(`Cancelled loop ${id}`));
      // Nobody is signalled (the owner could be a VS Code window): the loop's own process lets go.
      await until(() => running.exitCode !== null, 15_000, 'the loop process to let go');
    } finally {
      running.kill('SIGKILL');
    }
    const ended = await running;
    assert.deepEqual([ended.signal, ended.exitCode], [undefined, 1], 'the loop process ended by itself, not passed');
    const after = JSON.parse((await f.run(['loop', 'status', id, '--json'])).stdout) as LoopState;
    assert.deepEqual([after.status, after.owner], ['cancelled', null]);
    assert.equal(f.controlPlane.jobs.get(review)!.state, 'cancelled');
    const again = await f.run(['loop', 'resume', id]);
    assert.equal(again.exitCode, 64, 'a cancelled loop is not resumed');
  });

  it('refuses bad input with one line and exit 64', async () => {
    await f.agent('creator', 'creator');
    for (const [args, message] of [
      [['--reviewer', 'ghost'], /unknown session 'ghost'/],
      [['--reviewer', 'a', '--all-reviewer'], /either --reviewer or --all-reviewer/],
      [['--plan-talk', '2'], /--plan-talk goes with --planner/],
      [['--base', 'no-such-rev'], /unknown revision 'no-such-rev'/],
      [['--max-loop', '0'], /--max-loop must be a whole number ≥ 1/],
    ] as const) {
      const r = await loop(...args);
      assert.equal(r.exitCode, 64, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    assert.equal(fs.existsSync(path.join(f.workspace, '.mam', 'loops')), false, 'no loop was written');
  });
});
