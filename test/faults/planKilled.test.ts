/**
 * `mam plan run` SIGKILLed at four points of a task's life — creating its sessions, looping,
 * queued for the merge queue, landing — then `mam plan resume`: every task lands, nothing lands
 * twice, no agent is asked twice. The two-task plan (the second needs the first) makes the resumed
 * run also start what was still pending. Each kill waits, bounded, on what the state files show.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { isAlive } from '../../src/core/base/process';
import { LoopStore } from '../../src/core/loop/loopState';
import { MergeQueueStore } from '../../src/core/merge/mergeQueue';
import { PlanStore, type PlanState } from '../../src/core/plan/planState';
import { acquire } from '../../src/core/store/lock';
import { CLI, FAKE_AGENT, readAgentLog, readJsonLines, tempDir, until } from '../support/helpers';
import { GIT_ENV, JOB_ID, loopFixture, type JobFixture } from '../support/jobs';

describe('faults: a plan runner killed midway, then resumed', function () {
  this.timeout(240_000);
  let f: JobFixture;
  let logs: string;
  let target: string;
  let before: string;
  const held: Array<() => void> = [];

  /** claude: a scripted creator (each task's work in a file named after its worktree); codex: a reviewer that passes. */
  function fixture(creatorExtra: string[] = []): void {
    logs = tempDir('plan-agents');
    const agent = (as: string, ...extra: string[]) => [process.execPath, FAKE_AGENT, '--as', as, '--log', path.join(logs, `${as}.log`), ...extra].map((w) => JSON.stringify(w)).join(' ');
    f = loopFixture({
      MAM_AGENT_COMMAND_CLAUDE: agent('claude', '--mode', 'creator', '--file', '@cwd', ...creatorExtra),
      MAM_AGENT_COMMAND_CODEX: agent('codex', '--mode', 'reviewer', '--verdicts', 'PASS'),
    });
    target = git('rev-parse', '--abbrev-ref', 'HEAD');
    before = git('rev-parse', 'HEAD');
  }

  afterEach(async () => {
    for (const release of held.splice(0)) release();
    await f?.dispose();
  });

  function git(...args: string[]): string {
    return execFileSync('git', args, { cwd: f.workspace, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();
  }

  /** Starts `mam plan run` on the two-task plan (with a validation command, if given) in a process of its own. */
  function runPlan(validate?: string): ResultPromise {
    const file = path.join(f.workspace, 'plan.yaml');
    fs.writeFileSync(file, `title: Two changes, the second on the first
defaults: { creator: claude, reviewers: [codex], max_loop: 2 }
${validate ? `validate: ${JSON.stringify(validate)}\n` : ''}tasks:
  - id: one
    task: Add the first line
  - id: two
    task: Add the second line, on the first
    needs: [one]
`);
    return execa(process.execPath, [CLI, 'plan', 'run', file, '--json'], { cwd: f.workspace, env: f.env, reject: false });
  }

  const plans = () => new PlanStore(f.controlPlane.paths);
  /** The plan the runner stored (the only one), once it exists. */
  const plan = (): PlanState | undefined => plans().listing().plans[0];
  const task = (id: string) => plan()?.tasks.find((t) => t.id === id);
  const queue = () => new MergeQueueStore(f.controlPlane.paths).read();
  const session = async (name: string) => f.controlPlane.sessions.get(name);

  /** Takes one of the workspace's locks, as another process busy with it would hold it; released by the test or afterwards. */
  async function holdLock(name: string): Promise<() => void> {
    const release = await acquire(f.controlPlane.paths.lock(name), { timeoutMs: 0 });
    held.push(release);
    return release;
  }

  /** Waits, bounded, until the run shows `point`, then SIGKILLs it; the run must not have ended on its own. */
  async function killWhen(run: ResultPromise, point: () => boolean | Promise<boolean>, what: string): Promise<PlanState> {
    try {
      await until(async () => {
        if (run.exitCode !== null && run.exitCode !== undefined) {
          const r = await run;
          throw new Error(`the run ended (${run.exitCode}) before ${what}:\n${String(r.stdout)}\n${String(r.stderr)}`);
        }
        return point();
      }, 90_000, what);
    } finally {
      run.kill('SIGKILL');
      await run;
    }
    const killed = plan()!;
    assert.equal(killed.status, 'running', 'killed, the plan is unfinished');
    assert.ok(killed.owner && !isAlive(killed.owner.pid), 'its owner is gone');
    return killed;
  }

  /** `mam plan resume` finishes it: every task landed once, in order, and every agent asked each thing once. */
  async function resumeAndCheck(id: string): Promise<PlanState> {
    // Bounded more loosely than `f.run`'s 60 s: two tasks' worth of agents on a busy machine.
    const r = await execa(process.execPath, [CLI, 'plan', 'resume', id, '--json'], { cwd: f.workspace, env: f.env, reject: false, timeout: 180_000 });
    assert.equal(r.exitCode, 0, `${String(r.stdout)}\n${String(r.stderr)}`);
    const done = plans().require(id);
    assert.deepEqual(done.tasks.map((t) => [t.id, t.state]), [['one', 'landed'], ['two', 'landed']], JSON.stringify(done.tasks));
    assert.equal(done.status, 'landed');

    // Nothing landed twice: two commits on the target, one per task, in order, each the only one touching its file.
    const short = id.slice(-6);
    const landed = done.tasks.map((t) => t.landed_commit!);
    assert.deepEqual(git('rev-list', '--reverse', `${before}..${target}`).split('\n'), landed);
    for (const t of done.tasks) assert.deepEqual(git('rev-list', target, '--', `${short}-${t.id}.txt`).split('\n'), [t.landed_commit], `${t.id}'s work is on ${target} once`);
    // The merge queue: one entry per task, each landed at its task's commit.
    assert.deepEqual(queue().map((e) => [e.branch, e.state, e.landed_commit]), done.tasks.map((t) => [t.branch, 'landed', t.landed_commit]));

    // No agent asked twice: each job taken once, each job line typed once…
    const entries = ['claude', 'codex'].flatMap((as) => readAgentLog(path.join(logs, `${as}.log`)));
    const taken = entries.filter((e) => e.event === 'job').map((e) => String(e.job));
    assert.equal(new Set(taken).size, taken.length, `a job was taken twice: ${taken.join(' ')}`);
    const typed = entries.filter((e) => e.event === 'line' && JOB_ID.test(String(e.text))).map((e) => JOB_ID.exec(String(e.text))![0]);
    assert.deepEqual([...typed].sort(), [...taken].sort(), 'each job line typed once, and every one taken');
    // …and one loop per task, whose steps are exactly the jobs its agents were given (a job the
    // killed run registered but never delivered is cancelled as abandoned, never typed).
    const loops = new LoopStore(f.controlPlane.paths).list();
    const stepJobs: string[] = [];
    for (const t of done.tasks) {
      const mine = loops.filter((l) => l.checkout === t.worktree);
      assert.deepEqual(mine.map((l) => [l.id, l.status]), [[t.loop_id, 'passed']], `one loop for ${t.id}`);
      const steps = mine[0]!.steps.map((s) => s.job_id);
      const jobs = f.controlPlane.jobs.list().jobs.filter((j) => j.origin?.kind === 'loop' && j.origin.by === t.loop_id);
      const delivered = jobs.filter((j) => !(j.state === 'cancelled' && j.reason === 'abandoned'));
      assert.deepEqual(delivered.map((j) => j.id).sort(), [...steps].sort(), `${t.id}: the jobs its loop gave are its steps`);
      assert.ok(delivered.every((j) => j.state === 'completed'), JSON.stringify(delivered.map((j) => [j.id, j.state, j.reason])));
      stepJobs.push(...steps);
    }
    assert.deepEqual([...taken].sort(), stepJobs.sort(), 'the agents were given the loops\' steps and nothing else');

    // The sessions the plan created are stopped, and they are all there is.
    const created = done.tasks.flatMap((t) => t.created_sessions).sort();
    assert.equal(created.length, 4, created.join(' '));
    const rows = await f.controlPlane.sessions.list();
    assert.deepEqual(rows.map((s) => [s.name, s.status]).sort(), created.map((n) => [n, 'stopped']));
    return done;
  }

  it('killed while creating a task\'s sessions (its creator made, its reviewer waiting to be placed): resume reuses the one and makes the other', async () => {
    // The creator takes 1.5 s to show its ready sign: time to take the placement lock before the reviewer is placed.
    fixture(['--ready-delay', '1500']);
    const run = runPlan();
    await until(() => task('one')?.step === 'sessions', 60_000, 'task one to reach its sessions');
    const short = plan()!.id.slice(-6);
    await until(async () => (await session(`${short}-one-c`))?.status === 'running', 60_000, 'the creator to be placed');
    const placing = await holdLock(`place-tmux-${f.server}`);
    const killed = await killWhen(run, async () => (await session(`${short}-one-r1`))?.status === 'starting', 'the reviewer to wait for its pane');
    const one = killed.tasks.find((t) => t.id === 'one')!;
    assert.deepEqual([one.state, one.step, one.created_sessions], ['running', 'sessions', [`${short}-one-c`]]);
    assert.equal((await session(`${short}-one-r1`))!.target, null, 'the reviewer has no pane yet');
    placing();
    await resumeAndCheck(killed.id);
  });

  it('killed while looping (the creator at work): resume waits for that job, asks nobody again', async () => {
    fixture(['--work-ms', '2000']);
    const run = runPlan();
    const implementJob = () => new LoopStore(f.controlPlane.paths).list().flatMap((l) => l.steps).find((s) => s.key === 'implement')?.job_id;
    const killed = await killWhen(run, () => f.controlPlane.jobs.get(implementJob() ?? 'j-none')?.state === 'started', 'the creator of task one to start');
    assert.deepEqual([killed.tasks[0]!.step, killed.tasks[1]!.state], ['loop', 'pending']);
    await resumeAndCheck(killed.id);
  });

  it('killed between enqueueing and landing: resume finds its entry (recorded or not) and lands it once', async () => {
    fixture();
    // Another run holds the merge queue: the entry stays queued until the test lets go.
    const landing = await holdLock('merge-run');
    const run = runPlan();
    const killed = await killWhen(run, () => queue().some((e) => e.branch === task('one')?.branch && e.state === 'queued'), 'task one to be queued');
    assert.equal(killed.tasks[0]!.step, 'queue');
    // What a kill a moment earlier leaves: the entry in the queue, not yet in the plan's state.
    await plans().update(killed.id, (p) => void (p.tasks[0]!.merge_entry = null));
    landing();
    await resumeAndCheck(killed.id);
  });

  it('killed while landing (the validation running): resume lands it once, the validation run again', async () => {
    fixture();
    const dir = tempDir('hold');
    const ran = path.join(dir, 'ran.log');
    const release = path.join(dir, 'release');
    const script = path.join(dir, 'validate.js');
    // Records each run; holds until `release` exists.
    fs.writeFileSync(script, `const fs = require('node:fs');
fs.appendFileSync(process.argv[2], JSON.stringify({ pid: process.pid, cwd: process.cwd() }) + '\\n');
const t = setInterval(() => { if (fs.existsSync(process.argv[3])) { clearInterval(t); console.log('green'); } }, 20);
`);
    const ranLines = () => readJsonLines<{ pid: number }>(ran);
    const run = runPlan([process.execPath, script, ran, release].map((w) => JSON.stringify(w)).join(' '));
    const killed = await killWhen(run, () => ranLines().length === 1, 'the validation of task one to run');
    const entry = queue()[0]!;
    assert.deepEqual([entry.branch, entry.state, entry.step], [killed.tasks[0]!.branch, 'running', 'validating']);
    assert.equal(git('rev-parse', target), before, 'nothing landed yet');
    fs.writeFileSync(release, '');
    const orphan = ranLines()[0]!.pid;
    await until(() => !isAlive(orphan), 20_000, "the killed run's validation to exit");
    await resumeAndCheck(killed.id);
    assert.equal(ranLines().length, 3, 'validated again after the kill, then the second task');
  });
});
