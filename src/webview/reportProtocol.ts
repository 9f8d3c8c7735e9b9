/**
 * The one message protocol of the review-report webview, used by both sides: the extension
 * (src/views/loops/reportPanel.ts) and the page's script (src/webview/report.ts, built to
 * media/report.js). The webview shows a loop's report or a plan's page (./planProtocol.ts).
 * Every message that crosses is checked by the `is…` guards on arrival, each reading it with its
 * schema (src/core/base/schema.ts, which uses none of Node's APIs).
 */

import { bool, either, int, list, lit, matches, nullable, obj, refine, str, variant, type Schema } from '../core/base/schema';
import { LOOP_ID, PLAN_ID, planModel, type PlanModel } from './planProtocol';

export type { PlanModel, PlanTaskModel } from './planProtocol';

export interface ReportEvent {
  at: string;
  event: string;
}

export interface ReportJob {
  id: string;
  session: string;
  /** The loop step: plan, implement, r1:review:rev-a, r1:fix … */
  step: string;
  /** The step as the trees name it: Plan, Implement, Review · round 1, Fix · round 1 … */
  title: string;
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
  /** The reviewer's report: agent markdown, rendered with raw HTML off and sanitized. */
  text: string;
}

export interface ReportRound {
  n: number;
  status: string;
  identity: { base: string; head: string; tree: string };
  /** False for a round that pinned no snapshot (a `--type loop` job's): no identity, no changes to open. */
  pinned: boolean;
  rebut: string | null;
  children: Array<{ id: string; state: string; session: string }>;
  reviews: ReportReview[];
  /** `path` as git names it (sent back to open its diff); `label` is it as shown, control characters made visible. */
  files: Array<{ status: string; path: string; label: string }>;
}

export interface ReportModel {
  folderIndex: number;
  /** The loop's title: the first sentence of its task. */
  title: string;
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
  /** Tokens the loop's jobs spent (agents' own stores), as lines ready to show; null where nothing was measured. */
  usage: { total: string | null; rounds: Array<{ n: number; text: string | null }> };
  /** When the model was made: open bars on the timeline end here. */
  now: string;
}

/** Extension → page: a loop's report, or a plan's page. */
export type HostMessage = { type: 'model'; model: ReportModel } | { type: 'plan'; plan: PlanModel };

/** Page → extension. */
export type PageMessage =
  | { type: 'ready' }
  | { type: 'openChanges'; round: number }
  | { type: 'openFileDiff'; round: number; path: string }
  | { type: 'openLog'; jobId: string }
  /** A link in a report, task or rebuttal; the extension opens it only if `linkTarget` allows. */
  | { type: 'openLink'; href: string }
  /** From a plan's page: the report of a task's loop (the extension opens only a loop of that plan). */
  | { type: 'openLoop'; loopId: string }
  /** From a plan's page: its runner's log. */
  | { type: 'openPlanLog' };

/** What the page keeps across reloads (`setState`), for the panel serializer: the loop or the plan it shows. */
export type PageState = { folderIndex: number; loopId: string } | { folderIndex: number; planId: string };

const text = str();
const textOrNull = nullable(text);
const round = int({ min: 1 });

const pageMessage: Schema<PageMessage> = variant('type', {
  ready: obj({ type: lit('ready') }, { extra: 'refuse' }),
  openChanges: obj({ type: lit('openChanges'), round }),
  // A path inside the checkout, as git names it: never absolute, never climbing out.
  openFileDiff: obj({ type: lit('openFileDiff'), round, path: refine(str({ max: 4095 }), (p) => (p.startsWith('/') || p.split('/').includes('..') ? 'must stay inside the checkout' : undefined)) }),
  openLog: obj({ type: lit('openLog'), jobId: str({ pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/ }) }),
  openLink: obj({ type: lit('openLink'), href: refine(text, (href) => (linkTarget(href) === undefined ? 'is not a link the report opens' : undefined)) }),
  openLoop: obj({ type: lit('openLoop'), loopId: str({ pattern: LOOP_ID }) }, { extra: 'refuse' }),
  openPlanLog: obj({ type: lit('openPlanLog') }, { extra: 'refuse' }),
});

