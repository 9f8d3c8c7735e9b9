import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import { isAlive } from '../../src/core/base/process';
import type { LoopState } from '../../src/core/loop/loopState';
import type { MergeEntry } from '../../src/core/merge/mergeQueue';
import { CLI, FAKE_AGENT, readJsonLines, tempDir, until } from '../support/helpers';
import { GIT_ENV, loopFixture, type JobFixture } from '../support/jobs';

/**
 * The local merge queue against real git, real worktrees, real tmux and the broker, with the
 * scripted creator and reviewer agents of the loop tests: branches pass a real review loop first.
 */
describe('the merge queue (real git, worktrees, tmux, broker, scripted agents)', function () {
  this.timeout(180_000);
  let f: JobFixture;
  let target: string;
  beforeEach(() => {
    f = loopFixture();
    target = git('rev-parse', '--abbrev-ref', 'HEAD');
  });
  afterEach(async () => {
    await f.dispose();
  });

  function git(...args: string[]): string {
    return execFileSync('git', args, { cwd: f.workspace, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();
  }
  const queueFile = () => path.join(f.workspace, '.mam', 'merge', 'queue.json');
  const queue = () => (JSON.parse(fs.readFileSync(queueFile(), 'utf8')) as { entries: MergeEntry[] }).entries;
  const loopState = (id: string) => JSON.parse(fs.readFileSync(path.join(f.workspace, '.mam', 'loops', `${id}.json`), 'utf8')) as LoopState;

  /** A scripted agent session running in `cwd`. */
  async function agentIn(name: string, mode: string, cwd: string, extra: string[] = []): Promise<void> {
    const command = [process.execPath, FAKE_AGENT, '--as', 'claude', '--log', f.log, '--mode', mode, ...extra].map((w) => JSON.stringify(w)).join(' ');
    const r = await f.run(['session', 'create', '--agent', 'claude', '--name', name, '--command', command, '--cwd', cwd]);
    assert.equal(r.exitCode, 0, r.stderr);
  }

  /** A worktree on branch `mam/<issue>` whose creator (working in `sub`, if given) passed a review loop with rev-a. */
  async function passedBranch(issue: string, sub?: string, before?: (dir: string) => void): Promise<string> {
    const dir = (await f.run(['worktree', 'prepare', issue])).stdout.trim();
    before?.(dir);
    const cwd = sub ? path.join(dir, sub) : dir;
    fs.mkdirSync(cwd, { recursive: true });
    await agentIn(`creator-${issue}`, 'creator', cwd);
    const r = await f.run(['loop', '--task', `Work on ${issue}`, '--creator', `creator-${issue}`, '--reviewer', 'rev-a', '--worktree', dir, '--json']);
    assert.equal(r.exitCode, 0, r.stderr);
    return dir;
  }

  /** A validation command (argv as a line) that records the tree it ran on, and, with `hold`, waits until `hold` exists. */
  function validation(ran: string, hold?: string): string {
    const script = path.join(tempDir('validate'), 'validate.js');
    fs.writeFileSync(script, `
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const tree = execFileSync('git', ['rev-parse', 'HEAD^{tree}'], { encoding: 'utf8' }).trim();
fs.appendFileSync(process.argv[2], JSON.stringify({ pid: process.pid, cwd: process.cwd(), tree }) + '\\n');
const hold = process.argv[3];
if (hold) { const t = setInterval(() => { if (fs.existsSync(hold)) { clearInterval(t); console.log('released'); } }, 20); }
else console.log('all green');
`);
    return [process.execPath, script, ran, ...(hold ? [hold] : [])].map((w) => JSON.stringify(w)).join(' ');
  }
  const ranLines = (ran: string) => readJsonLines<{ pid: number; cwd: string; tree: string }>(ran);

  it('lands two passed branches in order with validation, reviewing the rebased tree first; a conflicting third becomes a job for its creator', async () => {
    await agentIn('rev-a', 'reviewer', f.workspace, ['--verdicts', 'PASS']);
    const a = await passedBranch('a');
    await passedBranch('b', 'sub'); // its creator works in sub/: no conflict with a
    const c = await passedBranch('c', undefined, (dir) => {
      fs.writeFileSync(path.join(dir, 'feature.txt'), "c's start\nc's own line\n");
      execFileSync('git', ['commit', '-qam', 'c rewrites the start'], { cwd: dir, env: { ...process.env, ...GIT_ENV } });
    });
    const ran = path.join(tempDir('ran'), 'ran.log');
    for (const what of [a, 'mam/b', c]) {
      const r = await f.run(['merge', 'enqueue', what, '--validate', validation(ran)]);
      assert.equal(r.exitCode, 0, r.stderr);
    }
    const before = git('rev-parse', target);
    const run = await f.run(['merge', 'run']);
    assert.equal(run.exitCode, 1, `c waits: ${run.stdout}${run.stderr}`);
    const [ea, eb, ec] = queue();
    assert.deepEqual([ea!.state, eb!.state, ec!.state], ['landed', 'landed', 'waiting']);
    // In order, each once, on top of each other.
    assert.equal(git('rev-parse', target), eb!.landed_commit);
    assert.equal(git('rev-parse', `${eb!.landed_commit}~1`), ea!.landed_commit);
    assert.equal(git('rev-parse', `${ea!.landed_commit}~1`), before);
    assert.deepEqual(git('log', '--format=%s', target).split('\n'), ['implement', 'implement', 'initial']);
    assert.equal(fs.readFileSync(path.join(f.workspace, 'feature.txt'), 'utf8'), 'the start\nimplement\n', 'the target checkout was fast-forwarded');
    assert.ok(fs.existsSync(path.join(f.workspace, 'sub', 'feature.txt')));
    // a: the target had not moved, so its tree is the reviewed one, landed without another review.
    assert.equal(git('rev-parse', `${ea!.landed_commit}^{tree}`), ea!.reviewed.tree);
    assert.equal(ea!.attempt!.review_loop, null);
    // b: rebased onto a, a new tree: a review round ran on it before it landed, and it landed that tree.
    const bTree = git('rev-parse', `${eb!.landed_commit}^{tree}`);
    assert.notEqual(bTree, eb!.reviewed.tree);
    const review = loopState(eb!.attempt!.review_loop!);
    assert.deepEqual([review.status, review.review_only, review.reviewers, review.creator, review.rounds.length], ['passed', true, ['rev-a'], 'creator-b', 1]);
    assert.equal(review.rounds[0]!.identity.tree, bTree);
    assert.equal(review.base, ea!.landed_commit);
    // The validation ran on each landed tree, in a scratch worktree, never in a user's checkout.
    assert.deepEqual(ranLines(ran).map((l) => l.tree), [ea!.reviewed.tree, bTree]);
    for (const l of ranLines(ran)) assert.ok(l.cwd.startsWith(path.join(f.workspace, '.mam', 'merge', 'scratch')), l.cwd);
    assert.match(fs.readFileSync(path.join(f.workspace, '.mam', 'merge', 'logs', `${ea!.id}.log`), 'utf8'), /all green/);
    // c: the conflict is a job for its creator, naming the file; the entry waits on it.
    assert.match(ec!.reason!, /conflict in feature\.txt/);
    const job = f.controlPlane.jobs.get(ec!.job_id!)!;
    assert.equal(job.session, 'creator-c');
    assert.match(fs.readFileSync(job.brief!, 'utf8'), /conflicts in these files:\n\n- `feature\.txt`/);
    assert.ok(!git('worktree', 'list', '--porcelain').includes(path.join('.mam', 'merge', 'scratch')), 'no scratch worktree is left');
    // The creator's job completes (the scripted creator commits); the next run tries c again from its new tip.
    await until(() => f.controlPlane.jobs.get(job.id)?.state === 'completed', 60_000, "the creator's job to complete");
    // Its tip now: the run below hands c to its creator again, who may commit once more before we look.
    const fixedTip = git('rev-parse', 'mam/c');
    const again = await f.run(['merge', 'run']);
    assert.equal(again.exitCode, 1, again.stderr);
    const retried = queue()[2]!;
    assert.notEqual(retried.job_id, job.id, 'a new attempt, a new job');
    assert.match(fs.readFileSync(path.join(f.workspace, '.mam', 'merge', 'logs', `${ec!.id}.log`), 'utf8'), new RegExp(`landing mam/c \\(${fixedTip.slice(0, 12)}\\)`));
    const status = await f.run(['merge', 'status', '--json']);
    const shown = JSON.parse(status.stdout) as { problem: string | null; entries: Array<MergeEntry & { log_file: string; log_tail: string[] }> };
    assert.deepEqual([shown.problem, shown.entries.map((e) => e.state)], [null, ['landed', 'landed', 'waiting']]);
    assert.equal(shown.entries[2]!.job_id, retried.job_id);
  });

  it('a red validation and a review of the rebased tree that does not pass each become a job for the creator, with the output or the findings', async () => {
    // rev-a passes both branches' loops, then not the rebased b.
    await agentIn('rev-a', 'reviewer', f.workspace, ['--verdicts', 'PASS,PASS,NOT PASS']);
    const a = await passedBranch('a');
    await passedBranch('b', 'sub');
    const script = path.join(tempDir('red'), 'red.js');
    fs.writeFileSync(script, "console.log('2 passing'); console.error('FAIL test/app.test.ts: expected 3, got \\x1b[31m4\\x1b[0m'); process.exit(3);\n");
    assert.equal((await f.run(['merge', 'enqueue', a, '--validate', `${JSON.stringify(process.execPath)} ${JSON.stringify(script)}`])).exitCode, 0);
    assert.equal((await f.run(['merge', 'enqueue', 'mam/b'])).exitCode, 0);
    // The target moves on after both passed: b's rebased tree is one nobody reviewed.
    fs.writeFileSync(path.join(f.workspace, 'NEWS.md'), 'news\n');
    git('add', 'NEWS.md');
    git('commit', '-qm', 'news on the target');
    const before = git('rev-parse', target);

    const run = await f.run(['merge', 'run']);
    assert.equal(run.exitCode, 1, run.stdout + run.stderr);
    const [ea, eb] = queue();
    assert.deepEqual([ea!.state, eb!.state], ['waiting', 'waiting']);
    assert.equal(git('rev-parse', target), before, 'nothing landed');
    // a: the failing output, control characters removed, is in its creator's brief.
    assert.equal(ea!.reason, 'validation failed (exit 3); waiting on creator-a');
    const jobA = f.controlPlane.jobs.get(ea!.job_id!)!;
    assert.equal(jobA.session, 'creator-a');
    const briefA = fs.readFileSync(jobA.brief!, 'utf8');
    assert.match(briefA, /The validation command `.*red\.js` failed on the rebased branch/);
    assert.match(briefA, /FAIL test\/app\.test\.ts: expected 3, got 4/);
    assert.ok(!briefA.includes('\x1b'), 'no control characters in the brief');
    // b: a one-round review ran on the rebased tree, did not pass, and its findings are in the brief.
    assert.match(eb!.reason!, /^the review of the rebased tree did not pass \(loop .+\); waiting on creator-b$/);
    const review = loopState(eb!.attempt?.review_loop ?? /loop (\S+)\)/.exec(eb!.reason!)![1]!);
    assert.deepEqual([review.status, review.reason, review.review_only, review.rounds.length], ['failed', 'max_loop', true, 1]);
    assert.equal(review.base, before);
    const jobB = f.controlPlane.jobs.get(eb!.job_id!)!;
    assert.equal(jobB.session, 'creator-b');
    assert.match(fs.readFileSync(jobB.brief!, 'utf8'), /it was reviewed again \(loop .+\), and not every reviewer passed it:\n\n#### rev-a: NOT PASS/);
    assert.ok(!git('worktree', 'list', '--porcelain').includes(path.join('.mam', 'merge', 'scratch')), 'no scratch worktree is left');
  });

  it('killed while its validation runs, the next mam merge run resumes and lands exactly once', async () => {
    await agentIn('rev-a', 'reviewer', f.workspace, ['--verdicts', 'PASS']);
    const a = await passedBranch('a');
    const dir = tempDir('hold');
    const ran = path.join(dir, 'ran.log');
    const release = path.join(dir, 'release');
    assert.equal((await f.run(['merge', 'enqueue', a, '--validate', validation(ran, release)])).exitCode, 0);
    const before = git('rev-parse', target);
    const first = execa(process.execPath, [CLI, 'merge', 'run'], { cwd: f.workspace, env: f.env, reject: false });
    try {
      await until(() => ranLines(ran).length === 1, 60_000, 'the validation to start');
    } finally {
      first.kill('SIGKILL');
      await first;
    }
    const orphan = ranLines(ran)[0]!.pid;
    assert.deepEqual([queue()[0]!.state, queue()[0]!.step], ['running', 'validating'], 'the step was recorded before it ran');
    assert.equal(git('rev-parse', target), before, 'nothing landed yet');
    fs.writeFileSync(release, '');
    await until(() => !isAlive(orphan), 20_000, "the killed run's validation to exit");
    const again = await f.run(['merge', 'run']);
    assert.equal(again.exitCode, 0, again.stdout + again.stderr);
    const entry = queue()[0]!;
    assert.equal(entry.state, 'landed');
    assert.equal(ranLines(ran).length, 2, 'the validation ran again, in a fresh scratch worktree');
    assert.equal(git('rev-parse', target), entry.landed_commit);
    assert.deepEqual(git('log', '--format=%s', target).split('\n'), ['implement', 'initial'], 'landed once');
    const third = await f.run(['merge', 'run']);
    assert.equal(third.exitCode, 0, third.stderr);
    assert.deepEqual(git('log', '--format=%s', target).split('\n'), ['implement', 'initial'], 'never twice');
    assert.ok(!fs.existsSync(path.join(f.workspace, '.mam', 'merge', 'scratch', entry.id)));
    assert.ok(!git('worktree', 'list', '--porcelain').includes(path.join('.mam', 'merge', 'scratch')));
  });

  it('waits while the target checkout has uncommitted changes, naming them; lands once it is clean; a run killed after moving the target finishes without landing twice', async () => {
    await agentIn('rev-a', 'reviewer', f.workspace, ['--verdicts', 'PASS']);
    const a = await passedBranch('a');
    assert.equal((await f.run(['merge', 'enqueue', a])).exitCode, 0);
    const before = git('rev-parse', target);
    const feature = path.join(f.workspace, 'feature.txt');
    const mine = 'the start\nthe user is in the middle of this\n';
    fs.writeFileSync(feature, mine);

    const dirty = await f.run(['merge', 'run']);
    assert.equal(dirty.exitCode, 1, dirty.stdout + dirty.stderr);
    const waiting = queue()[0]!;
    assert.deepEqual([waiting.state, waiting.job_id, waiting.attempt], ['waiting', null, null]);
    assert.match(waiting.reason!, new RegExp(`${target} is checked out in .+ with uncommitted changes \\(feature\\.txt\\); commit or stash them there`));
    assert.equal(git('rev-parse', target), before, 'nothing landed');
    assert.equal(fs.readFileSync(feature, 'utf8'), mine, "the user's change is untouched");
    assert.ok(!git('worktree', 'list', '--porcelain').includes(path.join('.mam', 'merge', 'scratch')), 'no scratch worktree is left');

    git('checkout', '--', 'feature.txt');
    const clean = await f.run(['merge', 'run']);
    assert.equal(clean.exitCode, 0, clean.stdout + clean.stderr);
    const landed = queue()[0]!;
    assert.equal(landed.state, 'landed');
    assert.equal(git('rev-parse', target), landed.landed_commit);

    // What a runner killed between moving the target and recording it leaves on disk.
    const file = JSON.parse(fs.readFileSync(queueFile(), 'utf8')) as { entries: MergeEntry[] };
    file.entries[0] = { ...landed, state: 'running', step: 'landing', landed_commit: null, landed_at: null };
    fs.writeFileSync(queueFile(), JSON.stringify(file));
    const resumed = await f.run(['merge', 'run']);
    assert.equal(resumed.exitCode, 0, resumed.stdout + resumed.stderr);
    const entry = queue()[0]!;
    assert.deepEqual([entry.state, entry.landed_commit], ['landed', landed.landed_commit]);
    assert.deepEqual(git('log', '--format=%s', target).split('\n'), ['implement', 'initial'], 'landed once');
    assert.match(fs.readFileSync(path.join(f.workspace, '.mam', 'merge', 'logs', `${entry.id}.log`), 'utf8'), new RegExp(`${target} is at ${landed.landed_commit!.slice(0, 12)} already: landed`));
  });

  it('refuses bad input with one line, changing nothing', async () => {
    await agentIn('rev-a', 'reviewer', f.workspace, ['--verdicts', 'PASS']);
    const a = await passedBranch('a');
    assert.equal((await f.run(['merge', 'enqueue', a])).exitCode, 0);
    git('branch', 'lonely');
    const bytes = fs.readFileSync(queueFile());
    const outside = tempDir('outside');
    for (const [args, code, message] of [
      [['merge', 'enqueue', 'nope'], 64, /'nope' is neither a folder nor a branch/],
      [['merge', 'enqueue', outside], 64, /is not a worktree of the repository/],
      [['merge', 'enqueue', 'mam/a'], 64, /branch 'mam\/a' is in the queue already/],
      [['merge', 'enqueue', 'lonely'], 64, /no review loop passed on branch 'lonely'/],
      [['merge', 'enqueue', 'lonely', '--validate', 'npm "test'], 64, /unterminated "/],
      [['merge', 'enqueue', 'lonely', '--into', 'ghost'], 64, /--into: no branch 'ghost'/],
      [['merge', 'enqueue', 'lonely', '--into', 'lonely'], 64, /is the target branch itself/],
      [['merge', 'remove', 'm-20260101T000000Z-abcdef'], 64, /no entry 'm-20260101T000000Z-abcdef'/],
      [['merge', 'remove', '../x'], 64, /is not a merge queue entry ID/],
    ] as const) {
      const r = await f.run([...args]);
      assert.equal(r.exitCode, code, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr.trim(), new RegExp(`^mam: .*${message.source}`));
      assert.deepEqual(fs.readFileSync(queueFile()), bytes, `${args.join(' ')} changed the queue`);
    }
    fs.writeFileSync(queueFile(), '{"version": 1, "entries": [{"id": 7}]}');
    const status = await f.run(['merge', 'status', '--json']);
    assert.match((JSON.parse(status.stdout) as { problem: string }).problem, /entries\[0\]\.id must be a string/);
  });
});
