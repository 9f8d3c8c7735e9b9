import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { checkId } from '../base/ids';

/**
 * The wire protocol of job events (SPEC §6). Kept free of heavy imports: `mam event`, which runs
 * once per event inside an agent's turn, loads this file and little else.
 */

export const EVENT_NAMES = ['started', 'progress', 'heartbeat', 'permission_required', 'completed', 'error'] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** Payloads above this are dropped before they are parsed. */
export const MAX_PAYLOAD_BYTES = 512 * 1024;
export const MAX_DETAIL_CHARS = 16 * 1024;
export const MAX_REPORT_BYTES = 256 * 1024;

/** A job event as it travels. `sig` covers every other field (canonical JSON). */
export interface EventPayload {
  v: 1;
  job_id: string;
  event: EventName;
  /** Per job, strictly increasing, allocated under a lock on disk. */
  seq: number;
  /** Informational only: ordering and replay are judged by `seq`. */
  ts: string;
  sender: string;
  detail: string | null;
  /** `started --heartbeat N`: the agent's heartbeat period. */
  heartbeat?: number;
  /** `completed --report FILE`: the report travels with the event (remote runners share no disk). */
  report?: { name: string; content: string };
  sig?: string;
}

/** The retained `state` message of a job: its latest state, for late subscribers and other windows. */
export interface StatePayload {
  v: 1;
  job_id: string;
  state: string;
  reason: string | null;
  seq: number;
  /** Seqs below `seq` not yet applied (an event that overtook another left a gap). */
  missing?: number[];
  /**
   * Sent again by a subscriber that has just reconnected: "this is what I have". A remote runner
   * answers it by relaying every event of the job beyond `seq`, and those in `missing`, again:
   * what the broker threw away while the submitter was cut off is not lost.
   */
  resync?: boolean;
  ts: string;
  sig?: string;
}

export const topics = {
  events: (workspaceId: string, jobId: string) => (checkId(jobId), `mam/${workspaceId}/jobs/${jobId}/events`),
  state: (workspaceId: string, jobId: string) => (checkId(jobId), `mam/${workspaceId}/jobs/${jobId}/state`),
  allEvents: (workspaceId: string) => `mam/${workspaceId}/jobs/+/events`,
  allStates: (workspaceId: string) => `mam/${workspaceId}/jobs/+/state`,
  dispatch: (runner: string) => `mam/remote/${runner}/dispatch`,
  /** Where a submitter tells a runner that it cancelled a job the runner took. */
  cancel: (runner: string) => `mam/remote/${runner}/cancel`,
  /** `mam/<ws>/jobs/<job>/<kind>` → its parts, or undefined for a foreign topic. */
  parse(topic: string): { workspaceId: string; jobId: string; kind: 'events' | 'state' } | undefined {
    const m = /^mam\/([^/]+)\/jobs\/([^/]+)\/(events|state)$/.exec(topic);
    return m ? { workspaceId: m[1]!, jobId: m[2]!, kind: m[3] as 'events' | 'state' } : undefined;
  },
};

/**
 * A workspace's id on the broker: stable for one folder on one host, and distinct for two hosts
 * sharing a broker.
 */
export function workspaceIdOf(workspace: string): string {
  let real = workspace;
  try {
    real = fs.realpathSync(workspace);
  } catch {
    // not created yet: use the path as given
  }
  return createHash('sha256').update(`${os.hostname()}\0${real}`).digest('hex').slice(0, 16);
}

/** JSON with object keys sorted at every level and no white space: what signatures cover. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

/** HMAC-SHA256 of the canonical form of `payload` without its `sig`, as hex. */
export function signatureOf(payload: object, token: string): string {
  const { sig: _sig, ...rest } = payload as { sig?: unknown };
  return createHmac('sha256', token).update(canonicalJson(rest)).digest('hex');
}

