import * as fs from 'node:fs';
import * as path from 'node:path';
import { ExitCode, MamError } from '../base/errors';
import { exec } from '../base/exec';
import { silentLogger, type Logger } from '../base/log';
import { newJobId } from '../base/ids';
import { cancelJob } from '../jobs/jobActions';
import type { JobEngine } from '../jobs/jobEngine';
import { isTerminal, type JobState } from '../store/jobSchema';
import { submitJob } from '../jobs/submit';
import { LoopRunner } from '../loop/loopRunner';
import type { LoopState } from '../loop/loopState';
import { describeEndpoint } from '../messaging/brokerRecord';
import { whichProgram } from '../base/process';
import type { SessionService } from '../sessions/sessionService';
import type { SessionRole } from '../store/sessionSchema';
import { LOOP_TASK, WORKER_TASK, type DemoPace, type DemoRole } from './demoProject';
import { createDemoRepo, demoCommits, type DemoCommit } from './demoRepo';
import { DemoNarrator } from './narration';

export interface DemoOptions {
  /** The jobs engine of the workspace whose control plane the demo uses. */
  engine: JobEngine;
  sessions: SessionService;
  /** The folder holding demo-agent.js and cli.js (the extension's or the CLI's dist/). */
  distDir: string;
  /** Where the demo repository is created: a folder that does not exist yet, or is empty. */
  repoDir: string;
  pace?: DemoPace;
  /** The running commentary, one line at a time. */
  onLine?: (line: string) => void;
  /** Every message of the demo's review loop, as LoopRunner.onDidProgress gives it (for views that follow loops). */
  onLoopProgress?: (e: { loop: LoopState; message: string }) => void;
  /** The multiplexer and server of the demo sessions; default tmux, on the workspace's own server. */
  mux?: 'tmux' | 'herdr';
  server?: string;
  /** Where `node` is looked for (PATH); default this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Aborting cancels the demo's open jobs; runDemo then rejects with DemoCancelledError. */
  signal?: AbortSignal;
  logger?: Logger;
}

export interface DemoSession {
  role: DemoRole;
  name: string;
  mux: 'tmux' | 'herdr';
  server: string;
  pane: string | null;
  /** The command that attaches a terminal to the agent's pane (an argument list). */
  attach: string[];
}

export interface DemoSummary {
  passed: boolean;
  workspace: string;
  repoDir: string;
  /** The Node.js the demo agents run on. */
  node: string;
  sessions: DemoSession[];
  job: { id: string; session: string; state: JobState; reason: string | null; detail: string | null };
  loop: {
    id: string;
    status: LoopState['status'];
    exitCode: number | null;
    reason: string | null;
    rounds: Array<{ n: number; status: string; verdicts: Array<{ reviewer: string; verdict: string; job: string }> }>;
  };
  commits: DemoCommit[];
  reportsDir: string;
  /** Promoted reports, each followed by its identity sidecar. */
  reports: string[];
  durationMs: number;
}

/** The demo cannot run here (no Node.js for its agents, no build). Exit 1, nothing started. */
export class DemoUnavailableError extends MamError {
  constructor(message: string) {
    super(message, 'demo_unavailable', ExitCode.failed);
  }
}

const ROLE_OF: Record<DemoRole, { base: string; sessionRole: SessionRole }> = {
  worker: { base: 'demo-worker', sessionRole: 'worker' },
  creator: { base: 'demo-creator', sessionRole: 'creator' },
  'reviewer-strict': { base: 'demo-reviewer-a', sessionRole: 'reviewer' },
  'reviewer-easy': { base: 'demo-reviewer-b', sessionRole: 'reviewer' },
};

/**
 * `mam demo` and "MAM: Run Demo": a team of four built-in demo agents in a new git repository —
 * one delegated job (the worker surveys the project), then a full review loop (the creator adds
 * validate(email); the strict reviewer finds that an empty address is not rejected; the creator
 * fixes it; both reviewers pass). Narrates as it goes and resolves with where everything is.
 * The sessions stay running: stopping them (or not) is the caller's choice.
 */
