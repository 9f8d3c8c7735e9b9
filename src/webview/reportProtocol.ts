/**
 * The one message protocol of the review-report webview, used by both sides: the extension
 * (src/views/reportPanel.ts) and the page's script (src/webview/report.ts, built to
 * media/report.js). Every message that crosses is checked by the `is…` guards on arrival.
 */

export interface ReportEvent {
  at: string;
  event: string;
}

export interface ReportJob {
  id: string;
  session: string;
  /** The loop step: plan, implement, r1:review:rev-a, r1:fix … */
  step: string;
  round: number | null;
  state: string;
  reason: string | null;
  dispatched_at: string | null;
  finished_at: string | null;
  events: ReportEvent[];
}

export interface ReportReview {
  reviewer: string;
  job_id: string;
  verdict: string | null;
  /** The reviewer's report (agent text: shown as text, never as HTML). */
  text: string;
}

export interface ReportRound {
  n: number;
  status: string;
  identity: { base: string; head: string; tree: string };
  rebut: string | null;
  children: Array<{ id: string; state: string; session: string }>;
  reviews: ReportReview[];
  files: Array<{ status: string; path: string }>;
}

export interface ReportModel {
  folderIndex: number;
  loop: {
    id: string;
    task: string;
    status: string;
    reason: string | null;
    creator: string;
    reviewers: string[];
    planner: string | null;
    checkout: string;
    base: string;
    created_at: string;
    updated_at: string;
  };
  rounds: ReportRound[];
  jobs: ReportJob[];
  /** When the model was made: open bars on the timeline end here. */
  now: string;
}

/** Extension → page. */
export type HostMessage = { type: 'model'; model: ReportModel };

/** Page → extension. */
export type PageMessage =
  | { type: 'ready' }
  | { type: 'openChanges'; round: number }
  | { type: 'openFileDiff'; round: number; path: string }
  | { type: 'openLog'; jobId: string };

/** What the page keeps across reloads (`setState`), for the panel serializer. */
export interface PageState {
  folderIndex: number;
  loopId: string;
}

const str = (v: unknown): v is string => typeof v === 'string';
const int = (v: unknown): v is number => Number.isInteger(v);

export function isPageMessage(m: unknown): m is PageMessage {
  if (typeof m !== 'object' || m === null) return false;
  const x = m as Record<string, unknown>;
  switch (x.type) {
    case 'ready':
      return Object.keys(x).length === 1;
    case 'openChanges':
      return int(x.round) && (x.round as number) > 0;
    case 'openFileDiff':
      return int(x.round) && (x.round as number) > 0 && str(x.path) && x.path.length < 4096 && !x.path.startsWith('/') && !x.path.split('/').includes('..');
    case 'openLog':
      return str(x.jobId) && /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/.test(x.jobId);
    default:
      return false;
  }
}

export function isHostMessage(m: unknown): m is HostMessage {
  if (typeof m !== 'object' || m === null) return false;
  const x = m as { type?: unknown; model?: { loop?: { id?: unknown }; rounds?: unknown; jobs?: unknown } };
  return x.type === 'model' && typeof x.model === 'object' && x.model !== null && str(x.model.loop?.id) && Array.isArray(x.model.rounds) && Array.isArray(x.model.jobs);
}

export function isPageState(s: unknown): s is PageState {
  return typeof s === 'object' && s !== null && int((s as PageState).folderIndex) && str((s as PageState).loopId) && /^l-[A-Za-z0-9-]{1,80}$/.test((s as PageState).loopId);
}
