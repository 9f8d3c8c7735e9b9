import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { errorMessage } from '../base/errors';
import { checkId } from '../base/ids';
import { int, isRecord, lazy, list, lit, nullable, num, obj, oneOf, optional, parse, refine, str, type Schema } from '../base/schema';

/**
 * The wire protocol of job events (SPEC §6). Kept free of heavy imports: `mam event`, which runs
 * once per event inside an agent's turn, loads this file and little else.
 */

export const EVENT_NAMES = ['started', 'progress', 'heartbeat', 'permission_required', 'completed', 'error'] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export function isEventName(name: string): name is EventName {
  return EVENT_NAMES.some((e) => e === name);
}

/** Whether an event is its agent's last word on the job: it ends the job (completed, or failed by an error). */
export function isFinal(p: { event: EventName }): boolean {
  return p.event === 'completed' || p.event === 'error';
}

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
  /** A runner's retained word on itself: online when it connects, offline (its MQTT will) when it vanishes. */
  presence: (runner: string) => `mam/remote/${runner}/presence`,
  allPresence: 'mam/remote/+/presence',
  /** `mam/<ws>/jobs/<job>/<kind>` → its parts, or undefined for a foreign topic. */
  parse(topic: string): { workspaceId: string; jobId: string; kind: 'events' | 'state' } | undefined {
    const m = /^mam\/([^/]+)\/jobs\/([^/]+)\/(events|state)$/.exec(topic);
    return m ? { workspaceId: m[1]!, jobId: m[2]!, kind: m[3] === 'events' ? 'events' : 'state' } : undefined;
  },
};

/**
 * A workspace's id on the broker: stable for one folder on one host, and distinct for two hosts
 * sharing a broker.
 */
export function workspaceIdOf(workspace: string): string {
  const known = workspaceIds.get(workspace);
  if (known !== undefined) return known;
  let real = workspace;
  let found = false;
  try {
    real = fs.realpathSync(workspace);
    found = true;
  } catch {
    // not created yet: use the path as given
  }
  const id = bytesToHex(sha256(utf8ToBytes(`${os.hostname()}\0${real}`))).slice(0, 16);
  // Kept for a workspace that exists: a long-lived publisher (the heartbeat service, a runner) names
  // the same few workspaces at every event, and resolving the path is three syscalls each time.
  if (found && workspaceIds.size < 64) workspaceIds.set(workspace, id);
  return id;
}

/** Workspace IDs this process computed, by the path it was given. */
const workspaceIds = new Map<string, string>();

/** JSON with object keys sorted at every level and no white space: what signatures cover. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (!isRecord(value)) return JSON.stringify(value) ?? 'null';
  const entries = Object.keys(value)
    .filter((k) => value[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`);
  return `{${entries.join(',')}}`;
}

/**
 * HMAC-SHA256 of the canonical form of `payload` without its `sig`, as hex. Computed by
 * @noble/hashes, not node:crypto: every `mam event` signs, and loading node:crypto costs a cold
 * process 5.4 ms of its ~40 (docs/benchmarks.md); the same HMAC in JavaScript costs it a fraction.
 */
export function signatureOf(payload: { sig?: unknown }, token: string): string {
  const { sig: _sig, ...rest } = payload;
  return bytesToHex(hmac(sha256, utf8ToBytes(token), utf8ToBytes(canonicalJson(rest))));
}

/** Constant-time check of `payload.sig`, after a length check; a missing signature fails. */
export function verifySignature(payload: { sig?: unknown }, token: string): boolean {
  if (typeof payload.sig !== 'string' || !/^[0-9a-f]{64}$/.test(payload.sig)) return false;
  const expected = signatureOf(payload, token);
  // Every character compared whatever the first difference (both are 64 lowercase hex digits).
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ payload.sig.charCodeAt(i);
  return diff === 0;
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
    throw new RejectedMessage('malformed_json', `not JSON: ${errorMessage(err)}`);
  }
  if (forbidden !== undefined) throw new RejectedMessage('forbidden_key', `forbidden key '${forbidden}'`);
  if (!isRecord(parsed)) throw new RejectedMessage('schema', 'not a JSON object');
  return parsed;
}

const jobId = (): Schema<string> => str({ pattern: JOB_ID, why: 'is not a job ID' });
/** Fields a message must not carry are named in one line; the subscriber logs it and drops the message. */
const noExtra = { extra: 'refuse', unknown: (key: string): [string, string] => ['', `unexpected field '${key.slice(0, 40)}'`] } as const;

// Both are built on first use (lazy): `mam event` loads this file for every event but seldom reads a message.

/** A job event: every field typed, nothing extra. */
export const eventSchema: Schema<EventPayload> = /* @__PURE__ */ lazy(() => obj(
  {
    v: lit(1),
    job_id: jobId(),
    event: oneOf(EVENT_NAMES),
    seq: int({ min: 1, why: 'must be a positive integer' }),
    ts: str({ pattern: ISO_TIME, why: 'must be an ISO-8601 UTC time' }),
    sender: str({ min: 1, max: 200, why: 'must be a short string' }),
    detail: nullable(str({ max: MAX_DETAIL_CHARS }), { why: `must be null or a string of at most ${MAX_DETAIL_CHARS} characters` }),
    heartbeat: optional(num({ above: 0, max: 86_400, why: 'must be a number of seconds' })),
    report: optional(
      refine(
        obj({ name: str({ pattern: /^[A-Za-z0-9._-]{1,100}$/, why: 'must be a plain file name' }), content: str() }, { extra: 'refuse', why: 'must be {name, content}' }),
        (r) => (Buffer.byteLength(r.content) > MAX_REPORT_BYTES ? `exceeds ${MAX_REPORT_BYTES} bytes` : undefined),
      ),
    ),
    sig: optional(str()),
  },
  noExtra,
));

/** A retained state message. */
export const stateSchema: Schema<StatePayload> = /* @__PURE__ */ lazy(() => obj(
  {
    v: lit(1),
    job_id: jobId(),
    state: str({ max: 40 }),
    reason: nullable(str()),
    seq: int({ min: 0, why: 'must be a non-negative integer' }),
    missing: optional(list(int({ min: 1 }), { max: 10_000, why: 'must be a list of seqs' })),
    resync: optional(lit(true, 'must be true when present')),
    ts: str(),
    sig: optional(str()),
  },
  noExtra,
));

const schemaFault = (problem: string): RejectedMessage => new RejectedMessage('schema', problem);

/** Checks an event against the schema; every field typed, nothing extra. */
export function validateEvent(raw: Record<string, unknown>): EventPayload {
  return parse(eventSchema, raw, schemaFault, '');
}

export function validateState(raw: Record<string, unknown>): StatePayload {
  return parse(stateSchema, raw, schemaFault, '');
}