/** Constant-time check of `payload.sig`, after a length check; a missing signature fails. */
export function verifySignature(payload: { sig?: unknown }, token: string): boolean {
  if (typeof payload.sig !== 'string' || !/^[0-9a-f]{64}$/.test(payload.sig)) return false;
  const expected = Buffer.from(signatureOf(payload, token), 'hex');
  const given = Buffer.from(payload.sig, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Why a message was refused; the subscriber logs these and keeps running. */
export type Rejection =
  | 'oversize'
  | 'malformed_json'
  | 'forbidden_key'
  | 'schema'
  | 'unknown_job'
  | 'bad_signature'
  | 'missing_signature'
  | 'stale_seq'
  | 'wrong_topic';

export class RejectedMessage extends Error {
  constructor(
    readonly reason: Rejection,
    message: string,
  ) {
    super(message);
    this.name = 'RejectedMessage';
  }
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const JOB_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Parses untrusted bytes into an object, refusing oversize input and prototype-polluting keys. */
export function parseUntrusted(bytes: Buffer | string): Record<string, unknown> {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  if (size > MAX_PAYLOAD_BYTES) throw new RejectedMessage('oversize', `payload of ${size} bytes exceeds ${MAX_PAYLOAD_BYTES}`);
  let forbidden: string | undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString(), (key, value: unknown) => {
      if (FORBIDDEN_KEYS.has(key)) forbidden = key;
      return value;
    });
  } catch (err) {
    throw new RejectedMessage('malformed_json', `not JSON: ${(err as Error).message}`);
  }
  if (forbidden !== undefined) throw new RejectedMessage('forbidden_key', `forbidden key '${forbidden}'`);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new RejectedMessage('schema', 'not a JSON object');
  return parsed as Record<string, unknown>;
}

/** Checks an event against the schema; every field typed, nothing extra. */
export function validateEvent(raw: Record<string, unknown>): EventPayload {
  const fail = (why: string): never => {
    throw new RejectedMessage('schema', why);
  };
  const allowed = new Set(['v', 'job_id', 'event', 'seq', 'ts', 'sender', 'detail', 'heartbeat', 'report', 'sig']);
  for (const key of Object.keys(raw)) if (!allowed.has(key)) fail(`unexpected field '${key.slice(0, 40)}'`);
  if (raw.v !== 1) fail('v must be 1');
  if (typeof raw.job_id !== 'string' || !JOB_ID.test(raw.job_id)) fail('job_id is not a job ID');
  if (!(EVENT_NAMES as readonly unknown[]).includes(raw.event)) fail(`unknown event '${String(raw.event).slice(0, 40)}'`);
  if (!Number.isSafeInteger(raw.seq) || (raw.seq as number) < 1) fail('seq must be a positive integer');
  if (typeof raw.ts !== 'string' || !ISO_TIME.test(raw.ts)) fail('ts must be an ISO-8601 UTC time');
  if (typeof raw.sender !== 'string' || raw.sender.length === 0 || raw.sender.length > 200) fail('sender must be a short string');
  if (raw.detail !== null && (typeof raw.detail !== 'string' || raw.detail.length > MAX_DETAIL_CHARS)) fail(`detail must be null or a string of at most ${MAX_DETAIL_CHARS} characters`);
  if (raw.heartbeat !== undefined && !(typeof raw.heartbeat === 'number' && raw.heartbeat > 0 && raw.heartbeat <= 86_400)) fail('heartbeat must be a number of seconds');
  if (raw.report !== undefined) {
    const r = raw.report as { name?: unknown; content?: unknown };
    if (typeof r !== 'object' || r === null || typeof r.name !== 'string' || typeof r.content !== 'string') fail('report must be {name, content}');
    if (Object.keys(r).length !== 2) fail('report has unexpected fields');
    if (!/^[A-Za-z0-9._-]{1,100}$/.test(r.name as string)) fail('report name must be a plain file name');
    if (Buffer.byteLength(r.content as string) > MAX_REPORT_BYTES) fail(`report exceeds ${MAX_REPORT_BYTES} bytes`);
  }
  if (raw.sig !== undefined && typeof raw.sig !== 'string') fail('sig must be a string');
  return raw as unknown as EventPayload;
}

export function validateState(raw: Record<string, unknown>): StatePayload {
  const fail = (why: string): never => {
    throw new RejectedMessage('schema', why);
  };
  const allowed = new Set(['v', 'job_id', 'state', 'reason', 'seq', 'missing', 'resync', 'ts', 'sig']);
  for (const key of Object.keys(raw)) if (!allowed.has(key)) fail(`unexpected field '${key.slice(0, 40)}'`);
  if (raw.v !== 1 || typeof raw.job_id !== 'string' || !JOB_ID.test(raw.job_id)) fail('not a state message');
  if (raw.missing !== undefined && !(Array.isArray(raw.missing) && raw.missing.length <= 10_000 && raw.missing.every((n) => Number.isSafeInteger(n) && (n as number) > 0))) fail('missing must be a list of seqs');
  if (raw.resync !== undefined && raw.resync !== true) fail('resync must be true when present');
  if (typeof raw.state !== 'string' || raw.state.length > 40) fail('state must be a string');
  if (raw.reason !== null && typeof raw.reason !== 'string') fail('reason must be a string or null');
  if (!Number.isSafeInteger(raw.seq) || (raw.seq as number) < 0) fail('seq must be a non-negative integer');
  if (typeof raw.ts !== 'string') fail('ts must be a string');
  return raw as unknown as StatePayload;
}