export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const began = Date.now();
  const { engine, sessions } = options;
  const cp = engine.deps.controlPlane;
  const pace = options.pace ?? 'normal';
  const say = options.onLine ?? (() => undefined);
  const agentScript = path.join(options.distDir, 'demo-agent.js');
  if (!fs.existsSync(agentScript)) throw new DemoUnavailableError(`${agentScript} is missing; build MAM first (npm run build)`);
  const node = await findNode(options.env ?? process.env);

  const repo = await createDemoRepo(options.repoDir);
  const names = demoSessionNames(new Set((await cp.sessions.list()).map((row) => row.name)));
  const narrator = new DemoNarrator(engine, new Set(Object.values(names)), say);
  narrator.note(`repository ${repo.dir} (first commit ${repo.commit.slice(0, 7)})`);
  // Aborting cancels whatever the demo has open now, and anything it would still submit.
  const cancelOpen = (): void => {
    for (const job of cp.jobs.list().jobs) if (Object.values(names).includes(job.target?.name ?? job.session) && !isTerminal(job.state)) void cancelJob(engine, job.id).catch(() => undefined);
  };
  const cancelSub = engine.ledger.onDidChangeJob(() => options.signal?.aborted && cancelOpen());
  options.signal?.addEventListener('abort', cancelOpen);
  const runner = new LoopRunner(engine, options.logger ?? silentLogger);
  try {
    await engine.connect();
    if (engine.endpoint) narrator.note(`broker ${describeEndpoint(engine.endpoint)}`);

    throwIfAborted(options.signal);
    const team: DemoSession[] = [];
    for (const role of Object.keys(ROLE_OF) as DemoRole[]) {
      const row = await sessions.create({
        name: names[role], agent: 'shell', role: ROLE_OF[role].sessionRole, cwd: repo.dir, baseDir: repo.dir, mux: options.mux ?? 'tmux',
        ...(options.server ? { server: options.server } : {}), command: [node, agentScript, '--role', role, '--pace', pace],
      });
      const attach = row.target ? sessions.muxOf(row).attachArgv(row.target) : [];
      team.push({ role, name: row.name, mux: row.mux, server: row.server, pane: row.target, attach });
      narrator.note(`session ${row.name} (${role}) started; watch it: ${attach.join(' ')}`);
    }

    narrator.heading('Part 1: a delegated job');
    const jobId = newJobId();
    narrator.label(jobId, 'survey');
    const job = (await submitJob(engine, { session: names.worker, prompt: WORKER_TASK, role: 'worker', wait: true, baseDir: repo.dir, jobId })).job;
    throwIfAborted(options.signal);

    narrator.heading('Part 2: the review loop (implement, review, fix, review again)');
    const sub = runner.onDidProgress((e) => {
      narrator.loopProgress(e.loop, e.message);
      options.onLoopProgress?.(e);
    });
    let loop: LoopState;
    try {
      loop = await runner.start({ task: LOOP_TASK, creator: names.creator, reviewers: [names['reviewer-strict'], names['reviewer-easy']], worktree: repo.dir, baseDir: repo.dir, maxLoop: 3 });
    } finally {
      sub.dispose();
    }
    throwIfAborted(options.signal);

    const reviews = loop.rounds.at(-1)?.status === 'passed' ? loop.rounds.at(-1)!.reviews : [];
    const reports = reviews.flatMap((r) => (r.report ? [r.report, r.report.replace(/\.md$/, '.identity.json')] : []));
    return {
      passed: job.state === 'completed' && loop.status === 'passed',
      workspace: cp.workspace,
      repoDir: repo.dir,
      node,
      sessions: team,
      job: { id: job.id, session: job.session, state: job.state, reason: job.reason, detail: job.detail },
      loop: {
        id: loop.id, status: loop.status, exitCode: loop.exit_code, reason: loop.reason,
        rounds: loop.rounds.map((r) => ({ n: r.n, status: r.status, verdicts: r.reviews.map((v) => ({ reviewer: v.reviewer, verdict: v.verdict ?? 'NOT PASS', job: v.job_id })) })),
      },
      commits: await demoCommits(repo.dir),
      reportsDir: loop.reports_dir ?? cp.paths.reportsDir,
      reports,
      durationMs: Date.now() - began,
    };
  } finally {
    options.signal?.removeEventListener('abort', cancelOpen);
    cancelSub.dispose();
    runner.dispose();
    narrator.dispose();
  }
}

/** The caller aborted the demo; its sessions stay for the caller to stop. */
export class DemoCancelledError extends MamError {
  constructor() {
    super('the demo was cancelled', 'demo_cancelled', ExitCode.failed);
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new DemoCancelledError();
}

/**
 * The Node.js for the demo agents: `node` on PATH, as the briefs' event commands also use. Not
 * process.execPath, which inside VS Code is the editor's Electron binary; a plain Node process
 * (the CLI) is a fallback when PATH has none.
 */
export async function findNode(env: NodeJS.ProcessEnv): Promise<string> {
  const candidate = whichProgram('node', env.PATH ?? '');
  if (candidate) {
    const version = (await exec(candidate, ['--version'], { timeoutMs: 10_000 }).catch(() => undefined))?.stdout.trim() ?? '';
    const major = Number(/^v(\d+)\./.exec(version)?.[1] ?? 0);
    if (major >= 20) return candidate;
    throw new DemoUnavailableError(`the demo agents need Node.js 20 or newer; the node on PATH (${candidate}) is ${version || 'not runnable'}`);
  }
  if (!process.versions.electron) return process.execPath;
  throw new DemoUnavailableError('the demo agents run on Node.js, and there is no node on PATH; install Node.js 20 or newer, or start VS Code from a shell where `node` works');
}

/** demo-worker, demo-creator, …; if any is taken, all four get the first suffix (-2, -3 …) that frees them all. */
export function demoSessionNames(taken: ReadonlySet<string>): Record<DemoRole, string> {
  const roles = Object.keys(ROLE_OF) as DemoRole[];
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? '' : `-${n}`;
    if (roles.every((r) => !taken.has(`${ROLE_OF[r].base}${suffix}`))) {
      return Object.fromEntries(roles.map((r) => [r, `${ROLE_OF[r].base}${suffix}`])) as Record<DemoRole, string>;
    }
  }
}
