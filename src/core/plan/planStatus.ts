import type { LoopStore } from '../loop/loopState';
import { parsePlan } from './planFile';
import type { PlanState, TaskState } from './planState';

/** A plan's status as `mam plan status --json` prints it and the MCP tool `plan_status` returns it. */
export interface PlanStatusRecord {
  id: string;
  title: string;
  status: PlanState['status'];
  reason: string | null;
  into: string;
  max_parallel: number;
  tokens: number;
  created_at: string;
  updated_at: string;
  tasks: Array<{
    id: string; state: TaskState['state']; step: TaskState['step']; why: string | null; needs: string[]; waits_for: string[];
    creator: string | null; reviewers: string[]; worktree: string | null; branch: string | null; loop_id: string | null;
    loop_round: number | null; merge_entry: string | null; landed_commit: string | null; tokens: number;
  }>;
}

/** Each task's needs, as the plan that was run says. */
export function planNeeds(plan: PlanState): Map<string, string[]> {
  const spec = parsePlan(plan.source, `${plan.id}/plan.yaml`);
  return new Map(spec.tasks.map((t) => [t.id, t.needs]));
}

/** What a task waits for: the tasks it needs that have not landed, or the tasks it may conflict with. */
export function waitsFor(plan: PlanState, needs: Map<string, string[]>, t: TaskState): string[] {
  if (t.state === 'pending') return [...(needs.get(t.id) ?? []).filter((n) => plan.tasks.find((x) => x.id === n)?.state !== 'landed'), ...t.waits_for];
  return t.waits_for;
}

export function planStatusRecord(plan: PlanState, loops: LoopStore): PlanStatusRecord {
  const needs = planNeeds(plan);
  return {
    id: plan.id, title: plan.title, status: plan.status, reason: plan.reason, into: plan.into, max_parallel: plan.max_parallel, tokens: plan.tokens,
    created_at: plan.created_at, updated_at: plan.updated_at,
    tasks: plan.tasks.map((t) => ({
      id: t.id, state: t.state, step: t.step, why: t.why, needs: needs.get(t.id) ?? [], waits_for: waitsFor(plan, needs, t),
      creator: t.creator, reviewers: t.reviewers, worktree: t.worktree, branch: t.branch, loop_id: t.loop_id,
      loop_round: t.loop_id ? (loops.get(t.loop_id)?.rounds.length ?? null) : null, merge_entry: t.merge_entry, landed_commit: t.landed_commit, tokens: t.tokens,
    })),
  };
}
