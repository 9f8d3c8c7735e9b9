import { ValidationError } from '../base/errors';
import { JOB_ID_PATTERN } from '../base/ids';
import { bool, int, lazy, list, lit, nullable, num, obj, oneOf, optional, parse, str, type Schema } from '../base/schema';
import { jobUsageSchema, type JobUsage } from './jobUsageSchema';

export const JOB_STATES = ['registered', 'dispatched', 'started', 'completed', 'failed', 'timeout', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const TERMINAL_STATES: ReadonlySet<JobState> = new Set(['completed', 'failed', 'timeout', 'cancelled']);
export const JOB_TYPES = ['direct', 'loop', 'discuss'] as const;
/**
 * Where a job came from: a person's command (`by`: `cli`, or `vscode:<window>` for a command in
 * a VS Code window), a review loop (`by`: its ID), the merge queue (its entry), a session's
 * onboarding (the session), a parent job (the parent), or another host (`remote`: its runner's
 * mirror). Views decide what to tell from it; nothing infers it from other records.
 */
export const JOB_ORIGINS = ['person', 'loop', 'merge', 'onboarding', 'parent', 'remote'] as const;
export type JobOriginKind = (typeof JOB_ORIGINS)[number];
export interface JobOrigin {
  kind: JobOriginKind;
  by: string | null;
}
export type JobType = (typeof JOB_TYPES)[number];

export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.has(state);
}

/** Registered, delivered or running: not ended yet. */
export function isOpen(state: JobState): boolean {
  return !TERMINAL_STATES.has(state);
}

/**
 * One version of a job record: every change the ledger writes moves its state, seq or updated_at
 * (the delivery too, for a patch in the same millisecond). Two copies with the same version are
 * the same change heard twice.
 */
export function jobVersion(job: Pick<JobRecord, 'state' | 'seq' | 'updated_at' | 'delivery'>): string {
  return `${job.state}|${job.seq}|${job.updated_at}|${job.delivery ?? ''}`;
}

/** An open job whose agent last said `permission_required`: it waits for a human. */
export function needsPermission(job: Pick<JobRecord, 'state' | 'last_event'>): boolean {
  return isOpen(job.state) && job.last_event === 'permission_required';
}

/** The job's timers, fixed when it is submitted (flags > env > settings > .mam.env > defaults). */
export interface JobTimers {
  /** T: seconds after delivery for `started`. */
  start_timeout_s: number;
  /** N: the heartbeat period asked of the agent. */
  heartbeat_s: number;
  /** K×N: seconds without any event before a started job times out. */
  idle_timeout_s: number;
  /** The wall-clock budget from delivery. */
  timeout_s: number;
}

/** Where the job runs: a local session (and its pane when dispatched), a remote runner, or a person. */
export interface TargetRecord {
  kind: 'local' | 'remote' | 'human';
  /** The session (local), runner (remote) or person (human) name. */
  name: string;
  mux?: 'tmux' | 'herdr';
  server?: string;
  pane?: string | null;
  /** The pane's process: the job fails at once with `agent_exited` when it is gone. */
  pane_pid?: number | null;
}

/** What `mam job verify --validate CMD` found, kept on the job. */
export interface VerifyResult {
  job_id: string;
  command: string[];
  exit_code: number;
  passed: boolean;
  at: string;
  output_tail: string;
}

/** Where a remote runner's mirror job came from (`remote` on its record). */
export interface MirrorOrigin {
  runner: string;
  /** The submitter's workspace, whose event topic gets the relayed events. */
  workspace_id: string;
  nonce: string;
  dispatched_ts: string;
  /** The job has ended here, and its submitter's state shows every event of it: a runner started again need not follow it. */
  settled?: true;
}

/** The process that submitted the job and waits on it; another process adopts the job only when it is gone. */
export interface JobOwner {
  pid: number;
  host: string;
  token: string;
}

/**
 * The live job record, `.mam/jobs/<id>.json`. The fields below are the ones every reader relies on;
 * the jobs engine may keep more (they are preserved as they are).
 */
