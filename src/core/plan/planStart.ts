import * as fs from 'node:fs';
import * as path from 'node:path';
import { dateOn } from '../base/clock';
import { ExitCode, MamError, UsageError, errorMessage } from '../base/errors';
import { printable } from '../base/ids';
import type { JobEngine } from '../jobs/jobEngine';
import { cancelLoop } from '../loop/loopCancel';
import { LoopStore } from '../loop/loopState';
import { branchTip, worktrees } from '../merge/repo';
import { parsePlan, type Assignee, type Plan } from './planFile';
import { PlanStore, newPlanId, newTaskState, type PlanState } from './planState';

/** The plan is valid but cannot start here: a session it names is missing, or the target branch (exit 5). */
export class PlanNotStartedError extends MamError {
  constructor(message: string) {
    super(message, 'plan_not_started', ExitCode.notDelivered);
  }
}

/** A plan as `mam plan run FILE` starts it: read, checked against the workspace, stored; nothing is created before every check passed. */
export async function startPlan(engine: JobEngine, file: string, options: { baseDir: string; maxParallel?: number }): Promise<PlanState> {
  const { controlPlane } = engine.deps;
  const where = path.resolve(options.baseDir, file);
  let source: string;
  try {
    source = fs.readFileSync(where, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the plan ${printable(where, 200)}: ${errorMessage(err)}`);
  }
  const plan = parsePlan(source, path.basename(where));
  if (options.maxParallel !== undefined && !(Number.isInteger(options.maxParallel) && options.maxParallel >= 1 && options.maxParallel <= 16)) {
    throw new UsageError('--max-parallel must be a whole number from 1 to 16');
  }
  await checkSessions(engine, plan);
  const into = plan.into ?? (await primaryBranch(controlPlane.workspace));
  if (!(await branchTip(controlPlane.workspace, into))) throw new PlanNotStartedError(`${path.basename(where)}: into: no branch '${printable(into, 100)}' in the repository at ${controlPlane.workspace}`);
  const store = new PlanStore(controlPlane.paths, engine.clock);
  const now = store.now();
  return store.create({
    id: newPlanId(dateOn(engine.clock)), title: plan.title, source, into, status: 'running', reason: null, owner: null,
    max_parallel: options.maxParallel ?? plan.max_parallel, tokens: 0, cost_usd: null, created_at: now, updated_at: now,
    tasks: plan.tasks.map((t) => newTaskState(t.id)),
  });
}

/** Every session a plan names by name is registered here (agents and people need nothing yet). */
async function checkSessions(engine: JobEngine, plan: Plan): Promise<void> {
  const known = new Set((await engine.deps.controlPlane.sessions.list()).map((r) => r.name));
  for (const task of plan.tasks) {
    const named: Assignee[] = [task.creator, ...task.reviewers, ...(task.planner ? [task.planner] : [])];
    for (const who of named) {
      if (who.kind === 'session' && !known.has(who.name)) throw new PlanNotStartedError(`task ${task.id}: no session '${printable(who.name, 64)}' in this workspace (name an agent such as claude, a running session, human:NAME or { agent: shell, command: … })`);
    }
  }
}

async function primaryBranch(repo: string): Promise<string> {
  const primary = (await worktrees(repo))[0];
  if (!primary?.branch?.startsWith('refs/heads/')) throw new UsageError('the primary worktree has no branch checked out; name the target with into: BRANCH');
  return primary.branch.slice('refs/heads/'.length);
}

/**
 * `mam plan cancel ID`: nothing more is started; the running tasks' loops are cancelled (their
 * open jobs with them); branches and worktrees stay. A runner that is alive sees it and stops.
 */
export async function cancelPlan(engine: JobEngine, id: string): Promise<{ plan: PlanState; changed: boolean }> {
  const store = new PlanStore(engine.deps.controlPlane.paths, engine.clock);
  const loops: string[] = [];
  const result = await store.update(id, (p) => {
    if (p.status !== 'running') return { plan: structuredClone(p), changed: false };
    p.status = 'cancelled';
    p.reason = 'cancelled';
    for (const t of p.tasks.filter((x) => x.state === 'running' || x.state === 'pending')) {
      if (t.state === 'running' && t.loop_id) loops.push(t.loop_id);
      t.state = 'cancelled';
      t.why = 'the plan was cancelled';
      t.ended_at = store.now();
    }
    return { plan: structuredClone(p), changed: true };
  });
  const loopStore = new LoopStore(engine.deps.controlPlane.paths, engine.clock);
  for (const loop of loops) await cancelLoop(engine, loopStore, loop).catch(() => undefined);
  return result;
}
