import * as os from 'node:os';
import { sleepOn } from '../base/clock';
import { DisposableBase } from '../base/disposable';
import { ExitCode, MamError, errorMessage } from '../base/errors';
import type { Logger } from '../base/log';
import { isAlive } from '../base/process';
import type { JobEngine } from '../jobs/jobEngine';
import { waitForEnd } from '../jobs/submit';
import { cancelLoop } from '../loop/loopCancel';
import { LoopRunner } from '../loop/loopRunner';
import { LoopStore, type LoopState } from '../loop/loopState';
import { enqueue } from '../merge/enqueue';
import { MergeQueueStore } from '../merge/mergeQueue';
import { MergeBusyError, MergeRunner } from '../merge/mergeRunner';
import { branchTip } from '../merge/repo';
import type { SessionService } from '../sessions/sessionService';
import { isMeasured } from '../store/jobUsageSchema';
import { IssueWorktrees } from '../worktree/worktree';
import { parsePlan, type Plan, type PlanTask } from './planFile';
import { workspacePrices } from '../usage/prices';
import { applyBudgets } from './planBudgets';
import { namedPaths, sharedPath } from './planConflicts';
import { assigneeSessions, type TaskSessions } from './planSessions';
import { TASK_ENDS, type PlanState, type PlanStore, type TaskState, type TaskStep } from './planState';

export interface PlanRunnerDeps {
  jobs: JobEngine;
  sessions: SessionService;
  logger: Logger;
  /** Each step, one line (the CLI prints them; the views hear the state file change). */
  say?: (line: string) => void;
}

/** Another live process runs this plan (exit 5). */
export class PlanBusyError extends MamError {
  constructor(message: string) {
    super(message, 'plan_busy', ExitCode.notDelivered);
  }
}

/** A task stops here with this state and reason (its loop did not pass, a job failed, its budget was crossed). */
class TaskEnd extends Error {
  constructor(
    readonly state: 'failed' | 'budget_exceeded' | 'cancelled',
    readonly why: string,
  ) {
    super(why);
  }
}

/**
 * Runs a plan to its end in this process (`mam plan run`, `resume`): tasks start when every task
 * they need has landed, up to `max_parallel` at once; each goes through its steps — a worktree
 * from the target's tip, its sessions, its review loop, the merge queue — with the step written
 * down before it is taken, so that a run that dies midway is resumed from there without redoing
 * what landed or passed (the loop and the merge queue resume their own steps the same way, and
 * never give an agent the same job twice). A task that fails blocks what needs it; the others go
 * on. The budgets are checked whenever a job's tokens are measured.
 */
export class PlanRunner extends DisposableBase {
  private readonly loops: LoopStore;
  private readonly queue: MergeQueueStore;
  private readonly worktrees: IssueWorktrees;
  /** One merge run at a time from this process (the queue's own lock guards against others). */
  private merging: Promise<unknown> = Promise.resolve();
  private plan!: Plan;

  constructor(
    private readonly deps: PlanRunnerDeps,
    private readonly plans: PlanStore,
  ) {
    super();
    const paths = deps.jobs.deps.controlPlane.paths;
    this.loops = new LoopStore(paths, deps.jobs.clock);
    this.queue = new MergeQueueStore(paths, deps.jobs.clock);
    this.worktrees = new IssueWorktrees(deps.jobs.deps.controlPlane.workspace, { logger: deps.logger });
  }

  private get workspace(): string {
    return this.deps.jobs.deps.controlPlane.workspace;
  }

