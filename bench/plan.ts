/**
 * A plan of eight independent tasks whose scripted creator works 5 s on each (reviewers answer at
 * once), run by `mam plan run` with `max_parallel` 1, 2 and 4: the wall time beside the ideal —
 * 8 × 5 s ÷ parallelism, plus one landing (the run's own median merge-queue time of an entry) —
 * and what MAM adds to each task beside its 5 s, step by step, read from the timestamps the run
 * left on disk (the plan's state, the session rows, the loop, the jobs, the merge queue).
 * Run alone: `node -r esbuild-register bench/plan.ts` (after `npm run build`; `BENCH_PLAN_PARALLEL=4` for one).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execa } from 'execa';
import { MemoryLogger } from '../src/core/base/log';
import { LoopStore } from '../src/core/loop/loopState';
import { MergeQueueStore } from '../src/core/merge/mergeQueue';
import { stopEmbeddedBroker } from '../src/core/messaging/embeddedBroker';
import { TmuxBackend } from '../src/core/mux/tmux';
import { PlanStore, type PlanState } from '../src/core/plan/planState';
import { ControlPlane } from '../src/core/store/controlPlane';
import { percentile, renderTable, type Row } from './stats';

const FAKE_AGENT = path.resolve(__dirname, '../test/fixtures/fake-agent.js');
const TASKS = 8;
const WORK_MS = 5000;
const GIT_ENV = { GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.invalid', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.invalid' };

/** Where a task's time went, in ms (median over the run's tasks). */
interface TaskSteps {
  worktree: number;
  sessions: number;
  /** The creator's job: submitted → `started` (ready check, typing, the agent's `mam event started`). */
  dispatch: number;
  /** `started` → `completed` beyond the 5 s the creator sleeps (its commit, its `mam event completed`). */
  work: number;
  /** The loop's review: submitted → completed (an instant reviewer). */
  review: number;
  /** The rest of the loop: its start, the snapshot, the diff for the reviewers, its saves. */
  loop: number;
  /** The loop passed → its landing began: enqueueing, then waiting for the landings before it (one queue). */
  queue: number;
  /** Its own landing (the ideal's): rebase, a review of the rebased tree when it is not the tree reviewed, fast-forward. */
  landing: number;
  /** Landed → the task ended: its two sessions stopped, its worktree removed. */
  cleanup: number;
  /** The task's whole time beyond its 5 s. */
  total: number;
}

export async function benchPlan(root: string, cli: string, parallelism: readonly number[] = [1, 2, 4]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const p of parallelism) {
    const t = performance.now();
    try {
      rows.push(...(await runOnce(root, cli, p)));
    } catch (err) {
      // A failed run is a row of the table, and the other parallelisms still run.
      const message = (err instanceof Error ? err.message : String(err)).split('\n').slice(0, 3).join(' ').slice(0, 300);
      console.error(`bench: plan, max_parallel ${p}: ${err instanceof Error ? err.stack : String(err)}`);
      rows.push({ name: `plan, ${TASKS} tasks of ${WORK_MS / 1000} s, max_parallel ${p}: FAILED after ${((performance.now() - t) / 1000).toFixed(1)} s: ${message.replace(/\|/g, '/')}`, p50: Number.NaN });
    }
  }
  return rows;
}

