import { ValidationError } from '../base/errors';
import { JOB_ID_PATTERN, printable } from '../base/ids';
import { validateJobUsage, type JobUsage } from './jobUsageSchema';

export const JOB_STATES = ['registered', 'dispatched', 'started', 'completed', 'failed', 'timeout', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const TERMINAL_STATES: ReadonlySet<JobState> = new Set(['completed', 'failed', 'timeout', 'cancelled']);
export const JOB_TYPES = ['direct', 'loop', 'discuss'] as const;
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
  [extra: string]: unknown;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export function validateJobRecord(raw: unknown, where: string): JobRecord {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ValidationError(`${where}: a job record must be a JSON object`);
  const r = raw as Record<string, unknown>;
  const fail = (field: string, why: string): never => {
    throw new ValidationError(`${where}: ${field} ${why}`);
  };
  if (typeof r.id !== 'string' || !JOB_ID_PATTERN.test(r.id)) fail('id', 'must be a job ID');
  if (typeof r.session !== 'string' || r.session.length === 0) fail('session', 'must be a non-empty string');
  if (!(JOB_TYPES as readonly unknown[]).includes(r.type)) fail('type', `must be one of ${JOB_TYPES.join(', ')}`);
  if (!(JOB_STATES as readonly unknown[]).includes(r.state)) fail('state', `must be one of ${JOB_STATES.join(', ')} (got '${printable(String(r.state))}')`);
  for (const f of ['role', 'reason', 'parent_job', 'detail']) {
    if (r[f] !== null && typeof r[f] !== 'string') fail(f, 'must be a string or null');
  }
  for (const f of ['created_at', 'updated_at']) {
    if (typeof r[f] !== 'string' || !ISO_TIME.test(r[f] as string)) fail(f, 'must be an ISO-8601 UTC time');
  }
  if (!Number.isInteger(r.seq) || (r.seq as number) < 0) fail('seq', 'must be a non-negative integer');
  validateJobUsage(r.usage, where);
  return r as JobRecord;
}
