/**
 * The task graph of a plan: which task needs which. Every answer lists tasks in the plan file's
 * order where the graph leaves a choice, so that the runner, the status and the views agree and a
 * run is repeatable.
 */

/** What the graph helpers read of a plan: each task's id and the ids it needs. */
export interface TaskGraph {
  readonly tasks: ReadonlyArray<{ readonly id: string; readonly needs: readonly string[] }>;
}

/**
 * Every task once, each after all it needs (Kahn's algorithm, taking the earliest task in the file
 * among those whose needs are placed). Throws on a cycle or an unknown need, which a parsed plan
 * does not have.
 */
export function topologicalOrder(plan: TaskGraph): string[] {
  const placed = new Set<string>();
  const order: string[] = [];
  while (order.length < plan.tasks.length) {
    const next = plan.tasks.find((t) => !placed.has(t.id) && t.needs.every((n) => placed.has(n)));
    if (!next) throw new Error(`the tasks ${plan.tasks.filter((t) => !placed.has(t.id)).map((t) => t.id).join(', ')} cannot be ordered (a cycle or an unknown need)`);
    placed.add(next.id);
    order.push(next.id);
  }
  return order;
}

/**
 * The tasks that can start now: not landed, not running, not `finished` (ended without landing:
 * failed, blocked, over budget, cancelled), and every task they need landed.
 */
export function readyTasks(plan: TaskGraph, landed: ReadonlySet<string>, running: ReadonlySet<string>, finished: ReadonlySet<string> = new Set()): string[] {
  return plan.tasks.filter((t) => !landed.has(t.id) && !running.has(t.id) && !finished.has(t.id) && t.needs.every((n) => landed.has(n))).map((t) => t.id);
}

/** The tasks that need `id`, directly or through others: what a failure of `id` blocks. */
export function dependantsOf(plan: TaskGraph, id: string): string[] {
  const found = new Set<string>([id]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const t of plan.tasks) {
      if (!found.has(t.id) && t.needs.some((n) => found.has(n))) {
        found.add(t.id);
        grew = true;
      }
    }
  }
  return plan.tasks.filter((t) => t.id !== id && found.has(t.id)).map((t) => t.id);
}

/**
 * The longest chain of needs, first task first: what bounds the plan's wall time however many tasks
 * run at once. Measured in `durations` (any unit, e.g. milliseconds a task took or is estimated to
 * take); a task without one counts as the mean of the known ones, and with no durations at all each
 * task counts 1 (the chain with the most tasks). Ties go to the chain with more tasks (a task that
 * took no time, blocked behind a failed one, stays on its path), then to the task earlier in the file.
 */
export function criticalPath(plan: TaskGraph, durations?: ReadonlyMap<string, number>): string[] {
  const known = [...(durations?.values() ?? [])].filter((d) => Number.isFinite(d) && d >= 0);
  const fallback = known.length > 0 ? known.reduce((a, b) => a + b, 0) / known.length : 1;
  const weight = (id: string): number => {
    const d = durations?.get(id);
    return d !== undefined && Number.isFinite(d) && d >= 0 ? d : fallback;
  };
  const byId = new Map(plan.tasks.map((t) => [t.id, t]));
  // The longest chain ending at each task, computed in dependency order.
  const best = new Map<string, { length: number; chain: string[] }>();
  for (const id of topologicalOrder(plan)) {
    let before: { length: number; chain: string[] } = { length: 0, chain: [] };
    for (const need of byId.get(id)!.needs) {
      const b = best.get(need)!;
      if (b.length > before.length) before = b;
    }
    best.set(id, { length: before.length + weight(id), chain: [...before.chain, id] });
  }
  let longest: { length: number; chain: string[] } = { length: -1, chain: [] };
  for (const t of plan.tasks) {
    const b = best.get(t.id)!;
    if (b.length > longest.length || (b.length === longest.length && b.chain.length > longest.chain.length)) longest = b;
  }
  return longest.chain;
}

/**
 * The cycles among the tasks, each as the ids along it with the first repeated at the end
 * (`a → b → c → a`: a needs b, b needs c, c needs a), one per group of tasks that need each other,
 * starting at the group's task earliest in the file. Needs of unknown tasks are left out.
 */
export function findCycles(plan: TaskGraph): string[][] {
  const needs = new Map(plan.tasks.map((t) => [t.id, t.needs]));
  const cycles: string[][] = [];
  const inCycle = new Set<string>();
  for (const start of plan.tasks.map((t) => t.id)) {
    if (inCycle.has(start)) continue;
    const cycle = shortestCycleFrom(start, needs);
    if (cycle) {
      cycles.push(cycle);
      for (const id of reachableBothWays(start, needs)) inCycle.add(id);
    }
  }
  return cycles;
}

/** The shortest path of needs from `start` back to itself (breadth first), or undefined. */
function shortestCycleFrom(start: string, needs: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const id = queue.shift()!;
    for (const n of needs.get(id) ?? []) {
      if (!needs.has(n)) continue;
      if (n === start) {
        const path = [start];
        for (let at = id; at !== start; at = from.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!from.has(n)) {
        from.set(n, id);
        queue.push(n);
      }
    }
  }
  return undefined;
}

/** The tasks `start` needs (transitively) that also need `start`: its group of the cycle. */
function reachableBothWays(start: string, needs: ReadonlyMap<string, readonly string[]>): Set<string> {
  const reach = (next: (id: string) => readonly string[]): Set<string> => {
    const seen = new Set<string>([start]);
    const stack = [start];
    while (stack.length > 0) {
      for (const n of next(stack.pop()!)) {
        if (!needs.has(n) || seen.has(n)) continue;
        seen.add(n);
        stack.push(n);
      }
    }
    return seen;
  };
  const forward = reach((id) => needs.get(id) ?? []);
  const backward = reach((id) => [...needs].filter(([, ns]) => ns.includes(id)).map(([t]) => t));
  return new Set([...forward].filter((id) => backward.has(id)));
}