  /** Runs (or resumes) the plan until every task has ended; resolves with its final state. */
  async run(id: string): Promise<PlanState> {
    const state = await this.own(id);
    this.plan = parsePlan(state.source, `${id}/plan.yaml`);
    await this.deps.jobs.connect();
    const budgetWatch = this.deps.jobs.ledger.onDidChangeJob(({ job }) => {
      if (isMeasured(job.usage)) void this.checkBudgets(id).catch((err: unknown) => this.deps.logger.warn(`plan ${id}: budget check: ${errorMessage(err)}`));
    });
    const active = new Map<string, Promise<void>>();
    // A landed task whose sessions and worktree a killed run did not finish putting away.
    for (const t of state.tasks) if (t.state === 'landed' && t.step === 'cleanup') this.putAway(id, t);
    try {
      for (;;) {
        const now = await this.blockUnreachable(id);
        if (now.status === 'cancelled') break;
        const running = now.tasks.filter((t) => t.state === 'running' && !active.has(t.id));
        const ready = now.tasks.filter((t) => t.state === 'pending' && !active.has(t.id) && this.needsOf(t.id).every((n) => now.tasks.find((x) => x.id === n)?.state === 'landed'));
        // A resumed run first takes up the tasks that were under way, then starts ready ones; a
        // ready task predicted to conflict with one under way waits for it to end (it says so).
        const waits = new Map<string, string[]>();
        for (const t of [...running, ...ready]) {
          if (active.size >= now.max_parallel) break;
          const clash = t.state === 'pending' ? this.clashes(t.id, [...active.keys()]) : [];
          if (clash.length) {
            waits.set(t.id, clash);
            continue;
          }
          active.set(t.id, this.drive(id, t.id).finally(() => active.delete(t.id)));
        }
        await this.noteWaits(id, waits);
        if (active.size === 0) break;
        await Promise.race(active.values());
      }
      await Promise.all(active.values());
      await Promise.all(this.puttingAway);
      return await this.finish(id);
    } finally {
      budgetWatch.dispose();
      await this.plans.update(id, (p) => void (p.owner = null)).catch(() => undefined);
    }
  }

  /** Takes the plan over; refused while another live process runs it. */
  private async own(id: string): Promise<PlanState> {
    return this.plans.update(id, (p) => {
      if (p.owner && p.owner.host === os.hostname() && p.owner.pid !== process.pid && isAlive(p.owner.pid)) {
        throw new PlanBusyError(`plan ${id} is being run by process ${p.owner.pid}; wait for it, or cancel the plan`);
      }
      p.owner = { pid: process.pid, host: os.hostname() };
      if (p.status !== 'cancelled') p.status = 'running';
      return structuredClone(p);
    });
  }

  /** The tasks under way that `taskId` is predicted to conflict with (its text and theirs name the same file), with the file. */
  private clashes(taskId: string, under: readonly string[]): string[] {
    const mine = this.namedOf(taskId);
    if (mine.length === 0) return [];
    return under.filter((other) => other !== taskId).flatMap((other) => {
      const file = sharedPath(mine, this.namedOf(other));
      return file ? [`${other} (both name ${file})`] : [];
    });
  }

  private readonly named = new Map<string, string[]>();

  private namedOf(taskId: string): string[] {
    let paths = this.named.get(taskId);
    if (!paths) this.named.set(taskId, (paths = namedPaths(this.spec(taskId).task, this.workspace)));
    return paths;
  }

  /** Pending tasks record what they wait for (shown by status and the views); the others wait for nothing. */
  private async noteWaits(id: string, waits: ReadonlyMap<string, string[]>): Promise<void> {
    const now = this.plans.require(id);
    const differs = now.tasks.some((t) => t.state === 'pending' && (waits.get(t.id) ?? []).join() !== t.waits_for.join());
    if (!differs) return;
    await this.plans.update(id, (p) => {
      for (const t of p.tasks) if (t.state === 'pending' && !t.started_at) t.waits_for = waits.get(t.id) ?? [];
    });
  }

  private needsOf(taskId: string): string[] {
    return this.spec(taskId).needs;
  }

  private spec(taskId: string): PlanTask {
    const task = this.plan.tasks.find((t) => t.id === taskId);
    if (!task) throw new Error(`task ${taskId} is not in the plan`);
    return task;
  }

