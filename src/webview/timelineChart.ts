/**
 * The timeline of a loop's jobs, drawn as HTML (so its text keeps the editor's font size at any
 * width): one row per job — its step and session, then a bar from delivery to its end on an axis
 * from the loop's start to its end (or now, while it runs), with labelled ticks and gridlines.
 * Numbers come from ./timeline.ts.
 */
import type { ReportJob, ReportModel } from './reportProtocol';
import { axisFor, barSpan, barTooltip, formatDuration, loopSpan } from './timeline';

type Make = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Record<string, string>, ...children: Array<Node | string>) => HTMLElementTagNameMap[K];

/** Events worth a mark on a bar (heartbeats and progress would only be noise). */
const MARKED_EVENTS = new Set(['permission_required', 'error']);

export function drawTimeline(model: ReportModel, el: Make, onOpenLog: (jobId: string) => void): HTMLElement {
  const jobs = model.jobs.filter((j) => j.dispatched_at);
  if (jobs.length === 0) return el('p', { class: 'muted' }, 'No job delivered yet.');
  const span = loopSpan(model);
  const axis = axisFor(span.start, span.end - span.start);
  const pct = (t: number) => `${(Math.min(Math.max(t - axis.start, 0), axis.length) / axis.length) * 100}%`;
  const verdicts = new Map(model.rounds.flatMap((r) => r.reviews.map((v) => [v.job_id, v.verdict] as const)));
  const timeOfDay = (t: number) => new Date(t).toLocaleTimeString();

  const grid = () => el('div', { class: 'tl-grid', 'aria-hidden': 'true' }, ...axis.ticks.map((t) => el('span', { 'data-left': pct(axis.start + t.at) })));
  const rows = jobs.map((job: ReportJob) => {
    const bar = barSpan(job, span)!;
    const isReview = /^r\d+:review:/.test(job.step);
    const tip = barTooltip(job, span.start, span, isReview ? (verdicts.get(job.id) ?? null) : undefined, timeOfDay);
    const button = el('button', { type: 'button', class: `tl-bar ${stateClass(job)}`, title: tip, 'aria-label': tip.replace(/\n/g, '; '), 'data-left': pct(bar.from), 'data-width': `${((bar.to - bar.from) / axis.length) * 100}%` });
    button.addEventListener('click', () => onOpenLog(job.id));
    for (const ev of job.events) {
      const at = Date.parse(ev.at);
      if (!MARKED_EVENTS.has(ev.event) || !Number.isFinite(at) || at < bar.from || at > bar.to) continue;
      button.append(el('span', { class: `tl-mark ${ev.event}`, 'data-left': `${((at - bar.from) / Math.max(1, bar.to - bar.from)) * 100}%` }));
    }
    return el(
      'div',
      { class: 'tl-row', role: 'listitem' },
      el('div', { class: 'tl-label', title: `${job.title} · ${job.session}` }, el('span', { class: 'tl-step' }, job.title), el('span', { class: 'tl-session' }, job.session)),
      el('div', { class: 'tl-track' }, grid(), button),
    );
  });
  const ticks = el(
    'div',
    { class: 'tl-row tl-axis', 'aria-hidden': 'true' },
    el('div', { class: 'tl-label' }),
    el('div', { class: 'tl-track' }, ...axis.ticks.map((t, i) => el('span', { class: `tl-tick${i === 0 ? ' first' : i === axis.ticks.length - 1 ? ' last' : ''}`, 'data-left': pct(axis.start + t.at) }, t.label))),
  );
  const summary = span.running ? `Running for ${formatDuration(span.end - span.start)}` : `Took ${formatDuration(span.end - span.start)}`;
  const chart = el('div', { class: 'tl', role: 'list', 'aria-label': `Timeline of ${jobs.length} jobs. ${summary}.`, 'data-axis-ms': String(axis.length), 'data-span-ms': String(span.end - span.start) }, ...rows, ticks);
  // Positions are set as style properties, not style attributes: the page's CSP allows no inline style attribute.
  for (const node of chart.querySelectorAll<HTMLElement>('[data-left]')) {
    node.style.left = node.dataset.left!;
    if (node.dataset.width) node.style.width = `max(3px, ${node.dataset.width})`;
  }
  return chart;
}

function stateClass(job: ReportJob): string {
  if (job.state === 'completed') return 'done';
  if (job.state === 'failed' || job.state === 'timeout') return 'failed';
  if (job.state === 'cancelled') return 'cancelled';
  return 'open';
}
