import { ValidationError } from '../base/errors';
import { nameProblem, printable } from '../base/ids';

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

/**
 * Checks an untrusted value (a YAML entry, a row about to be written) against the schema and
 * returns it typed. The error names the session and the field.
 */
export function validateSessionRow(raw: unknown, where: string): SessionRow {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ValidationError(`${where}: a session must be a mapping of fields`);
  }
  const r = raw as Record<string, unknown>;
  const label = typeof r.name === 'string' ? `${where}: session '${printable(r.name)}'` : where;
  const fail = (field: string, why: string): never => {
    throw new ValidationError(`${label}: ${field} ${why}`);
  };
  for (const key of Object.keys(r)) {
    if (!(SESSION_FIELDS as readonly string[]).includes(key)) fail(key, 'is not a session field');
  }
  const str = (field: string): string => (typeof r[field] === 'string' ? (r[field] as string) : fail(field, 'must be a string'));
  const optStr = (field: string): string | null => (r[field] === null || r[field] === undefined ? null : str(field));
  const oneOf = <T extends string>(field: string, allowed: readonly T[]): T => {
    const v = str(field);
    return (allowed as readonly string[]).includes(v) ? (v as T) : fail(field, `must be one of ${allowed.join(', ')} (got '${printable(v)}')`);
  };
  const time = (field: string): string => (ISO_TIME.test(str(field)) ? str(field) : fail(field, 'must be an ISO-8601 UTC time'));

  const name = str('name');
  const problem = nameProblem(name, 'name');
  if (problem) fail('name', `is invalid: ${problem}`);
  const agent = str('agent');
  if (!AGENT_PATTERN.test(agent)) fail('agent', `'${printable(agent)}' is not an agent name`);
  const server = str('server');
  if (server.length === 0 || server.length > 128 || /[/\0]/.test(server)) fail('server', 'must be a non-empty name without / ');
  const cwd = str('cwd');
  if (!cwd.startsWith('/')) fail('cwd', 'must be an absolute path');
  if (typeof r.resumable !== 'boolean') fail('resumable', 'must be true or false');
  const pid = r.pid === null || r.pid === undefined ? null : r.pid;
  if (pid !== null && !(Number.isInteger(pid) && (pid as number) > 0)) fail('pid', 'must be a positive integer or null');
  let command: string[] | null = null;
  if (r.command !== null && r.command !== undefined) {
    if (!Array.isArray(r.command) || r.command.length === 0 || !r.command.every((w) => typeof w === 'string')) {
      fail('command', 'must be a non-empty list of strings');
    }
    command = [...(r.command as string[])];
  }
  return {
    name,
    agent,
    role: oneOf('role', SESSION_ROLES),
    mux: oneOf('mux', MUX_KINDS),
    server,
    target: optStr('target'),
    cwd,
    status: oneOf('status', SESSION_STATUSES),
    resumable: r.resumable as boolean,
    conversation_id: optStr('conversation_id'),
    pid: pid as number | null,
    created_at: time('created_at'),
    updated_at: time('updated_at'),
    current_job: optStr('current_job'),
    command,
  };
}
