import { ValidationError } from '../base/errors';
import { JOB_ID_PATTERN, printable } from '../base/ids';

export const JOB_STATES = ['registered', 'dispatched', 'started', 'completed', 'failed', 'timeout', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const TERMINAL_STATES: ReadonlySet<JobState> = new Set(['completed', 'failed', 'timeout', 'cancelled']);
export const JOB_TYPES = ['direct', 'loop', 'discuss'] as const;
export type JobType = (typeof JOB_TYPES)[number];

export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.has(state);
}

/**
 * The live job record, `.mam/jobs/<id>.json`. The fields below are the ones every reader relies on;
 * the jobs engine may keep more (they are preserved as they are).
 */
export interface JobRecord {
  id: string;
  /** The target as the user named it: `NAME`, `tmux:NAME`, `herdr:NAME` or `remote:NAME`. */
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
  return r as JobRecord;
}