  /** Marks every pending task that needs one that can no longer land `blocked`, saying which; returns the state. */
  private async blockUnreachable(id: string): Promise<PlanState> {
    return this.plans.update(id, (p) => {
      for (let changed = true; changed; ) {
        changed = false;
        for (const t of p.tasks.filter((x) => x.state === 'pending')) {
          const dead = this.needsOf(t.id).map((n) => p.tasks.find((x) => x.id === n)!).find((n) => n.state !== 'landed' && TASK_ENDS.has(n.state));
          if (!dead) continue;
          t.state = 'blocked';
          t.why = `needs ${dead.id}, which ${dead.state === 'blocked' ? 'is blocked' : dead.state === 'budget_exceeded' ? 'crossed its budget' : dead.state}`;
          t.ended_at = this.plans.now();
          changed = true;
        }
      }
      return structuredClone(p);
    });
  }

  /** Takes a task through its remaining steps; records how it ended. */
  private async drive(id: string, taskId: string): Promise<void> {
    try {
      let task = await this.patch(id, taskId, (t) => {
        t.waits_for = [];
        if (t.state === 'pending') {
          t.state = 'running';
          t.started_at = this.plans.now();
        }
      });
      const steps: TaskStep[] = ['worktree', 'sessions', 'loop', 'queue'];
      for (const step of steps.slice(task.step ? steps.indexOf(task.step) : 0)) {
        task = await this.patch(id, taskId, (t) => void (t.state === 'running' && (t.step = step)));
        // Cancelled, or its budget crossed, since the last step: nothing more is done for it.
        if (task.state !== 'running') return;
        this.say(`${taskId}: ${step}`);
        if (step === 'worktree') task = await this.prepareWorktree(id, task);
        else if (step === 'sessions') task = await this.prepareSessions(id, task);
        else if (step === 'loop') task = await this.review(id, task);
        else task = await this.land(id, task);
      }
      // Landed: what needs it may start now; its sessions and worktree are put away meanwhile
      // (step `cleanup` until done, so that a run killed before then puts them away on resume).
      task = await this.patch(id, taskId, (t) => {
        if (t.state !== 'running') return;
        t.state = 'landed';
        t.step = 'cleanup';
        t.why = null;
        t.ended_at = this.plans.now();
      });
      this.say(`${taskId}: landed ${task.landed_commit?.slice(0, 12) ?? ''}`);
      if (task.state === 'landed') this.putAway(id, task);
    } catch (err) {
      const end = err instanceof TaskEnd ? err : new TaskEnd('failed', errorMessage(err));
      await this.patch(id, taskId, (t) => {
        // A budget or a cancel that was recorded while the step ran stands.
        if (TASK_ENDS.has(t.state)) return;
        t.state = end.state;
        t.why = end.why;
        t.ended_at = this.plans.now();
      });
      this.say(`${taskId}: ${end.state}: ${end.why}`);
    }
  }

  /** The task's worktree, from the target's tip now: it holds what the tasks it needs landed. */
  private async prepareWorktree(id: string, task: TaskState): Promise<TaskState> {
    const state = this.plans.require(id);
    const issue = worktreeIssue(id, task.id);
    const tip = task.base ?? (await branchTip(this.workspace, state.into));
    if (!tip) throw new TaskEnd('failed', `the target branch ${state.into} is gone`);
    const prepared = await this.worktrees.prepare(issue, { base: tip });
    return this.patch(id, task.id, (t) => {
      t.worktree = prepared.path;
      t.branch = prepared.branch;
      t.base = tip;
    });
  }

  private async prepareSessions(id: string, task: TaskState): Promise<TaskState> {
    const spec = this.spec(task.id);
    const made: TaskSessions = await assigneeSessions(this.deps.sessions, { planId: id, task: spec, worktree: task.worktree!, already: task.created_sessions, onCreated: (name) => this.patch(id, task.id, (t) => void (t.created_sessions.includes(name) || t.created_sessions.push(name))) });
    return this.patch(id, task.id, (t) => {
      t.creator = made.creator;
      t.reviewers = made.reviewers;
      t.planner = made.planner;
    });
  }

