import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PlanState } from '../../src/core/plan/planState';
import { execa } from 'execa';
import { CLI, FAKE_AGENT, tempDir, until } from '../support/helpers';
import { GIT_ENV, loopFixture, type JobFixture } from '../support/jobs';

/**
 * Plans end to end: scripted agents (claude creators, codex reviewers: sessions the plan creates
 * in each task's worktree), real git, real tmux, the embedded broker, the real merge queue.
 */
describe('mam plan (real git, worktrees, tmux, broker, scripted agents)', function () {
  this.timeout(300_000);
  let f: JobFixture;
  let target: string;

  /** A workspace whose claude is a scripted creator (each task's work in its own file) and whose codex is a reviewer giving `verdicts`. */
  function fixture(verdicts = 'PASS'): JobFixture {
    const agent = (as: string, ...extra: string[]) => [process.execPath, FAKE_AGENT, '--as', as, '--log', path.join(tempDir('plan-agents'), `${as}.log`), ...extra].map((w) => JSON.stringify(w)).join(' ');
    return loopFixture({
      MAM_AGENT_COMMAND_CLAUDE: agent('claude', '--mode', 'creator', '--file', '@cwd'),
      MAM_AGENT_COMMAND_CODEX: agent('codex', '--mode', 'reviewer', '--verdicts', verdicts),
    });
  }

  afterEach(async () => {
    await f?.dispose();
  });

  function git(...args: string[]): string {
    return execFileSync('git', args, { cwd: f.workspace, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();
  }

  function planFile(text: string): string {
    const file = path.join(f.workspace, 'plan.yaml');
    fs.writeFileSync(file, text);
    return file;
  }

  const THREE = `title: Three changes
max_parallel: 2
defaults: { creator: claude, reviewers: [codex], max_loop: 2 }
tasks:
  - id: one
    task: Add the first line
  - id: two
    task: Add the second line
  - id: three
    task: Add the third line, after both
    needs: [one, two]
`;

  it('three tasks (two independent, one needing both) land three commits on the target in dependency order; the third starts from a tip holding the first two', async () => {
    f = fixture();
    target = git('rev-parse', '--abbrev-ref', 'HEAD');
    const before = git('rev-parse', 'HEAD');
    const r = await f.run(['plan', 'run', planFile(THREE), '--json']);
    assert.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
    const plan = JSON.parse(r.stdout) as { id: string; status: string; tasks: Array<{ id: string; state: string; landed_commit: string | null }> };
    assert.equal(plan.status, 'landed');
    assert.deepEqual(plan.tasks.map((t) => [t.id, t.state]), [['one', 'landed'], ['two', 'landed'], ['three', 'landed']]);
    // Three landings on the target, the third after the other two.
    const landed = git('rev-list', '--first-parent', `${before}..${target}`).split('\n').reverse();
    const commitOf = (id: string) => plan.tasks.find((t) => t.id === id)!.landed_commit!;
    for (const id of ['one', 'two', 'three']) assert.ok(landed.includes(commitOf(id)), `${id} landed on ${target}`);
    assert.equal(landed.at(-1), commitOf('three'));
    const state = JSON.parse(fs.readFileSync(path.join(f.workspace, '.mam', 'plans', plan.id, 'state.json'), 'utf8')) as PlanState;
    const base = state.tasks.find((t) => t.id === 'three')!.base!;
    for (const id of ['one', 'two']) assert.doesNotThrow(() => git('merge-base', '--is-ancestor', commitOf(id), base), `three's worktree started from a tip holding ${id}`);
    // Every task's file is on the target; the sessions the plan made are stopped; the worktrees are gone.
    const short = plan.id.slice(-6);
    for (const id of ['one', 'two', 'three']) assert.ok(git('ls-tree', '--name-only', target).split('\n').includes(`${short}-${id}.txt`), `${id}'s work is on ${target}`);
    assert.ok(!git('worktree', 'list', '--porcelain').includes(path.join('.mam', 'worktrees')), 'no task worktree is left');
    const sessions = JSON.parse((await f.run(['session', 'list', '--json'])).stdout) as Array<{ name: string; status: string }>;
    assert.ok(sessions.length >= 6 && sessions.every((s) => s.status === 'stopped'), JSON.stringify(sessions));
    // And status says the same afterwards.
    const status = await f.run(['plan', 'status', plan.id]);
    assert.equal(status.exitCode, 0);
    assert.match(status.stdout, /three\s+landed\s+one,two/);
  });

  it('a task whose loop does not pass blocks its dependant, and nothing else', async () => {
    f = fixture('NOT PASS');
    const r = await f.run(['plan', 'run', planFile(`title: One fails
defaults: { creator: claude, reviewers: [codex], max_loop: 1 }
tasks:
  - id: bad
    task: Reviewed and refused
  - id: after
    task: Needs the refused one
    needs: [bad]
  - id: alone
    task: Reviewed by a person who passes everything
    reviewers: [{ agent: shell, command: ${JSON.stringify([process.execPath, FAKE_AGENT, '--as', 'claude', '--mode', 'reviewer', '--verdicts', 'PASS'].map((w) => JSON.stringify(w)).join(' '))} }]
`), '--json']);
    assert.equal(r.exitCode, 1, `${r.stdout}\n${r.stderr}`);
    const plan = JSON.parse(r.stdout) as { status: string; tasks: Array<{ id: string; state: string; why: string | null }> };
    const by = new Map(plan.tasks.map((t) => [t.id, t]));
    assert.equal(by.get('bad')!.state, 'failed');
    assert.match(by.get('bad')!.why!, /did not pass/);
    assert.equal(by.get('after')!.state, 'blocked');
    assert.equal(by.get('after')!.why, 'needs bad, which failed');
    assert.equal(by.get('alone')!.state, 'landed');
    // The failed task keeps its branch and worktree for a person to look at.
    assert.ok(git('worktree', 'list', '--porcelain').includes(path.join('.mam', 'worktrees')), 'the failed task keeps its worktree');
  });

  it('a bad plan (a cycle, an unknown need, a duplicate ID, a bad agent) → exit 64, an unknown session → exit 5; one line, nothing created', async () => {
    f = fixture();
    const cases: Array<[string, RegExp]> = [
      ['tasks:\n  - { id: a, task: A, needs: [b], creator: claude, reviewers: [codex] }\n  - { id: b, task: B, needs: [a], creator: claude, reviewers: [codex] }\n', /cycle: a → b → a|cycle: b → a → b/],
      ['tasks:\n  - { id: a, task: A, needs: [nope], creator: claude, reviewers: [codex] }\n', /unknown task 'nope'/],
      ['tasks:\n  - { id: a, task: A, creator: claude, reviewers: [codex] }\n  - { id: a, task: B, creator: claude, reviewers: [codex] }\n', /duplicate|twice|more than once/],
      ['tasks:\n  - { id: a, task: A, creator: { agent: shel }, reviewers: [codex] }\n', /agent|shel/],
      // Valid, but it cannot start here: exit 5.
      ['tasks:\n  - { id: a, task: A, creator: claude, reviewers: [nobody-here] }\n', /no session 'nobody-here'/],
    ];
    for (const [body, message] of cases) {
      const r = await f.run(['plan', 'run', planFile(`title: Bad\n${body}`)]);
      assert.equal(r.exitCode, /nobody-here/.test(body) ? 5 : 64, `${body}\n${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.ok(!fs.existsSync(path.join(f.workspace, '.mam', 'plans')), 'no plan stored');
      assert.ok(!fs.existsSync(path.join(f.workspace, '.mam', 'worktrees')), 'no worktree made');
      assert.deepEqual(JSON.parse((await f.run(['session', 'list', '--json'])).stdout), []);
    }
  });

  it('a budget crossed (tokens, or an estimated cost) ends the task as budget_exceeded, keeping its branch and worktree; what needs it is blocked', async () => {
    f = fixture();
    const r = await f.run(['plan', 'run', planFile(`title: Tight
defaults: { creator: claude, reviewers: [codex], max_loop: 2 }
tasks:
  - id: big
    task: Spends more than it may
    budget: { tokens: 1 }
  - id: next
    task: Needs it
    needs: [big]
  - id: dear
    task: Costs more than it may (claude's price is known)
    budget: { cost_usd: 0.000001 }
`), '--json']);
    assert.equal(r.exitCode, 1, `${r.stdout}\n${r.stderr}`);
    const plan = JSON.parse(r.stdout) as { tasks: Array<{ id: string; state: string; why: string | null; tokens: number; branch: string | null }> };
    const big = plan.tasks.find((t) => t.id === 'big')!;
    assert.equal(big.state, 'budget_exceeded', JSON.stringify(big));
    assert.match(big.why!, /^spent \d+ tokens, over the budget of 1$/);
    assert.ok(big.tokens > 1);
    assert.equal(plan.tasks.find((t) => t.id === 'next')!.state, 'blocked');
    assert.ok(git('branch', '--list', big.branch!).length > 0, 'its branch is kept');
    const dear = plan.tasks.find((t) => t.id === 'dear')!;
    assert.equal(dear.state, 'budget_exceeded', JSON.stringify(dear));
    assert.match(dear.why!, /^spent an estimated \$[\d.e-]+, over the budget of \$0\.0000010$/);
  });

  it('plan draft: a planner answer with a problem goes back once with it; the corrected plan is written, valid, and never over an existing file', async () => {
    f = fixture();
    await f.agent('planner-1', 'drafter', ['--bad-first']);
    const out = path.join(f.workspace, 'drafted.yaml');
    const r = await f.run(['plan', 'draft', '--goal', 'Email validation for signup', '--planner', 'planner-1', '--out', out, '--json']);
    assert.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
    const result = JSON.parse(r.stdout) as { file: string; jobs: string[]; tasks: number };
    assert.deepEqual([result.file, result.jobs.length, result.tasks], [out, 2, 2]);
    // The second brief named the first answer's problem, with its place.
    const second = (JSON.parse((await f.run(['job', 'status', result.jobs[1]!, '--json'])).stdout) as { job: { brief: string } }).job;
    assert.match(fs.readFileSync(second.brief, 'utf8'), /drafted\.yaml:\d+:\d+: tasks\[1\]\.needs\[0\]: unknown task 'valdate'/);
    assert.match(fs.readFileSync(out, 'utf8'), /needs: \[validate\]/);
    // An existing file is never overwritten: refused before any job.
    const again = await f.run(['plan', 'draft', '--goal', 'Again', '--planner', 'planner-1', '--out', out]);
    assert.equal(again.exitCode, 64);
    assert.match(again.stderr, /exists; name another file with --out/);
  });

  it('two ready tasks naming the same file do not run at once: the later waits for the earlier, and says so; a third runs beside them', async () => {
    f = fixture();
    const file = planFile(`title: Same file
max_parallel: 3
defaults: { creator: claude, reviewers: [codex], max_loop: 1 }
tasks:
  - id: first
    task: Change feature.txt one way
  - id: second
    task: Change feature.txt another way
  - id: other
    task: Something else entirely
`);
    const child = execa(process.execPath, [CLI, 'plan', 'run', file, '--json'], { cwd: f.workspace, env: f.env, reject: false });
    const plansDir = path.join(f.workspace, '.mam', 'plans');
    const state = (): PlanState | undefined => {
      const id = fs.existsSync(plansDir) ? fs.readdirSync(plansDir)[0] : undefined;
      const at = id ? path.join(plansDir, id, 'state.json') : undefined;
      return at && fs.existsSync(at) ? (JSON.parse(fs.readFileSync(at, 'utf8')) as PlanState) : undefined;
    };
    // While the first runs, the second is pending and waits for it, naming the file.
    await until(() => state()?.tasks.find((t) => t.id === 'second')?.waits_for.join() === 'first (both name feature.txt)', 60_000, 'second to wait for first');
    const r = await child;
    assert.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
    const end = state()!;
    const by = new Map(end.tasks.map((t) => [t.id, t]));
    assert.ok(by.get('second')!.started_at! >= by.get('first')!.ended_at!, 'second started once first had landed');
    assert.ok(by.get('other')!.started_at! < by.get('first')!.ended_at!, 'other ran beside first');
    assert.deepEqual(end.tasks.map((t) => [t.id, t.state, t.waits_for.length]), [['first', 'landed', 0], ['second', 'landed', 0], ['other', 'landed', 0]]);
  });
});
