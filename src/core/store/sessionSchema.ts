import { ValidationError } from '../base/errors';
import { nameProblem, printable } from '../base/ids';
import { bool, int, isRecord, list, nullable, obj, oneOf, parse, refine, str, type Schema } from '../base/schema';

export const SESSION_ROLES = ['orchestrator', 'planner', 'developer', 'creator', 'reviewer', 'worker'] as const;
export const SESSION_STATUSES = ['starting', 'running', 'stopped', 'terminated', 'failed'] as const;
export const MUX_KINDS = ['tmux', 'herdr'] as const;

export type SessionRole = (typeof SESSION_ROLES)[number];
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type MuxKind = (typeof MUX_KINDS)[number];

/** One row of the session registry (SPEC §4). Field names are the on-disk names. */
export interface SessionRow {
  name: string;
  agent: string;
  role: SessionRole;
  mux: MuxKind;
  /** The multiplexer server (tmux -L socket name, or herdr session name). */
  server: string;
  /** The pane: tmux pane id (`%3`) or herdr pane id; null when the session has no pane. */
  target: string | null;
  cwd: string;
  status: SessionStatus;
  resumable: boolean;
  conversation_id: string | null;
  pid: number | null;
  created_at: string;
  updated_at: string;
  current_job: string | null;
  /** For the `shell` agent and command overrides: the argv the session was started with. */
  command: string[] | null;
}

/** Column order, shared by the DB table, the YAML mirror and comparisons. */
export const SESSION_FIELDS = [
  'name', 'agent', 'role', 'mux', 'server', 'target', 'cwd', 'status', 'resumable',
  'conversation_id', 'pid', 'created_at', 'updated_at', 'current_job', 'command',
] as const satisfies ReadonlyArray<keyof SessionRow>;

const AGENT_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const text = str();
const optionalText = nullable(text, { absent: true });
const time = str({ pattern: ISO_TIME, why: 'must be an ISO-8601 UTC time' });

const sessionRowSchema: Schema<SessionRow> = obj(
  {
    name: refine(text, (name) => {
      const problem = nameProblem(name, 'name');
      return problem && `is invalid: ${problem}`;
    }),
    agent: refine(text, (agent) => (AGENT_PATTERN.test(agent) ? undefined : `'${printable(agent)}' is not an agent name`)),
    role: oneOf(SESSION_ROLES),
    mux: oneOf(MUX_KINDS),
    server: str({ min: 1, max: 128, pattern: /^[^/\0]*$/, why: 'must be a non-empty name without / ' }),
    target: optionalText,
    cwd: refine(text, (cwd) => (cwd.startsWith('/') ? undefined : 'must be an absolute path')),
    status: oneOf(SESSION_STATUSES),
    resumable: bool(),
    conversation_id: optionalText,
    pid: nullable(int({ min: 1 }), { absent: true, why: 'must be a positive integer or null' }),
    created_at: time,
    updated_at: time,
    current_job: optionalText,
    command: nullable(list(text, { min: 1, why: 'must be a non-empty list of strings' }), { absent: true, why: 'must be a non-empty list of strings' }),
  },
  { extra: 'refuse', unknown: (key) => [key, 'is not a session field'], why: 'must be a mapping of fields' },
);

/**
 * Checks an untrusted value (a YAML entry, a row about to be written) against the schema and
 * returns it typed. The error names the session and the field.
 */
export function validateSessionRow(raw: unknown, where: string): SessionRow {
  const label = isRecord(raw) && typeof raw.name === 'string' ? `${where}: session '${printable(raw.name)}'` : where;
  return parse(sessionRowSchema, raw, (problem) => new ValidationError(`${label}: ${problem}`), 'a session');
}