  /** The task's review loop in its worktree, resumed when one was under way there. */
  private async review(id: string, task: TaskState): Promise<TaskState> {
    const spec = this.spec(task.id);
    const previous = task.loop_id ? this.loops.get(task.loop_id) : undefined;
    if (previous?.status === 'passed') return task;
    const runner = new LoopRunner(this.deps.jobs, this.deps.logger);
    const sub = runner.onDidProgress(({ loop, message }) => {
      if (loop.id !== task.loop_id) void this.patch(id, task.id, (t) => void (t.loop_id = loop.id));
      this.say(`${task.id}: ${message}`);
    });
    let loop: LoopState;
    try {
      loop = previous?.status === 'running' ? await runner.resume(previous.id) : await runner.start({
        task: spec.task, creator: task.creator!, reviewers: task.reviewers, ...(task.planner ? { planner: task.planner } : {}),
        maxLoop: spec.max_loop, worktree: task.worktree!, base: task.base!, baseDir: this.workspace,
      });
    } finally {
      sub.dispose();
      runner.dispose();
    }
    const now = await this.patch(id, task.id, (t) => void (t.loop_id = loop.id));
    if (loop.status === 'cancelled') throw new TaskEnd('cancelled', `its loop ${loop.id} was cancelled`);
    if (loop.status !== 'passed') throw new TaskEnd('failed', `its loop ${loop.id} did not pass${loop.reason ? ` (${loop.reason})` : ''}`);
    return now;
  }

  /** Through the merge queue: validated, rebased (and reviewed again when the tree changed), landed on the target. */
  private async land(id: string, task: TaskState): Promise<TaskState> {
    const state = this.plans.require(id);
    let entryId = task.merge_entry;
    if (!entryId) {
      // Recorded by branch, so that a run killed between enqueueing and recording finds its entry.
      const existing = this.queue.read().find((e) => e.branch === task.branch);
      const entry = existing ?? (await enqueue(this.deps.jobs.deps.controlPlane.paths, this.workspace, {
        what: task.worktree!, into: state.into, baseDir: this.workspace, clock: this.deps.jobs.clock, ...(this.plan.validate ? { validate: this.plan.validate } : {}),
      }));
      entryId = entry.id;
      await this.patch(id, task.id, (t) => void (t.merge_entry = entry.id));
    }
    for (;;) {
      if (this.plans.require(id).status === 'cancelled') throw new TaskEnd('cancelled', 'the plan was cancelled');
      await this.runQueue();
      const entry = this.queue.get(entryId);
      if (!entry) throw new TaskEnd('failed', `its merge queue entry ${entryId} was removed`);
      if (entry.state === 'landed') return this.patch(id, task.id, (t) => void (t.landed_commit = entry.landed_commit));
      if (entry.state === 'waiting' && entry.job_id) {
        // Handed back to its creator (a conflict, a red validation): the queue runs it again once that job ends.
        this.say(`${task.id}: waiting for its creator's job ${entry.job_id} (${entry.reason ?? 'merge queue'})`);
        const job = await waitForEnd(this.deps.jobs, entry.job_id);
        if (job.state !== 'completed') throw new TaskEnd('failed', `its creator's merge-queue job ${job.id} ${job.state}${job.reason ? ` (${job.reason})` : ''}`);
        continue;
      }
      if (entry.state === 'waiting') throw new TaskEnd('failed', `the merge queue stopped it: ${entry.reason ?? 'waiting'}`);
    }
  }

  private async runQueue(): Promise<void> {
    const run = this.merging.then(async () => {
      for (;;) {
        try {
          await new MergeRunner({ engine: this.deps.jobs, logger: this.deps.logger, repo: this.workspace }).run();
          return;
        } catch (err) {
          if (!(err instanceof MergeBusyError)) throw err;
          await sleepOn(this.deps.jobs.clock, 500); // another process lands: its run ends on its own
        }
      }
    });
    this.merging = run.catch(() => undefined);
    await run;
  }

