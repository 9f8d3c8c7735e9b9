/**
 * The timeline's numbers, apart from drawing them: which span of time the axis covers, its ticks
 * and their labels, and what a bar's tooltip says. Pure functions of the report model, shared by
 * the page (src/webview/report.ts) and the tests.
 */
import type { ReportJob, ReportModel } from './reportProtocol';

export interface Tick {
  /** Milliseconds from the loop's start. */
  at: number;
  label: string;
}

export interface Axis {
  /** The axis runs from 0 to `length` ms after `start`. */
  start: number;
  length: number;
  step: number;
  ticks: Tick[];
}

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
/** Steps a reader counts in: 1-2-5 below a second, then 1, 2, 5, 10, 15, 30 s, the same in minutes, then hours. */
const STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500,
  S, 2 * S, 5 * S, 10 * S, 15 * S, 30 * S,
  MIN, 2 * MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN,
  H, 2 * H, 3 * H, 6 * H, 12 * H, 24 * H,
];

/**
 * The axis for `duration` ms: the largest step that still gives at least 4 intervals (so the
 * axis, rounded up to a whole step, is less than 1.25 × the duration), and a tick at each step.
 * Neighbouring steps differ at most 2.5×, so an axis has 4 to 10 intervals.
 */
export function axisFor(start: number, duration: number): Axis {
  const d = Math.max(duration, 1);
  const step = [...STEPS].reverse().find((s) => s * 4 <= d) ?? STEPS[0]!;
  const length = Math.max(step, Math.ceil(d / step) * step);
  const ticks: Tick[] = [];
  for (let i = 0; i * step <= length; i++) ticks.push({ at: i * step, label: tickLabel(i * step, step, length) });
  return { start, length, step, ticks };
}

/** One unit per axis, picked by its step and length: `0.5 s`, `45 s`, `2:30` (m:ss), `5 min`, `1.5 h`. */
export function tickLabel(at: number, step: number, length: number): string {
  if (step < S) return `${trim(at / S, step < 10 ? 3 : step < 100 ? 2 : 1)} s`;
  if (step < MIN) return length <= 2 * MIN ? `${at / S} s` : clock(at / S);
  if (step < H && length <= 2 * H) return `${at / MIN} min`;
  return `${trim(at / H, 2)} h`;
}

/** `m:ss` from seconds. */
function clock(seconds: number): string {
  return `${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, '0')}`;
}

function trim(n: number, digits: number): string {
  return String(Number(n.toFixed(digits)));
}

/** A duration as a person says it: `850 ms`, `8.4 s`, `42 s`, `3 min 5 s`, `1 h 4 min`. */
export function formatDuration(ms: number): string {
  if (ms < S) return `${Math.round(ms)} ms`;
  if (ms < 10 * S) return `${trim(ms / S, 1)} s`;
  const s = Math.round(ms / S);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
  const m = Math.round(s / 60);
  return m % 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m / 60} h`;
}

const time = (iso: string | null | undefined): number | undefined => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : undefined;
};

/**
 * The span the timeline shows: from the loop's start to its end — the end of its last job — or,
 * while it runs, to the model's `now`. A finished loop opened days later keeps its own length.
 */
export function loopSpan(model: ReportModel): { start: number; end: number; running: boolean } {
  const now = time(model.now) ?? Date.now();
  const running = model.loop.status === 'running';
  const starts = model.jobs.map((j) => time(j.dispatched_at)).filter((t): t is number => t !== undefined);
  const ends = model.jobs.flatMap((j) => [time(j.finished_at), ...j.events.map((e) => time(e.at))]).filter((t): t is number => t !== undefined);
  const start = Math.min(time(model.loop.created_at) ?? now, ...starts);
  const last = ends.length ? Math.max(...ends, ...starts) : (time(model.loop.updated_at) ?? now);
  const end = running ? Math.max(now, last) : Math.max(start, last);
  return { start, end, running };
}

/** Where a job's bar starts and ends (ms since the epoch); an open job runs to the span's end. */
export function barSpan(job: ReportJob, span: { end: number }): { from: number; to: number } | undefined {
  const from = time(job.dispatched_at);
  if (from === undefined) return undefined;
  const to = Math.min(span.end, Math.max(from, time(job.finished_at) ?? span.end));
  return { from, to };
}

/** A bar's tooltip: step, session, start (offset and clock time), duration, verdict, state. */
export function barTooltip(job: ReportJob, loopStart: number, span: { end: number; running: boolean }, verdict: string | null | undefined, timeOfDay: (t: number) => string): string {
  const bar = barSpan(job, span);
  const lines = [job.title, `Session: ${job.session}`];
  if (bar) {
    const open = !job.finished_at;
    lines.push(`Start: +${formatDuration(bar.from - loopStart)} (${timeOfDay(bar.from)})`);
    lines.push(`Duration: ${formatDuration(bar.to - bar.from)}${open && span.running ? ', still running' : ''}`);
  }
  if (verdict !== undefined) lines.push(`Verdict: ${verdict ?? 'pending'}`);
  lines.push(`State: ${job.state.replace(/_/g, ' ')}${job.reason ? ` (${job.reason})` : ''}`);
  lines.push(`Job: ${job.id}`);
  return lines.join('\n');
}
