import * as fs from 'node:fs';
import * as path from 'node:path';
import { ExitCode, MamError, UsageError } from '../base/errors';
import { nameProblem } from '../base/ids';
import { sourceOf } from '../config/settings';
import type { JobEngine } from '../jobs/jobEngine';
import { isTerminal } from '../store/jobSchema';
import type { LoopOptions } from './loopState';
import { resolveReportsDir } from './reports';
import { isGitCheckout, resolveCommit } from './snapshot';

/** What `mam loop` asks for, as given; `loopOptionsOf` checks it and turns it into a loop's options. */
export interface LoopRequest {
  task: string;
  creator: string;
  planner?: string;
  planTalk?: number;
  /** Named reviewers; with neither this nor allReviewers, the creator reviews its own work. */
  reviewers?: string[];
  allReviewers?: boolean;
  maxLoop?: number;
  maxRebut?: number;
  reviewOnly?: boolean;
  /** Review this checkout instead of the workspace (relative to baseDir). */
  worktree?: string;
  base?: string;
  /** Where passing reports go (relative to baseDir, inside the workspace); default: the reportsDir setting. */
  reportsDir?: string;
  baseDir: string;
}

/** The loop could not start (another loop holds the checkout, a session is busy or missing): exit 5. */
export class LoopNotStartedError extends MamError {
  constructor(message: string) {
    super(message, 'loop_not_started', ExitCode.notDelivered);
  }
}

/** `human:NAME`: a person in the loop (a reviewer or a planner), who reports from VS Code or a terminal. */
export function isPerson(name: string): boolean {
  return name.startsWith('human:');
}

/** Checks a request (flags, names, the checkout and its base) and resolves it into the loop's options. */
export async function loopOptionsOf(engine: JobEngine, req: LoopRequest): Promise<LoopOptions> {
  const cp = engine.deps.controlPlane;
  const config = engine.deps.config;
  const reportsDir = req.reportsDir !== undefined
    ? resolveReportsDir(cp.workspace, req.reportsDir, req.baseDir, '--reports-dir')
    : resolveReportsDir(cp.workspace, config.values.reportsDir, cp.workspace, sourceOf(config, 'reportsDir'));
  if (!req.task.trim()) throw new UsageError('--task is empty');
  for (const [flag, n, min] of [['--max-loop', req.maxLoop, 1], ['--max-rebut', req.maxRebut, 0], ['--plan-talk', req.planTalk, 0]] as const) {
    if (n !== undefined && !(Number.isInteger(n) && n >= min)) throw new UsageError(`${flag} must be a whole number ≥ ${min}`);
  }
  if (req.planTalk !== undefined && !req.planner) throw new UsageError('--plan-talk goes with --planner');
  if (req.reviewers?.length && req.allReviewers) throw new UsageError('give either --reviewer or --all-reviewer, not both');
  const checkout = fs.realpathSync(path.resolve(req.baseDir, req.worktree ?? cp.workspace));
  if (!(await isGitCheckout(checkout))) throw new UsageError(`${checkout} is not a git checkout`);
  const base = await resolveCommit(checkout, req.base ?? 'HEAD');
  const sessions = await cp.sessions.list();
  const named = [req.creator, ...(req.planner ? [req.planner] : []), ...(req.reviewers ?? [])];
  for (const name of named) {
    // A reviewer (or planner) may be a person, `human:NAME`; the creator is an agent's session.
    const person = isPerson(name) && name !== req.creator;
    const problem = nameProblem(person ? name.slice('human:'.length) : name, person ? "person's name" : 'session name');
    if (problem) throw new UsageError(problem);
    if (!person && !sessions.some((s) => s.name === name)) throw new UsageError(`unknown session '${name}'`);
  }
  let reviewers = req.reviewers?.length ? [...new Set(req.reviewers)] : [];
  if (req.allReviewers) {
    reviewers = sessions.filter((s) => s.role === 'reviewer' && s.status === 'running' && s.name !== req.creator).map((s) => s.name);
    if (reviewers.length === 0) throw new UsageError('--all-reviewer: no running reviewer session other than the creator');
  }
  if (reviewers.length === 0) reviewers = [req.creator];
  return {
    task: req.task, creator: req.creator, planner: req.planner ?? null, plan_talk: req.planTalk ?? (req.planner ? 1 : 0), reviewers,
    max_loop: req.maxLoop ?? 3, max_rebut: req.maxRebut ?? 2, review_only: Boolean(req.reviewOnly), checkout, base, reports_dir: reportsDir,
  };
}

/** A new loop starts only when all its sessions run and none is busy with another job. */
export async function checkSessionsFree(engine: JobEngine, options: Pick<LoopOptions, 'creator' | 'planner' | 'reviewers'>): Promise<void> {
  const cp = engine.deps.controlPlane;
  const sessions = await cp.sessions.list();
  for (const name of new Set([options.creator, ...(options.planner ? [options.planner] : []), ...options.reviewers])) {
    if (isPerson(name)) continue; // a person takes their turn when it comes
    const row = sessions.find((s) => s.name === name)!;
    if (row.status !== 'running') throw new LoopNotStartedError(`session '${name}' is ${row.status}; resume it first`);
    const holder = row.current_job ? cp.jobs.get(row.current_job) : undefined;
    if (holder && !isTerminal(holder.state)) throw new LoopNotStartedError(`session '${name}' is busy with job ${holder.id}`);
  }
}
