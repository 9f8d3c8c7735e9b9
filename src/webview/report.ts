/**
 * The review-report page (built to media/report.js, run inside the webview). It draws what the
 * extension sends — rounds × reviewers, verdicts, findings, rebuttals, the identity of each round,
 * and a timeline of the loop's jobs — with DOM calls and textContent only: agent text is never
 * parsed as HTML.
 */
import { isHostMessage, type PageMessage, type PageState, type ReportJob, type ReportModel, type ReportRound } from './reportProtocol';

interface VsCodeApi {
  postMessage(message: PageMessage): void;
  getState(): unknown;
  setState(state: PageState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const root = document.getElementById('root')!;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return node;
}

function badge(text: string, kind: string): HTMLElement {
  return el('span', { class: `badge ${kind}` }, text);
}

function verdictKind(verdict: string | null): string {
  return verdict === 'PASS' ? 'pass' : verdict === 'NOT PASS' ? 'fail' : 'pending';
}

function button(label: string, message: PageMessage): HTMLButtonElement {
  const b = el('button', { type: 'button' }, label);
  b.addEventListener('click', () => vscode.postMessage(message));
  return b;
}

function render(model: ReportModel): void {
  vscode.setState({ folderIndex: model.folderIndex, loopId: model.loop.id });
  const { loop } = model;
  const header = el(
    'header',
    {},
    el('h1', {}, loop.task.split('\n')[0] ?? loop.id),
    el('div', { class: 'meta' }, badge(loop.status, loop.status === 'passed' ? 'pass' : loop.status === 'running' ? 'pending' : 'fail'), ` loop ${loop.id}${loop.reason ? ` — ${loop.reason}` : ''}`),
    el('div', { class: 'meta' }, `creator ${loop.creator} · reviewers ${loop.reviewers.join(', ')}${loop.planner ? ` · planner ${loop.planner}` : ''}`),
    el('div', { class: 'meta mono' }, `${loop.checkout} · base ${loop.base.slice(0, 12)}`),
  );
  const timeline = el('section', { class: 'timeline' }, el('h2', {}, 'Timeline'), drawTimeline(model));
  const rounds = el('section', { class: 'rounds' }, el('h2', {}, 'Rounds'), ...(model.rounds.length ? model.rounds.map(renderRound) : [el('p', { class: 'muted' }, 'No review round yet.')]));
  root.replaceChildren(header, timeline, rounds);
}

function renderRound(round: ReportRound): HTMLElement {
  const identity = el('div', { class: 'identity mono' }, `base ${round.identity.base.slice(0, 12)} · head ${round.identity.head.slice(0, 12)} · tree ${round.identity.tree.slice(0, 12)}`);
  const statusText = round.status === 'stale' ? 'stale: the code changed during review, approvals discarded' : round.status.replace('_', ' ');
  const head = el('div', { class: 'round-head' }, el('h3', {}, `Round ${round.n}`), badge(statusText, round.status === 'passed' ? 'pass' : round.status === 'reviewing' ? 'pending' : 'fail'), button('Open Changes', { type: 'openChanges', round: round.n }));
  const parts: Node[] = [head, identity];
  if (round.rebut) parts.push(el('p', { class: 'rebut' }, el('strong', {}, 'Rebuttal: '), round.rebut));
  if (round.children.length) parts.push(el('p', { class: 'muted' }, `Delegated jobs: ${round.children.map((c) => `${c.id} (${c.session}) ${c.state}`).join(', ')}`));
  if (round.files.length) {
    const list = el('ul', { class: 'files' });
    for (const f of round.files) {
      const link = el('a', { href: '#' }, f.path);
      link.addEventListener('click', (e) => {
        e.preventDefault();
        vscode.postMessage({ type: 'openFileDiff', round: round.n, path: f.path });
      });
      list.append(el('li', {}, el('span', { class: 'mono status' }, f.status), ' ', link));
    }
    parts.push(list);
  }
  const table = el('table', {}, el('thead', {}, el('tr', {}, el('th', {}, 'Reviewer'), el('th', {}, 'Verdict'), el('th', {}, 'Report'))));
  const body = el('tbody');
  for (const r of round.reviews) {
    const log = el('a', { href: '#' }, 'log');
    log.addEventListener('click', (e) => {
      e.preventDefault();
      vscode.postMessage({ type: 'openLog', jobId: r.job_id });
    });
    body.append(el('tr', {}, el('td', {}, r.reviewer, el('div', { class: 'muted mono' }, r.job_id, ' ', log)), el('td', {}, badge(r.verdict ?? '…', verdictKind(r.verdict))), el('td', {}, el('pre', {}, r.text || '—'))));
  }
  table.append(body);
  parts.push(table);
  return el('article', { class: `round ${round.status}` }, ...parts);
}

/** Each job a bar from delivery to its end (or now), with a tick per event. */
function drawTimeline(model: ReportModel): Node {
  const jobs = model.jobs.filter((j) => j.dispatched_at);
  if (jobs.length === 0) return el('p', { class: 'muted' }, 'No job delivered yet.');
  const now = Date.parse(model.now);
  const t0 = Math.min(...jobs.map((j) => Date.parse(j.dispatched_at!)));
  const t1 = Math.max(now, ...jobs.map((j) => (j.finished_at ? Date.parse(j.finished_at) : now)));
  const span = Math.max(1, t1 - t0);
  const labelW = 220;
  const width = 760;
  const rowH = 22;
  const height = jobs.length * rowH + 24;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('class', 'chart');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `Timeline of ${jobs.length} jobs`);
  const x = (t: number) => labelW + ((t - t0) / span) * (width - labelW - 10);
  const add = (tag: string, attrs: Record<string, string | number>, text?: string) => {
    const node = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    svg.append(node);
    return node;
  };
  jobs.forEach((job: ReportJob, i) => {
    const y = i * rowH + 4;
    // `r2:review:rev-a` reads as `r2 review · rev-a`: the session says who.
    add('text', { x: 4, y: y + 14, class: 'label' }, `${job.step.split(':').slice(0, 2).join(' ')} · ${job.session}`);
    const start = x(Date.parse(job.dispatched_at!));
    const end = x(job.finished_at ? Date.parse(job.finished_at) : now);
    const bar = add('rect', { x: start, y: y + 3, width: Math.max(2, end - start), height: rowH - 8, rx: 3, class: `bar ${job.state}` });
    const title = document.createElementNS(ns, 'title');
    title.textContent = `${job.id}: ${job.state}${job.reason ? ` (${job.reason})` : ''}`;
    bar.append(title);
    for (const ev of job.events) add('line', { x1: x(Date.parse(ev.at)), x2: x(Date.parse(ev.at)), y1: y + 1, y2: y + rowH - 3, class: `tick ${ev.event}` });
  });
  add('text', { x: labelW, y: height - 4, class: 'axis' }, new Date(t0).toLocaleTimeString());
  add('text', { x: width - 10, y: height - 4, class: 'axis end' }, `${Math.round(span / 1000)} s`);
  return svg;
}

window.addEventListener('message', (e: MessageEvent) => {
  if (isHostMessage(e.data)) render(e.data.model);
});
vscode.postMessage({ type: 'ready' });
