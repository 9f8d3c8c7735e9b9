/**
 * Where the plan page puts each task: a layered drawing of the graph of needs, apart from drawing
 * it. A task's column is its depth (0 for a task that needs nothing, else one more than the deepest
 * task it needs), so every edge runs left to right; within a column, tasks sit in the order of the
 * mean row of what they need (ties in the plan file's order), which keeps most edges short and
 * uncrossed. Pure functions, shared by the page (./planPage.ts) and test/unit/planLayout.test.ts.
 */

export interface LayoutTask {
  readonly id: string;
  readonly needs: readonly string[];
}

export interface Placed {
  column: number;
  row: number;
}

export interface Layout {
  /** Each task's cell, by ID. */
  at: Map<string, Placed>;
  columns: number;
  /** The tallest column's number of tasks. */
  rows: number;
  /** Every need as an edge, from the needed task to the one that needs it, in the plan file's order. */
  edges: Array<{ from: string; to: string }>;
}

export function layoutPlan(tasks: readonly LayoutTask[]): Layout {
  const known = new Set(tasks.map((t) => t.id));
  const depth = new Map<string, number>();
  // Depths in dependency order; a task whose needs never all get a depth (a cycle, which a parsed plan has not) goes last.
  for (let progress = true; progress; ) {
    progress = false;
    for (const t of tasks) {
      if (depth.has(t.id)) continue;
      const needs = t.needs.filter((n) => known.has(n) && n !== t.id);
      if (!needs.every((n) => depth.has(n))) continue;
      depth.set(t.id, needs.length === 0 ? 0 : 1 + Math.max(...needs.map((n) => depth.get(n)!)));
      progress = true;
    }
  }
  const deepest = Math.max(-1, ...depth.values());
  for (const t of tasks) if (!depth.has(t.id)) depth.set(t.id, deepest + 1);
  const columns = tasks.length === 0 ? 0 : Math.max(...depth.values()) + 1;

  const at = new Map<string, Placed>();
  const order = new Map(tasks.map((t, i) => [t.id, i]));
  let rows = 0;
  for (let column = 0; column < columns; column++) {
    const here = tasks.filter((t) => depth.get(t.id) === column);
    const weight = (t: LayoutTask): number => {
      const rowsOfNeeds = t.needs.map((n) => at.get(n)?.row).filter((r): r is number => r !== undefined);
      return rowsOfNeeds.length > 0 ? rowsOfNeeds.reduce((a, b) => a + b, 0) / rowsOfNeeds.length : order.get(t.id)!;
    };
    const sorted = column === 0 ? here : [...here].sort((a, b) => weight(a) - weight(b) || order.get(a.id)! - order.get(b.id)!);
    sorted.forEach((t, row) => at.set(t.id, { column, row }));
    rows = Math.max(rows, sorted.length);
  }
  const edges = tasks.flatMap((t) => t.needs.filter((n) => known.has(n) && n !== t.id).map((n) => ({ from: n, to: t.id })));
  return { at, columns, rows, edges };
}

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * Where each edge leaves and enters its cards: a card's edges spread evenly down its side, in the
 * order of the cards at their other ends (top first), so that no two arrows meet in one point and
 * edges into one card do not cross each other there. Keys are `from→to`.
 */
export function edgePorts(edges: ReadonlyArray<{ from: string; to: string }>, boxOf: (id: string) => Box | undefined): Map<string, { y1: number; y2: number }> {
  const mid = (id: string) => {
    const b = boxOf(id);
    return b ? b.top + b.height / 2 : 0;
  };
  const spread = (id: string, others: string[]): Map<string, number> => {
    const b = boxOf(id);
    const sorted = [...others].sort((a, c) => mid(a) - mid(c));
    return new Map(sorted.map((o, i) => [o, b ? b.top + (b.height * (i + 1)) / (sorted.length + 1) : 0]));
  };
  const outs = new Map<string, Map<string, number>>();
  const ins = new Map<string, Map<string, number>>();
  for (const id of new Set(edges.map((e) => e.from))) outs.set(id, spread(id, edges.filter((e) => e.from === id).map((e) => e.to)));
  for (const id of new Set(edges.map((e) => e.to))) ins.set(id, spread(id, edges.filter((e) => e.to === id).map((e) => e.from)));
  return new Map(edges.map((e) => [`${e.from}→${e.to}`, { y1: outs.get(e.from)!.get(e.to)!, y2: ins.get(e.to)!.get(e.from)! }]));
}

/**
 * An edge's SVG path: from the needed task's right side to the dependant's left side (at `y1`
 * and `y2`; their middles when not given), as a curve that leaves and arrives horizontally.
 */
export function edgePath(from: Box, to: Box, y1 = from.top + from.height / 2, y2 = to.top + to.height / 2): string {
  const x1 = from.left + from.width;
  const x2 = to.left;
  const bend = Math.max(16, (x2 - x1) / 2);
  const r = (n: number) => Math.round(n * 10) / 10;
  return `M ${r(x1)} ${r(y1)} C ${r(x1 + bend)} ${r(y1)}, ${r(x2 - bend)} ${r(y2)}, ${r(x2)} ${r(y2)}`;
}

/** The edges of a path of tasks (the critical path: each task after the one before it), as `from→to` keys. */
export function pathEdges(path: readonly string[]): Set<string> {
  return new Set(path.slice(1).map((id, i) => `${path[i]}→${id}`));
}
