/**
 * A plan's page in the report webview: the plan's state and facts, its tasks drawn as a graph of
 * their needs (columns by depth, ./planLayout.ts; edges in SVG behind the task cards), each task in
 * its state's colour, the critical path marked, and each task that has a review loop opening that
 * loop's report; then the tasks as a table, for reading and for screen readers. The cards are laid
 * out by CSS grid, so they take the editor's font at any size; the edges are drawn after, from
 * where the cards landed, and again when the page is resized.
 */
import { capitalize, el, fact, pill, svg, type Tone } from './dom';
import { edgePath, edgePorts, layoutPlan, pathEdges, type Box } from './planLayout';
import type { PlanModel, PlanTaskModel } from './planProtocol';
import type { PageMessage } from './reportProtocol';

const PLAN_TONE: Record<string, Tone> = { running: 'pending', landed: 'pass', failed: 'fail', cancelled: 'neutral' };
const TASK_TONE: Record<string, Tone> = { pending: 'neutral', running: 'pending', landed: 'pass', failed: 'fail', blocked: 'warn', budget_exceeded: 'warn', cancelled: 'neutral' };

/** `budget_exceeded` → `Over budget`, the rest capitalized. */
function stateLabel(state: string): string {
  return state === 'budget_exceeded' ? 'Over budget' : capitalize(state);
}

let resizeWatch: ResizeObserver | undefined;

export function renderPlan(root: HTMLElement, model: PlanModel, post: (message: PageMessage) => void): void {
  const { plan } = model;
  const logButton = el('button', { type: 'button', class: 'secondary' }, 'Show Run Log');
  logButton.addEventListener('click', () => post({ type: 'openPlanLog' }));
  const header = el(
    'header',
    {},
    el('div', { class: 'title-row' }, el('h1', {}, plan.title), pill(stateLabel(plan.status), PLAN_TONE[plan.status] ?? 'neutral'), el('span', { class: 'spacer' }), logButton),
    plan.reason ? el('p', { class: 'reason' }, plan.reason) : '',
    el(
      'dl',
      { class: 'facts' },
      ...fact('Tasks', plan.landed),
      ...fact('Into', el('span', { class: 'mono' }, plan.into)),
      ...fact('At once', `at most ${plan.max_parallel} task${plan.max_parallel === 1 ? '' : 's'}`),
      ...(plan.runner ? fact('Runner', plan.runner) : []),
      ...fact('Started', new Date(plan.created_at).toLocaleString()),
      ...(plan.tokens ? fact('Tokens', plan.tokens.toLocaleString('en-US')) : []),
      ...fact('Plan', el('span', { class: 'mono' }, plan.id)),
    ),
  );
  const graph = drawGraph(model, post);
  const critical = model.critical.length > 1
    ? el('p', { class: 'legend', title: 'The longest chain of needs, by the time its tasks took (a task not run yet counts as the mean of the others): it bounds how soon the plan can end, however many tasks run at once.' }, el('span', { class: 'legend-critical', 'aria-hidden': 'true' }), `Critical path: ${model.critical.join(' → ')}`)
    : '';
  const tasks = el('section', { class: 'plan-tasks' }, el('h2', {}, 'Tasks'), graph.box, critical, el('h2', {}, 'Task list'), taskTable(model, post));
  root.replaceChildren(header, tasks);
  // Edges go where the cards landed: after layout, and again whenever the graph's size changes.
  resizeWatch?.disconnect();
  resizeWatch = new ResizeObserver(() => graph.drawEdges());
  resizeWatch.observe(graph.box);
  requestAnimationFrame(() => graph.drawEdges());
}

