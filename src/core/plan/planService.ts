import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DisposableBase } from '../base/disposable';
import { Emitter } from '../base/emitter';
import type { JobEngine } from '../jobs/jobEngine';
import { draftPlan, type DraftRequest, type DraftResult } from './planDraft';
import { parsePlan, type Plan } from './planFile';
import { cancelPlan, startPlan } from './planStart';
import { PlanStore, type PlanState } from './planState';

/**
 * The plans of one workspace for a long-lived host (the extension): list and read them, start one
 * (checked and stored here, then run by a `mam plan resume` process of its own, so that it
 * outlives the window; its output goes to the plan's run.log), cancel, draft; and hear each
 * change — the runner writes the state file, which the host's watcher passes to `changedOnDisk`.
 */
export class PlanService extends DisposableBase {
  readonly plans: PlanStore;
  private readonly changed = this._register(new Emitter<PlanState>());
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly jobs: JobEngine,
    private readonly cliPath: string,
  ) {
    super();
    this.plans = new PlanStore(jobs.deps.controlPlane.paths, jobs.clock);
  }

  listing(): ReturnType<PlanStore['listing']> {
    return this.plans.listing();
  }

  get(id: string): PlanState | undefined {
    try {
      return this.plans.get(id);
    } catch {
      return undefined;
    }
  }

  /** The plan as it was run (its tasks' needs, assignees, budgets). */
  specOf(state: PlanState): Plan {
    return parsePlan(state.source, `${state.id}/plan.yaml`);
  }

  /** The runner's output, for a person to read. */
  runLog(id: string): string {
    return path.join(this.plans.planDir(id), 'run.log');
  }

  changedOnDisk(id: string): void {
    const plan = this.get(id);
    if (plan) this.changed.fire(plan);
  }

  /** Checks and stores the plan in `file`, then runs it in a process of its own; resolves once it is stored. */
  async run(file: string, options: { maxParallel?: number } = {}): Promise<PlanState> {
    this.jobs.trust.require('run a plan');
    const state = await startPlan(this.jobs, file, { baseDir: this.jobs.deps.controlPlane.workspace, ...options });
    this.changed.fire(state);
    this.runDetached(state.id);
    return state;
  }

  /** Goes on with a plan whose runner is gone, in a process of its own. */
  resume(id: string): void {
    this.jobs.trust.require('resume a plan');
    this.plans.require(id);
    this.runDetached(id);
  }

  async cancel(id: string): Promise<{ plan: PlanState; changed: boolean }> {
    this.jobs.trust.require('cancel a plan');
    const result = await cancelPlan(this.jobs, id);
    this.changed.fire(result.plan);
    return result;
  }

  /** `mam plan draft` here: resolves once the planner answered and the plan is written. */
  async draft(request: Omit<DraftRequest, 'baseDir'>): Promise<DraftResult> {
    this.jobs.trust.require('ask for a plan');
    return draftPlan(this.jobs, { ...request, baseDir: this.jobs.deps.controlPlane.workspace });
  }

  private runDetached(id: string): void {
    const { controlPlane, env } = this.jobs.deps;
    const log = fs.openSync(this.runLog(id), 'a');
    try {
      const child = spawn(process.execPath, [this.cliPath, 'plan', 'resume', id, '--workspace', controlPlane.workspace], { cwd: controlPlane.workspace, env, detached: true, stdio: ['ignore', log, log] });
      child.on('error', () => undefined);
      child.unref();
    } finally {
      fs.closeSync(log);
    }
  }
}