export interface JobRecord {
  id: string;
  /** The target as the user named it: `NAME`, `tmux:NAME`, `herdr:NAME`, `remote:RUNNER[/SESSION]`. */
  session: string;
  type: JobType;
  role: string | null;
  state: JobState;
  /** Why the job ended or is waiting: `agent_blocked`, `deadline_timeout`, `session_busy`, … */
  reason: string | null;
  created_at: string;
  updated_at: string;
  /** Highest accepted event `seq`. */
  seq: number;
  parent_job: string | null;
  /** Where the job came from (absent in records written before it was kept). */
  origin?: JobOrigin;
  /** Last `detail` an event carried, for list views. */
  detail: string | null;
  target?: TargetRecord;
  timers?: JobTimers;
  /** Events are signed with the token in `.mam/jobs/<id>/token` and unsigned ones refused. */
  signed?: boolean;
  /** Absolute path of the brief the agent is told to read. */
  brief?: string;
  owner?: JobOwner | null;
  /**
   * How the prompt went in: typed (and taken), unconfirmed (typed, Enter not confirmed), or not at
   * all; for a remote job, published (the broker took its dispatch; the runner types it); for a
   * person, assigned.
   */
  delivery?: 'pending' | 'typed' | 'unconfirmed' | 'published' | 'assigned' | 'failed' | null;
  dispatched_at?: string | null;
  /** When the prompt was in (typed and Enter pressed): T and the budget count from here. */
  delivered_at?: string | null;
  started_at?: string | null;
  last_event_at?: string | null;
  finished_at?: string | null;
  /** The last event applied while the job was open (`permission_required`: it waits for a human). */
  last_event?: string | null;
  /**
   * What lists show (title.ts): `--title`, the loop step ("Review · round 2"), or the task's first
   * sentence, at most 60 characters. Records written before held the task's first line; read them
   * through `jobTitle`.
   */
  title?: string | null;
  /** Seqs skipped by a later event, still welcome (from the outbox) but never twice. */
  missing?: number[];
  /** Events that arrived after the job had ended, e.g. a completion after a timeout. */
  late_events?: Array<{ seq: number; event: string; at: string; detail?: string; report?: string }>;
  /** The last report handed in, as a path in the audit folder. */
  report?: string | null;
  /** When MAM ended the job itself (a timer, an undeliverable prompt): why, in a sentence. */
  why?: string | null;
  /** What the job's conversation spent, from the agent's own store (docs/usage.md); absent in older records. */
  usage?: JobUsage | null;
  /** The last `mam job verify --validate` of the job. */
  verify?: VerifyResult;
  /** A remote runner's mirror of a job: where it came from. */
  remote?: MirrorOrigin;
  [extra: string]: unknown;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
// Built on first use: `mam event` loads this file but reads a job record only for `started`.
const jobRecordSchema: Schema<JobRecord> = /* @__PURE__ */ lazy(() => {
  const text = str();
  const maybe = optional(nullable(text));
  const time = str({ pattern: ISO_TIME, why: 'must be an ISO-8601 UTC time' });
  const seconds = num({ min: 0, why: 'must be a number of seconds' });

  return obj({
    id: str({ pattern: JOB_ID_PATTERN, why: 'must be a job ID' }),
    session: str({ min: 1, why: 'must be a non-empty string' }),
    type: oneOf(JOB_TYPES, `must be one of ${JOB_TYPES.join(', ')}`),
    role: nullable(text),
    state: oneOf(JOB_STATES),
    reason: nullable(text),
    created_at: time,
    updated_at: time,
    seq: int({ min: 0, why: 'must be a non-negative integer' }),
    parent_job: nullable(text),
    origin: optional(obj({ kind: oneOf(JOB_ORIGINS), by: nullable(text) })),
    detail: nullable(text),
    target: optional(
      obj({
        kind: oneOf(['local', 'remote', 'human']),
        name: text,
        mux: optional(oneOf(['tmux', 'herdr'])),
        server: optional(text),
        pane: maybe,
        pane_pid: optional(nullable(int())),
      }),
    ),
    timers: optional(obj({ start_timeout_s: seconds, heartbeat_s: seconds, idle_timeout_s: seconds, timeout_s: seconds })),
    signed: optional(bool()),
    brief: optional(text),
    owner: optional(nullable(obj({ pid: int(), host: text, token: text }))),
    delivery: optional(nullable(oneOf(['pending', 'typed', 'unconfirmed', 'published', 'assigned', 'failed']))),
    dispatched_at: maybe,
    delivered_at: maybe,
    started_at: maybe,
    last_event_at: maybe,
    finished_at: maybe,
    last_event: maybe,
    title: maybe,
    missing: optional(list(int({ min: 1 }))),
    late_events: optional(list(obj({ seq: int(), event: text, at: text, detail: optional(text), report: optional(text) }))),
    report: maybe,
    why: maybe,
    usage: optional(nullable(jobUsageSchema)),
    verify: optional(obj({ job_id: text, command: list(text), exit_code: int(), passed: bool(), at: text, output_tail: text })),
    remote: optional(obj({ runner: text, workspace_id: text, nonce: text, dispatched_ts: text, settled: optional(lit(true)) })),
  }, { why: 'must be a JSON object' });
});

/** `raw` as a job record, or a ValidationError naming `where` and the field. Fields it does not know are kept. */
export function validateJobRecord(raw: unknown, where: string): JobRecord {
  return parse(jobRecordSchema, raw, (problem) => new ValidationError(`${where}: ${problem}`), 'a job record');
}