function drawGraph(model: PlanModel, post: (message: PageMessage) => void): { box: HTMLElement; drawEdges: () => void } {
  const layout = layoutPlan(model.tasks);
  const onPath = new Set(model.critical.length > 1 ? model.critical : []);
  const criticalEdges = pathEdges(model.critical);
  const state = new Map(model.tasks.map((t) => [t.id, t.state]));
  const grid = el('div', { class: 'plan-grid', role: 'list', 'aria-label': `${model.tasks.length} tasks, each after the tasks it needs` });
  grid.style.gridTemplateColumns = `repeat(${Math.max(1, layout.columns)}, minmax(14em, 18em))`;
  const cards = new Map<string, HTMLElement>();
  for (const task of model.tasks) {
    const card = taskCard(task, onPath.has(task.id), post);
    const cell = el('div', { class: 'plan-cell', role: 'listitem' }, card);
    const at = layout.at.get(task.id)!;
    // Grid cells as style properties, not attributes: the page's CSP allows no inline style attribute.
    cell.style.gridColumn = String(at.column + 1);
    cell.style.gridRow = String(at.row + 1);
    cards.set(task.id, card);
    grid.append(cell);
  }
  const edges = svg('svg', { class: 'plan-edges', 'aria-hidden': 'true' });
  const box = el('div', { class: 'plan-graph' }, grid);
  box.prepend(edges);
  const drawEdges = () => {
    const origin = grid.getBoundingClientRect();
    const boxOf = (id: string): Box | undefined => {
      const r = cards.get(id)?.getBoundingClientRect();
      return r ? { left: r.left - origin.left, top: r.top - origin.top, width: r.width, height: r.height } : undefined;
    };
    edges.setAttribute('width', String(Math.ceil(grid.scrollWidth)));
    edges.setAttribute('height', String(Math.ceil(grid.scrollHeight)));
    const defs = svg('defs', {}, arrow('arrow', 'edge-head'), arrow('arrow-critical', 'edge-head critical'));
    const ports = edgePorts(layout.edges, boxOf);
    const paths = layout.edges.flatMap(({ from, to }) => {
      const a = boxOf(from);
      const b = boxOf(to);
      const port = ports.get(`${from}→${to}`);
      if (!a || !b || !port) return [];
      const critical = criticalEdges.has(`${from}→${to}`);
      const waiting = state.get(from) !== 'landed';
      return [svg('path', { class: `plan-edge${critical ? ' critical' : ''}${waiting ? ' waiting' : ''}`, d: edgePath(a, b, port.y1, port.y2), 'marker-end': `url(#${critical ? 'arrow-critical' : 'arrow'})`, 'data-from': from, 'data-to': to })];
    });
    edges.replaceChildren(defs, ...paths);
  };
  return { box, drawEdges };
}

function arrow(id: string, cls: string): SVGMarkerElement {
  // In the page's units: a thicker (critical) edge keeps the same head.
  return svg('marker', { id, viewBox: '0 0 10 10', refX: '9', refY: '5', markerUnits: 'userSpaceOnUse', markerWidth: '10', markerHeight: '10', orient: 'auto-start-reverse' }, svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: cls }));
}

/** A task's card: its ID and state, its first line, what follows its state; a button to its loop's report once it has a loop. */
function taskCard(task: PlanTaskModel, critical: boolean, post: (message: PageMessage) => void): HTMLElement {
  const headline = task.task.split('\n')[0]!.trim();
  const parts = [
    el('span', { class: 'node-head' }, el('span', { class: 'node-id' }, task.id), pill(stateLabel(task.state), TASK_TONE[task.state] ?? 'neutral')),
    el('span', { class: 'node-task' }, headline || '\u00a0'),
    el('span', { class: 'node-detail' }, task.detail || '\u00a0'),
  ];
  const cls = `plan-node ${TASK_TONE[task.state] ?? 'neutral'}${critical ? ' critical' : ''}`;
  const spoken = `${task.id}: ${stateLabel(task.state)}${task.detail ? `, ${task.detail}` : ''}${critical ? '; on the critical path' : ''}`;
  const tip = [task.task.trim(), task.why && task.state !== 'running' ? `\n${task.why}` : '', task.loop_id ? '\nClick for its review report.' : ''].join('').trim();
  if (!task.loop_id) return el('div', { class: cls, 'data-task': task.id, 'data-state': task.state, title: tip, 'aria-label': spoken }, ...parts);
  const card = el('button', { type: 'button', class: cls, 'data-task': task.id, 'data-state': task.state, 'data-loop': task.loop_id, title: tip, 'aria-label': `${spoken}. Opens its review report.` }, ...parts);
  card.addEventListener('click', () => post({ type: 'openLoop', loopId: task.loop_id! }));
  return card;
}

function taskTable(model: PlanModel, post: (message: PageMessage) => void): HTMLElement {
  const head = el('tr', {}, ...['Task', 'State', 'Needs', 'Round', 'Landed', 'Tokens'].map((h) => el('th', { scope: 'col' }, h)));
  const rows = model.tasks.map((t) => {
    const name: Node = t.loop_id ? reportLink(t, post) : el('span', {}, t.id);
    return el(
      'tr',
      { 'data-task': t.id },
      el('th', { scope: 'row' }, name),
      el('td', {}, pill(stateLabel(t.state), TASK_TONE[t.state] ?? 'neutral'), t.detail ? el('span', { class: 'muted' }, ` ${t.detail}`) : ''),
      el('td', {}, t.needs.length > 0 ? t.needs.join(', ') : '—'),
      el('td', { class: 'num' }, t.round ? String(t.round) : '—'),
      el('td', { class: 'mono' }, t.landed_commit ? t.landed_commit.slice(0, 12) : '—'),
      el('td', { class: 'num' }, t.tokens ? t.tokens.toLocaleString('en-US') : '—'),
    );
  });
  return el('table', { class: 'plan-table' }, el('thead', {}, head), el('tbody', {}, ...rows));
}

function reportLink(task: PlanTaskModel, post: (message: PageMessage) => void): HTMLElement {
  const a = el('a', { href: '#', role: 'button', title: `Open the review report of ${task.id}` }, task.id);
  a.addEventListener('click', (e) => {
    e.preventDefault();
    post({ type: 'openLoop', loopId: task.loop_id! });
  });
  return a;
}