  /** Landed: the sessions the plan created are stopped (their conversations kept), the worktree removed. */
  /** Puts a landed task's sessions and worktree away in the background; the run waits for it before it ends. */
  private putAway(id: string, task: TaskState): void {
    const done = this.cleanUp(id, task)
      .then(() => this.patch(id, task.id, (t) => void (t.step === 'cleanup' && (t.step = null))))
      .catch((err: unknown) => this.deps.logger.warn(`putting ${task.id} away: ${errorMessage(err)}`))
      .finally(() => this.puttingAway.delete(done));
    this.puttingAway.add(done);
  }

  private readonly puttingAway = new Set<Promise<unknown>>();

  /** The sessions the plan created are stopped (their conversations kept), all at once; the worktree removed. */
  private async cleanUp(id: string, task: TaskState): Promise<void> {
    await Promise.all(task.created_sessions.map((name) => this.deps.sessions.stop(name).catch((err: unknown) => this.deps.logger.warn(`stopping ${name}: ${errorMessage(err)}`))));
    await this.worktrees.remove(worktreeIssue(id, task.id)).catch((err: unknown) => this.deps.logger.warn(`removing the worktree of ${task.id}: ${errorMessage(err)}`));
  }

  /** Budgets (planBudgets.ts) read again from the jobs' usage; the loops of tasks it ended are cancelled. */
  private async checkBudgets(id: string): Promise<void> {
    const jobs = this.deps.jobs.deps.controlPlane.jobs;
    const prices = workspacePrices(this.deps.jobs.deps.controlPlane.paths, (m) => this.deps.logger.warn(m));
    const crossed = await this.plans.update(id, (p) => applyBudgets(p, this.plan, (t) => this.jobsOf(t).map((j) => jobs.get(j)?.usage), prices, this.plans.now()));
    // Nothing more is dispatched for them: their loops stop; branches and worktrees stay.
    for (const loop of crossed) if (loop) await cancelLoop(this.deps.jobs, this.loops, loop).catch(() => undefined);
  }

  /** The jobs a task gave: its loop's steps, and its creator's merge-queue job. */
  private jobsOf(t: TaskState): string[] {
    const ids = new Set<string>();
    if (t.loop_id) for (const s of this.loops.get(t.loop_id)?.steps ?? []) if (s.job_id) ids.add(s.job_id);
    const entry = t.merge_entry ? this.queue.get(t.merge_entry) : undefined;
    if (entry?.job_id) ids.add(entry.job_id);
    return [...ids];
  }

  private async finish(id: string): Promise<PlanState> {
    return this.plans.update(id, (p) => {
      if (p.status !== 'cancelled') {
        const notLanded = p.tasks.filter((t) => t.state !== 'landed');
        p.status = notLanded.length === 0 ? 'landed' : 'failed';
        p.reason = notLanded.length === 0 ? null : `${notLanded.length} of ${p.tasks.length} tasks did not land: ${notLanded.map((t) => `${t.id} ${t.state}`).join(', ')}`;
      }
      return structuredClone(p);
    });
  }

  private async patch(id: string, taskId: string, change: (t: TaskState) => void): Promise<TaskState> {
    return this.plans.update(id, (p) => {
      const t = p.tasks.find((x) => x.id === taskId);
      if (!t) throw new Error(`task ${taskId} is not in plan ${id}`);
      change(t);
      return structuredClone(t);
    });
  }

  private say(line: string): void {
    this.deps.say?.(line);
  }
}

/** The worktree (and branch `mam/<issue>`) of a plan's task: unique per plan and task. */
export function worktreeIssue(planId: string, taskId: string): string {
  return `${planId.slice(-6)}-${taskId}`;
}
