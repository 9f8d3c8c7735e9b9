/**
 * The review-report page (built to media/report.js, run inside the webview). It draws what the
 * extension sends — the task, rounds with each reviewer's verdict and report, rebuttals, the
 * identity of each round, and a timeline of the loop's jobs; or a plan's page (./planPage.ts). Structure is built with DOM calls and
 * textContent; agent text that is markdown (reports, the task, rebuttals) goes through
 * markdown-it with raw HTML off, then DOMPurify, and its links only ask the extension to open them.
 */
import DOMPurify from 'dompurify';
import { capitalize, el, fact, pill, type Tone } from './dom';
import { MARKDOWN_ATTRIBUTES, MARKDOWN_TAGS, renderMarkdown } from './markdown';
import { renderPlan } from './planPage';
import { isHostMessage, type PageMessage, type PageState, type ReportModel, type ReportReview, type ReportRound } from './reportProtocol';
import { formatDuration, loopSpan } from './timeline';
import { drawTimeline } from './timelineChart';

interface VsCodeApi {
  postMessage(message: PageMessage): void;
  getState(): unknown;
  setState(state: PageState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const root = document.getElementById('root')!;

function button(label: string, message: PageMessage, kind: 'primary' | 'secondary' = 'secondary'): HTMLButtonElement {
  const b = el('button', { type: 'button', class: kind }, label);
  b.addEventListener('click', () => vscode.postMessage(message));
  return b;
}

function action(label: string, message: PageMessage, title: string): HTMLAnchorElement {
  const a = el('a', { href: '#', role: 'button', title }, label);
  a.addEventListener('click', (e) => {
    e.preventDefault();
    vscode.postMessage(message);
  });
  return a;
}

/** Markdown from an agent or a user, as sanitized DOM; its links are opened by the extension, never navigated. */
function markdown(text: string): HTMLElement {
  const box = el('div', { class: 'markdown' });
  box.append(DOMPurify.sanitize(renderMarkdown(text), { ALLOWED_TAGS: MARKDOWN_TAGS, ALLOWED_ATTR: MARKDOWN_ATTRIBUTES, ALLOWED_URI_REGEXP: /^(?:(?:https|file):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i, RETURN_DOM_FRAGMENT: true }));
  for (const a of box.querySelectorAll('a')) {
    const href = a.getAttribute('href') ?? '';
    a.title = href;
    a.addEventListener('click', (e) => {
      e.preventDefault();
      vscode.postMessage({ type: 'openLink', href });
    });
  }
  return box;
}

const LOOP_TONE: Record<string, Tone> = { passed: 'pass', running: 'pending', failed: 'fail', cancelled: 'neutral' };
const ROUND_LOOK: Record<string, [string, Tone]> = {
  passed: ['Passed', 'pass'],
  not_passed: ['Not passed', 'fail'],
  reviewing: ['Reviewing', 'pending'],
  stale: ['Stale', 'warn'],
};

function render(model: ReportModel): void {
  vscode.setState({ folderIndex: model.folderIndex, loopId: model.loop.id });
  const { loop } = model;
  const span = loopSpan(model);
  const when = `${new Date(span.start).toLocaleString()} · ${span.running ? 'running for' : 'took'} ${formatDuration(span.end - span.start)}`;
  const header = el(
    'header',
    {},
    el('div', { class: 'title-row' }, el('h1', {}, model.title), pill(capitalize(loop.status), LOOP_TONE[loop.status] ?? 'neutral')),
    loop.reason ? el('p', { class: 'reason' }, loop.reason) : '',
    el(
      'dl',
      { class: 'facts' },
      ...fact('Creator', loop.creator),
      ...fact('Reviewers', loop.reviewers.join(', ')),
      ...(loop.planner ? fact('Planner', loop.planner) : []),
      ...fact('Started', when),
      ...fact('Checkout', el('span', { class: 'mono' }, loop.checkout)),
      ...(loop.base ? fact('Base', el('span', { class: 'mono' }, loop.base.slice(0, 12))) : []),
      ...fact('Loop', el('span', { class: 'mono' }, loop.id)),
      ...(model.usage.total ? fact('Tokens', model.usage.total) : []),
    ),
  );
  const task = el('section', { class: 'task' }, el('h2', {}, 'Task'), el('div', { class: 'card' }, markdown(loop.task)));
  const timeline = el('section', { class: 'timeline' }, el('h2', {}, 'Timeline'), drawTimeline(model, el, (jobId) => vscode.postMessage({ type: 'openLog', jobId })));
  const tokens = new Map(model.usage.rounds.map((r) => [r.n, r.text]));
  const rounds = el('section', { class: 'rounds' }, el('h2', {}, 'Rounds'), ...(model.rounds.length ? model.rounds.map((r) => renderRound(r, tokens.get(r.n) ?? null)) : [el('p', { class: 'muted' }, 'No review round yet.')]));
  root.replaceChildren(header, task, timeline, rounds);
}

function renderRound(round: ReportRound, tokens: string | null): HTMLElement {
  const [label, tone] = ROUND_LOOK[round.status] ?? [capitalize(round.status), 'neutral'];
  const head = el('div', { class: 'card-head' }, el('h3', {}, `Round ${round.n}`), pill(label, tone), el('span', { class: 'spacer' }), round.pinned ? button('Open Changes', { type: 'openChanges', round: round.n }) : '');
  const parts: Node[] = [head];
  if (round.status === 'stale') parts.push(el('p', { class: 'muted' }, 'The code changed during the review: its approvals were discarded.'));
  if (round.pinned) parts.push(el('p', { class: 'identity mono', title: `base ${round.identity.base}\nhead ${round.identity.head}\ntree ${round.identity.tree}` }, `base ${round.identity.base.slice(0, 12)} · head ${round.identity.head.slice(0, 12)} · tree ${round.identity.tree.slice(0, 12)}`));
  else parts.push(el('p', { class: 'identity muted' }, 'Reviewed what the worker reported: no snapshot.'));
  if (tokens) parts.push(el('p', { class: 'identity', title: 'Tokens of this round: the creator\u2019s work it reviewed and its reviews, from the agents\u2019 own records' }, `Tokens: ${tokens}`));
  if (round.rebut) parts.push(el('div', { class: 'rebut' }, el('div', { class: 'rebut-title' }, 'Creator’s rebuttal'), markdown(round.rebut)));
  if (round.children.length) parts.push(el('p', { class: 'muted' }, `Delegated jobs: ${round.children.map((c) => `${c.id} (${c.session}) ${c.state}`).join(', ')}`));
  if (round.files.length) {
    const list = el('ul', { class: 'files', 'aria-label': `Files changed in round ${round.n}` });
    for (const f of round.files) {
      list.append(el('li', {}, el('span', { class: 'mono status', title: fileStatus(f.status) }, f.status), action(f.label, { type: 'openFileDiff', round: round.n, path: f.path }, `Open the diff of ${f.label} in round ${round.n}`)));
    }
    parts.push(list);
  }
  parts.push(...round.reviews.map((r) => renderReview(round, r)));
  return el('article', { class: `card round ${round.status}`, 'aria-label': `Round ${round.n}: ${label}` }, ...parts);
}

function renderReview(round: ReportRound, review: ReportReview): HTMLElement {
  const verdict = review.verdict === 'PASS' ? pill('PASS', 'pass') : review.verdict === 'NOT PASS' ? pill('NOT PASS', 'fail') : pill(round.status === 'reviewing' ? 'Reviewing' : 'No verdict', 'pending');
  const head = el('div', { class: 'review-head' }, el('strong', {}, review.reviewer), verdict, el('span', { class: 'spacer' }), action('Show Log', { type: 'openLog', jobId: review.job_id }, `Show the log of job ${review.job_id}`));
  const body = review.text.trim() ? markdown(review.text) : el('p', { class: 'muted' }, round.status === 'reviewing' ? 'No report yet.' : 'No report.');
  return el('div', { class: 'review' }, head, body);
}

function fileStatus(status: string): string {
  return { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed' }[status[0] ?? ''] ?? status;
}

window.addEventListener('message', (e: MessageEvent) => {
  if (!isHostMessage(e.data)) return;
  if (e.data.type === 'model') render(e.data.model);
  else {
    vscode.setState({ folderIndex: e.data.plan.folderIndex, planId: e.data.plan.plan.id });
    renderPlan(root, e.data.plan, (message) => vscode.postMessage(message));
  }
});
vscode.postMessage({ type: 'ready' });
