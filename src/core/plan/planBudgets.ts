import { isMeasured, type JobUsage } from '../store/jobUsageSchema';
import { estimateCost, type PriceTable } from '../usage/prices';
import type { Plan, PlanBudget } from './planFile';
import type { PlanState, TaskState } from './planState';

/**
 * Tokens (input + output) and, where every model's price is known, an estimated cost per task
 * and for the plan, from its jobs' usage as the agents' own stores record it, written onto the
 * state; a crossed budget ends what it covers as budget_exceeded. Returns the loops of the tasks
 * it ended, for the runner to cancel (their branches and worktrees stay).
 */
export function applyBudgets(p: PlanState, plan: Plan, usagesOf: (t: TaskState) => ReadonlyArray<JobUsage | null | undefined>, prices: PriceTable, now: string): Array<string | null> {
  const crossed: Array<string | null> = [];
  let tokens = 0;
  let cost: number | null = 0;
  for (const t of p.tasks) {
    const usages = usagesOf(t).filter(isMeasured);
    t.tokens = usages.reduce((sum, u) => sum + u.input_tokens + u.output_tokens, 0);
    const costs = usages.map((u) => estimateCost(u, prices));
    t.cost_usd = costs.every((c) => c !== undefined) ? costs.reduce<number>((a, c) => a + c!, 0) : null;
    tokens += t.tokens;
    cost = cost === null || t.cost_usd === null ? null : cost + t.cost_usd;
    const why = t.state === 'running' ? over({ tokens: t.tokens, cost: t.cost_usd }, plan.tasks.find((x) => x.id === t.id)?.budget) : undefined;
    if (why) {
      t.state = 'budget_exceeded';
      t.why = `spent ${why}`;
      t.ended_at = now;
      crossed.push(t.loop_id);
    }
  }
  p.tokens = tokens;
  p.cost_usd = cost;
  const planWhy = over({ tokens, cost }, plan.budget);
  if (planWhy) {
    for (const t of p.tasks.filter((x) => x.state === 'running' || x.state === 'pending')) {
      if (t.state === 'running') crossed.push(t.loop_id);
      t.state = 'budget_exceeded';
      t.why = `the plan spent ${planWhy}`;
      t.ended_at = now;
    }
  }
  return crossed;
}

function over(spent: { tokens: number; cost: number | null }, budget: PlanBudget | undefined): string | undefined {
  if (budget?.tokens !== undefined && spent.tokens > budget.tokens) return `${spent.tokens} tokens, over the budget of ${budget.tokens}`;
  if (budget?.cost_usd !== undefined && spent.cost !== null && spent.cost > budget.cost_usd) return `an estimated ${dollars(spent.cost)}, over the budget of ${dollars(budget.cost_usd)}`;
  return undefined;
}

/** Money as a budget reads: cents, or two significant digits below a cent. */
function dollars(usd: number): string {
  return usd > 0 && usd < 0.01 ? `$${usd.toPrecision(2)}` : `$${usd.toFixed(2)}`;
}
