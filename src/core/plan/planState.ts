import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isoOn, systemClock, type Clock } from '../base/clock';
import { UsageError, ValidationError, errorMessage } from '../base/errors';
import { printable } from '../base/ids';
import { int, lazy, list, nullable, num, obj, oneOf, parse, str, type Schema } from '../base/schema';
import { readJsonFile, writeFileAtomic } from '../store/atomicFile';
import { withLock } from '../store/lock';
import type { ControlPlanePaths } from '../store/paths';

/**
 * A task's life in a plan: `pending` until every task it needs has landed, then `running` through
 * its steps (a worktree from the target's tip, its sessions, its review loop, the merge queue),
 * `landed` at the end. The other ends keep its branch and worktree for a person to look at:
 * `failed` (its loop did not pass, a job failed), `blocked` (a task it needs did not land),
 * `budget_exceeded`, `cancelled`.
 */
export const TASK_STATES = ['pending', 'running', 'landed', 'failed', 'blocked', 'budget_exceeded', 'cancelled'] as const;
export type TaskStateName = (typeof TASK_STATES)[number];
export const TASK_ENDS: ReadonlySet<TaskStateName> = new Set(['landed', 'failed', 'blocked', 'budget_exceeded', 'cancelled']);

/** Where a running task is: each step is written down before it is taken, so a resumed run takes it again (each is safe to repeat). */
export const TASK_STEPS = ['worktree', 'sessions', 'loop', 'queue', 'cleanup'] as const;
export type TaskStep = (typeof TASK_STEPS)[number];

export const PLAN_STATUSES = ['running', 'landed', 'failed', 'cancelled'] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

export interface TaskState {
  id: string;
  state: TaskStateName;
  step: TaskStep | null;
  /** Why it ended other than landed, or what a running task waits for; one line. */
  why: string | null;
  /** Tasks it waits for before its next step (predicted to conflict with it), by ID. */
  waits_for: string[];
  worktree: string | null;
  branch: string | null;
  /** The target's tip the worktree started from. */
  base: string | null;
  /** Sessions this task works with, and those the plan created for it (stopped once it landed). */
  creator: string | null;
  reviewers: string[];
  planner: string | null;
  created_sessions: string[];
  loop_id: string | null;
  merge_entry: string | null;
  landed_commit: string | null;
  /** Tokens its jobs spent, from the agents' own stores (input + output). */
  tokens: number;
  cost_usd: number | null;
  started_at: string | null;
  ended_at: string | null;
}

export interface PlanState {
  id: string;
  title: string;
  /** The plan file as it was run, kept beside this state (plan.yaml). */
  source: string;
  into: string;
  status: PlanStatus;
  reason: string | null;
  /** The process running it; a resume takes over from a dead one only. */
  owner: { pid: number; host: string } | null;
  max_parallel: number;
  tokens: number;
  cost_usd: number | null;
  created_at: string;
  updated_at: string;
  tasks: TaskState[];
}

export const PLAN_ID_PATTERN = /^p-\d{8}T\d{6}Z-[0-9a-f]{6}$/;

export function newPlanId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `p-${stamp}-${randomBytes(3).toString('hex')}`;
}

const time = str({ min: 1 });
const text = str();
const taskSchema: Schema<TaskState> = obj({
  id: str({ min: 1 }),
  state: oneOf(TASK_STATES),
  step: nullable(oneOf(TASK_STEPS)),
  why: nullable(text),
  waits_for: list(text),
  worktree: nullable(text),
  branch: nullable(text),
  base: nullable(text),
  creator: nullable(text),
  reviewers: list(text),
  planner: nullable(text),
  created_sessions: list(text),
  loop_id: nullable(text),
  merge_entry: nullable(text),
  landed_commit: nullable(text),
  tokens: int({ min: 0 }),
  cost_usd: nullable(num({ min: 0 })),
  started_at: nullable(time),
  ended_at: nullable(time),
});