const reportModel: Schema<ReportModel> = obj({
  folderIndex: int({ min: 0 }),
  title: text,
  loop: obj({
    id: text,
    task: text,
    status: text,
    reason: textOrNull,
    creator: text,
    reviewers: list(text),
    planner: textOrNull,
    checkout: text,
    base: text,
    created_at: text,
    updated_at: text,
  }),
  rounds: list(
    obj({
      n: int(),
      status: text,
      identity: obj({ base: text, head: text, tree: text }),
      pinned: bool(),
      rebut: textOrNull,
      children: list(obj({ id: text, state: text, session: text })),
      reviews: list(obj({ reviewer: text, job_id: text, verdict: textOrNull, text })),
      files: list(obj({ status: text, path: text, label: text })),
    }),
  ),
  jobs: list(
    obj({
      id: text,
      session: text,
      step: text,
      title: text,
      round: nullable(int()),
      state: text,
      reason: textOrNull,
      dispatched_at: textOrNull,
      finished_at: textOrNull,
      events: list(obj({ at: text, event: text })),
    }),
  ),
  usage: obj({ total: textOrNull, rounds: list(obj({ n: int(), text: textOrNull })) }),
  now: text,
});

const hostMessage: Schema<HostMessage> = variant('type', {
  model: obj({ type: lit('model'), model: reportModel }),
  plan: obj({ type: lit('plan'), plan: planModel }),
});

const pageState: Schema<PageState> = either(obj({ folderIndex: int(), loopId: str({ pattern: LOOP_ID }) }), obj({ folderIndex: int(), planId: str({ pattern: PLAN_ID }) }), 'must name a loop or a plan');

/** A message from the page the extension acts on; anything else is ignored. */
export function isPageMessage(m: unknown): m is PageMessage {
  return matches(pageMessage, m);
}

/** A message from the extension the page renders. */
export function isHostMessage(m: unknown): m is HostMessage {
  return matches(hostMessage, m);
}

/** The state a page kept across a reload, for the panel serializer. */
export function isPageState(s: unknown): s is PageState {
  return matches(pageState, s);
}

/** Where a link in agent text may lead: a web page over https, or a file (with an optional `#L12`). */
export type LinkTarget = { kind: 'web'; url: string } | { kind: 'file'; path: string; line?: number };

/**
 * What a link's href (as markdown-it normalized it: percent-encoded) may open, or undefined: only
 * `https:` URLs, `file:` URLs and paths (relative ones are the loop's checkout's). Every other
 * scheme (`javascript:`, `command:`, `vscode:`, `http:`, `data:` …) and protocol-relative `//host`
 * links are refused, so the page shows them as text.
 */
export function linkTarget(href: string): LinkTarget | undefined {
  if (typeof href !== 'string' || href === '' || href.length > 2048 || /[\u0000-\u0020\u007f-\u009f\\]/.test(href)) return undefined;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(href)?.[1]?.toLowerCase();
  if (scheme === 'https') return /^https:\/\/[^/?#@]+([/?#]|$)/i.test(href) ? { kind: 'web', url: href } : undefined;
  if (scheme !== undefined && scheme !== 'file') return undefined;
  const rest = scheme === 'file' ? href.replace(/^file:(\/\/(localhost)?(?=\/))?/i, '') : href;
  if (rest.startsWith('//') || rest.startsWith('#') || rest.startsWith('?')) return undefined;
  const [pathPart = '', fragment = ''] = rest.split('#', 2);
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathPart.split('?')[0]!);
  } catch {
    return undefined;
  }
  if (decoded === '' || /[\u0000-\u001f\u007f-\u009f]/.test(decoded)) return undefined;
  const line = /^L(\d{1,7})\b/.exec(fragment)?.[1];
  return line ? { kind: 'file', path: decoded, line: Number(line) } : { kind: 'file', path: decoded };
}
