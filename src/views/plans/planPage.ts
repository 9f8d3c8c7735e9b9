import { printable, printableLines } from '../../core/base/ids';
import { criticalPath } from '../../core/plan/planGraph';
import type { PlanState } from '../../core/plan/planState';
import type { EngineHost } from '../host/engineHost';
import type { PlanModel } from '../../webview/reportProtocol';
import { landedText, runnerOf, runnerText, taskDetail, waitingFor } from './planText';

/**
 * Everything the plan page draws (src/webview/planPage.ts), from the plan's state, the plan as it
 * was run (its tasks' text and needs) and its tasks' loops. Every string from outside is made
 * printable here; the page checks the shape again on arrival.
 */
export function buildPlanModel(host: EngineHost, folderIndex: number, planId: string): PlanModel | undefined {
  const fe = host.byFolderIndex(folderIndex);
  const plan = fe?.engine.core.plans.get(planId);
  if (!fe || !plan) return undefined;
  let spec: Array<{ id: string; task: string; needs: string[] }> = [];
  try {
    spec = fe.engine.core.plans.specOf(plan).tasks;
  } catch {
    // A plan file edited by hand after the run: its tasks are drawn without their text and needs.
  }
  const byId = new Map(spec.map((t) => [t.id, t]));
  const now = Date.now();
  const tasks = plan.tasks.map((t) => {
    const needs = byId.get(t.id)?.needs ?? [];
    const round = t.loop_id ? (fe.engine.core.loops.get(t.loop_id)?.rounds.length ?? null) : null;
    return {
      id: printable(t.id, 64),
      task: printableLines(byId.get(t.id)?.task ?? ''),
      state: t.state,
      detail: taskDetail(t, waitingFor(plan, needs, t), round),
      needs: needs.map((n) => printable(n, 64)),
      loop_id: t.loop_id,
      round,
      landed_commit: t.landed_commit,
      tokens: t.tokens,
      creator: t.creator ? printable(t.creator) : null,
      reviewers: t.reviewers.map((r) => printable(r)),
      why: t.why ? printable(t.why, 400) : null,
    };
  });
  const runner = runnerOf(plan);
  return {
    folderIndex,
    plan: {
      id: plan.id, title: printable(plan.title, 200) || plan.id, status: plan.status, reason: plan.reason ? printable(plan.reason, 400) : null, into: printable(plan.into, 200),
      max_parallel: plan.max_parallel, tokens: plan.tokens, landed: landedText(plan), runner: runner ? runnerText(runner) : null, created_at: plan.created_at, updated_at: plan.updated_at,
    },
    tasks,
    critical: criticalOf(plan, spec, now),
    now: new Date(now).toISOString(),
  };
}

/**
 * The plan's critical path: its longest chain of needs, measured in the time its tasks took (a
 * running task: so far; one not run yet counts as the mean of the others, so before any ran it is
 * the chain with the most tasks). IDs as the page shows them.
 */
function criticalOf(plan: PlanState, spec: ReadonlyArray<{ id: string; needs: string[] }>, now: number): string[] {
  if (spec.length === 0) return [];
  const durations = new Map<string, number>();
  for (const t of plan.tasks) {
    const start = t.started_at ? Date.parse(t.started_at) : NaN;
    const end = t.ended_at ? Date.parse(t.ended_at) : now;
    if (Number.isFinite(start) && Number.isFinite(end) && end >= start) durations.set(t.id, end - start);
    // Ended without starting (blocked, cancelled before its turn): it takes no time on any path.
    else if (!t.started_at && t.ended_at) durations.set(t.id, 0);
  }
  try {
    return criticalPath({ tasks: spec }, durations).map((id) => printable(id, 64));
  } catch {
    return []; // needs that cannot be ordered (a hand-edited plan): no path to mark
  }
}