const planStateSchema: Schema<PlanState> = /* @__PURE__ */ lazy(() =>
  obj({
    id: str({ min: 1 }),
    title: text,
    source: text,
    into: str({ min: 1 }),
    status: oneOf(PLAN_STATUSES),
    reason: nullable(text),
    owner: nullable(obj({ pid: int({ min: 1 }), host: text })),
    max_parallel: int({ min: 1 }),
    tokens: int({ min: 0 }),
    cost_usd: nullable(num({ min: 0 })),
    created_at: time,
    updated_at: time,
    tasks: list(taskSchema),
  }),
);

export function newTaskState(id: string): TaskState {
  return {
    id, state: 'pending', step: null, why: null, waits_for: [], worktree: null, branch: null, base: null,
    creator: null, reviewers: [], planner: null, created_sessions: [], loop_id: null, merge_entry: null, landed_commit: null,
    tokens: 0, cost_usd: null, started_at: null, ended_at: null,
  };
}

/**
 * The plans of a workspace on disk: `.mam/plans/<id>/state.json` beside the plan file as it was
 * run. Every change is made under the plan's lock and replaces the whole file atomically, before
 * the step it records is taken.
 */
export class PlanStore {
  constructor(
    readonly paths: ControlPlanePaths,
    private readonly clock: Clock = systemClock,
  ) {}

  get dir(): string {
    return path.join(this.paths.dir, 'plans');
  }

  planDir(id: string): string {
    checkPlanId(id);
    return path.join(this.dir, id);
  }

  file(id: string): string {
    return path.join(this.planDir(id), 'state.json');
  }

  now(): string {
    return isoOn(this.clock);
  }

  /** Writes a new plan (its file and its first state) and returns it. */
  create(state: PlanState): PlanState {
    fs.mkdirSync(this.planDir(state.id), { recursive: true });
    writeFileAtomic(path.join(this.planDir(state.id), 'plan.yaml'), state.source);
    this.write(state);
    return state;
  }

  get(id: string): PlanState | undefined {
    const file = this.file(id);
    return readJsonFile(file, (raw) => parse(planStateSchema, raw, (problem) => new ValidationError(`${file}: ${problem}; fix or remove the file`)));
  }

  require(id: string): PlanState {
    const plan = this.get(id);
    if (!plan) throw new UsageError(`no plan '${printable(id, 60)}'`, 'unknown_plan');
    return plan;
  }

  /** Every plan, newest first, and the plan folders whose state cannot be read. */
  listing(): { plans: PlanState[]; unreadable: Array<{ id: string; problem: string }> } {
    const plans: PlanState[] = [];
    const unreadable: Array<{ id: string; problem: string }> = [];
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.dir).filter((n) => PLAN_ID_PATTERN.test(n));
    } catch {
      // no plans yet
    }
    for (const id of names.sort().reverse()) {
      try {
        const plan = this.get(id);
        if (plan) plans.push(plan);
      } catch (err) {
        unreadable.push({ id, problem: errorMessage(err) });
      }
    }
    return { plans, unreadable };
  }

  /** Changes a plan under its lock: `change` edits the state read now; the result is saved before this resolves. */
  async update<T>(id: string, change: (plan: PlanState) => T): Promise<T> {
    return withLock(path.join(this.planDir(id), 'lock'), () => {
      const plan = this.require(id);
      const result = change(plan);
      this.write(plan);
      return result;
    }, { what: `plan ${id}` });
  }

  private write(plan: PlanState): void {
    plan.updated_at = this.now();
    writeFileAtomic(this.file(plan.id), `${JSON.stringify(plan, null, 2)}\n`);
  }
}

export function checkPlanId(id: string): void {
  if (!PLAN_ID_PATTERN.test(id)) throw new UsageError(`'${printable(String(id), 60)}' is not a plan ID (p-…)`, 'bad_plan_id');
}