async function runOnce(root: string, cli: string, p: number): Promise<Row[]> {
  const ws = path.join(root, `ws-plan-${p}`);
  fs.mkdirSync(ws, { recursive: true });
  const server = `mam-bench-plan-${process.pid}-${p}`;
  const agent = (as: string, ...extra: string[]) => [process.execPath, FAKE_AGENT, '--as', as, ...extra].map((w) => JSON.stringify(w)).join(' ');
  const env: NodeJS.ProcessEnv = {
    ...process.env, ...GIT_ENV,
    HOME: path.join(root, 'home'), TMUX_TMPDIR: path.join(root, 'tmux'), MAM_TMUX_SERVER: server,
    // Each task's creator works 5 s in its own file (named after its worktree); reviewers pass at once.
    MAM_AGENT_COMMAND_CLAUDE: agent('claude', '--mode', 'creator', '--file', '@cwd', '--work-ms', String(WORK_MS)),
    MAM_AGENT_COMMAND_CODEX: agent('codex', '--mode', 'reviewer', '--verdicts', 'PASS', '--work-ms', '0'),
  };
  fs.mkdirSync(env.TMUX_TMPDIR!, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, env, encoding: 'utf8' });
  git('init', '-q');
  fs.writeFileSync(path.join(ws, 'README.md'), 'A project\n');
  git('add', '-A');
  git('commit', '-qm', 'initial');
  const file = path.join(root, `plan-${p}.yaml`);
  const tasks = Array.from({ length: TASKS }, (_, i) => `  - id: t${i + 1}\n    task: Change number ${i + 1}, in a file of its own\n`).join('');
  fs.writeFileSync(file, `title: ${TASKS} independent changes\nmax_parallel: ${p}\ndefaults: { creator: claude, reviewers: [codex], max_loop: 1 }\ntasks:\n${tasks}`);
  const controlPlane = new ControlPlane(ws, { logger: new MemoryLogger() });
  try {
    // A workspace in use has its broker running: started before the clock, as the user's would be.
    await execa(process.execPath, [cli, 'broker', 'start'], { cwd: ws, env });
    const t = performance.now();
    const r = await execa(process.execPath, [cli, 'plan', 'run', file, '--json'], { cwd: ws, env, reject: false, timeout: 600_000 });
    const wall = performance.now() - t;
    if (r.exitCode !== 0) throw new Error(`mam plan run exited ${r.exitCode}: ${String(r.stderr).trim().split('\n').at(-1) ?? ''}`);
    const plan = new PlanStore(controlPlane.paths).listing().plans[0]!;
    if (plan.tasks.some((x) => x.state !== 'landed')) throw new Error(`not every task landed: ${plan.tasks.map((x) => `${x.id} ${x.state}`).join(', ')}`);
    const steps = await stepsOf(controlPlane, plan);
    const landing = percentile(steps.map((s) => s.landing), 50);
    const ideal = (TASKS * WORK_MS) / p + landing;
    const median = (k: keyof TaskSteps) => percentile(steps.map((s) => s[k]), 50);
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    return [
      {
        name: `plan: ${TASKS} independent tasks of ${WORK_MS / 1000} s each (scripted agents), max_parallel ${p}: wall time of \`mam plan run\``,
        p50: wall, reference: `ideal ${TASKS} × ${WORK_MS / 1000} s ÷ ${p} + one landing (${s(landing)}) = ${s(ideal)}`, ratio: `${(wall / ideal).toFixed(2)}×`, ...(p === 4 ? { goal: '≤ 1.25×' } : {}),
      },
      {
        name: `plan, max_parallel ${p}: what MAM adds per task beside its ${WORK_MS / 1000} s (median of ${TASKS}): worktree ${s(median('worktree'))}, its 2 sessions ${s(median('sessions'))}, `
          + `creator's dispatch ${s(median('dispatch'))}, its completion ${s(median('work'))}, review ${s(median('review'))}, rest of the loop ${s(median('loop'))}, `
          + `enqueued and waiting for the landings before it ${s(median('queue'))}, its landing (rebase, review of the rebased tree, fast-forward) ${s(median('landing'))}, stopping 2 sessions and removing the worktree ${s(median('cleanup'))}`,
        p50: median('total'), p99: percentile(steps.map((x) => x.total), 99), reference: `the task's ${WORK_MS / 1000} s`, ratio: `+${((100 * median('total')) / WORK_MS).toFixed(0)}%`,
      },
    ];
  } finally {
    await new TmuxBackend({ server, env }).killServer().catch(() => undefined);
    await stopEmbeddedBroker(controlPlane.paths).catch(() => undefined);
  }
}

/** Each task's steps, from the timestamps on disk. */
async function stepsOf(controlPlane: ControlPlane, plan: PlanState): Promise<TaskSteps[]> {
  const loops = new LoopStore(controlPlane.paths);
  const queue = new MergeQueueStore(controlPlane.paths);
  const at = (iso: string | null | undefined, what: string): number => {
    if (!iso) throw new Error(`no time for ${what}`);
    return Date.parse(iso);
  };
  const out: TaskSteps[] = [];
  for (const task of plan.tasks) {
    const what = (w: string) => `${task.id}: ${w}`;
    const creator = await controlPlane.sessions.get(task.created_sessions[0]!);
    const loop = loops.get(task.loop_id!)!;
    const job = (kind: string) => controlPlane.jobs.require(loop.steps.find((x) => x.kind === kind)!.job_id);
    const implement = job('implement');
    const review = job('review');
    const entry = queue.get(task.merge_entry!)!;
    const started = at(task.started_at, what('start'));
    const sessionsAt = at(creator?.created_at, what('creator created'));
    const loopAt = at(loop.created_at, what('loop'));
    const loopEnd = at(loop.updated_at, what('loop end'));
    const dispatch = at(implement.started_at, what('implement started')) - at(implement.created_at, what('implement created'));
    const work = at(implement.finished_at, what('implement finished')) - at(implement.started_at, what('implement started')) - WORK_MS;
    const reviewMs = at(review.finished_at, what('review finished')) - at(review.created_at, what('review created'));
    const landedAt = at(entry.landed_at, what('landed'));
    // The entry's log: `[time] landing <branch> …` marks when the queue took it up.
    const log = fs.readFileSync(controlPlane.paths.mergeLog(entry.id), 'utf8');
    const landingAt = at(/^\[([^\]]+)\] landing /m.exec(log)?.[1], what('landing began'));
    out.push({
      worktree: sessionsAt - started,
      sessions: loopAt - sessionsAt,
      dispatch,
      work,
      review: reviewMs,
      loop: loopEnd - loopAt - dispatch - (work + WORK_MS) - reviewMs,
      queue: landingAt - loopEnd,
      landing: landedAt - landingAt,
      cleanup: at(task.ended_at, what('end')) - landedAt,
      total: at(task.ended_at, what('end')) - started - WORK_MS,
    });
  }
  return out;
}

if (require.main === module) {
  void (async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-bench-plan-'));
    try {
      const rows = await benchPlan(root, path.resolve(__dirname, '../dist/cli.js'), (process.env.BENCH_PLAN_PARALLEL ?? '1,2,4').split(',').map(Number));
      console.log(`Node ${process.versions.node}, ${os.cpus().length} cores\n`);
      console.log(renderTable(rows));
    } finally {
      if (process.env.BENCH_KEEP) console.log(`kept ${root}`);
      else fs.rmSync(root, { recursive: true, force: true, maxRetries: 5 });
    }
  })();
}
