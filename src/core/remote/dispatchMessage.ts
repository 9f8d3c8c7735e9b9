/**
 * The dispatch message that hands a job to a remote runner (SPEC §5 "Remote agents"): its shape,
 * its signature and its checks, shared by the submitter (`dispatch.ts`) and the runner
 * (`runner.ts`).
 *
 * The message carries the job's token in clear — the runner needs it to sign the agent's events —
 * so it is signed with MAM_DISPATCH_SECRET but not encrypted: use it only on a private broker.
 */
import { randomBytes } from 'node:crypto';
import { isoOn, systemClock, type Clock } from '../base/clock';
import { UsageError } from '../base/errors';
import { JOB_ID_PATTERN, nameProblem } from '../base/ids';
import { lit, nullable, num, obj, oneOf, optional, parse, refine, str, type Schema } from '../base/schema';
import type { ResolvedConfig } from '../config/settings';
import { JOB_TYPES, type JobTimers, type JobType } from '../store/jobSchema';
import { parseUntrusted, RejectedMessage, signatureOf, topics, verifySignature } from '../messaging/protocol';

export interface DispatchPayload {
  v: 1;
  job_id: string;
  /** The submitter's workspace: the runner relays the job's events to its topics. */
  workspace_id: string;
  runner: string;
  /** The runner's local session to use when the runner was not pinned to one (`--session`). */
  session?: string;
  task: string;
  appendix?: string;
  role: string | null;
  type: JobType;
  timers: JobTimers;
  /** The job's token: the agent signs its events with it and the submitter checks them. */
  token: string;
  /** Random per dispatch; with the job ID, what the runner remembers to refuse a replay. */
  nonce: string;
  ts: string;
  /** HMAC-SHA256 with the dispatch secret over the canonical JSON of every other field. */
  sig?: string;
}

/** Why a dispatch was refused: the message checks of protocol.ts, plus the runner's own. */
export type Refusal = RejectedMessage['reason'] | 'expired' | 'replay';

export class RefusedDispatch extends Error {
  constructor(
    readonly reason: Refusal,
    message: string,
  ) {
    super(message);
    this.name = 'RefusedDispatch';
  }
}

/** A secret shorter than this is a password someone can guess, and then forge dispatches. */
export const MIN_SECRET_CHARS = 16;
/** The task travels inside the dispatch; this keeps it well under the broker's packet limit. */
export const MAX_TASK_BYTES = 256 * 1024;
/**
 * Clocks of two hosts differ a little: a dispatch is taken until its T (the submitter's start
 * timeout) has passed by this much, then refused as expired (the submitter has given up on it).
 */
export const CLOCK_SKEW_MS = 60_000;

/**
 * Each dispatch has a retained topic of its own, `mam/remote/<runner>/dispatch/<job-id>`: two jobs
 * sent to a runner that is offline both wait for it (one shared retained topic would keep only
 * the last), and clearing one can never wipe another.
 */
export const dispatchTopics = perJobTopics(topics.dispatch);

/**
 * Cancels go to `mam/remote/<runner>/cancel/<job-id>`, retained, so that a runner offline at the
 * time still hears of it when it comes back; the runner clears each one it has acted on.
 */
export const cancelTopics = perJobTopics(topics.cancel);

type PerJobTopics = ReturnType<typeof perJobTopics>;

function perJobTopics(root: (runner: string) => string) {
  return {
    job: (runner: string, jobId: string) => `${root(runner)}/${jobId}`,
    all: (runner: string) => `${root(runner)}/+`,
    /** The job ID a topic of `runner` names, or undefined for any other topic. */
    jobOf(runner: string, topic: string): string | undefined {
      const prefix = `${root(runner)}/`;
      if (!topic.startsWith(prefix)) return undefined;
      const id = topic.slice(prefix.length);
      return JOB_ID_PATTERN.test(id) ? id : undefined;
    },
  };
}

/** MAM_DISPATCH_SECRET (setting `mam.remote.dispatchSecret`); a usage error when missing or weak. */
export function dispatchSecretOf(config: ResolvedConfig): string {
  const secret = config.values.dispatchSecret;
  if (secret === '') throw new UsageError('remote jobs need MAM_DISPATCH_SECRET (the same on both hosts) to sign dispatches; set it in the environment or .mam.env', 'no_dispatch_secret');
  if (secret.length < MIN_SECRET_CHARS) throw new UsageError(`MAM_DISPATCH_SECRET is ${secret.length} characters long; use at least ${MIN_SECRET_CHARS} (e.g. the output of 'openssl rand -hex 32')`, 'weak_dispatch_secret');
  return secret;
}

/** Builds and signs a dispatch, stamped with the submitter's clock. */
export function signedDispatch(fields: Omit<DispatchPayload, 'v' | 'nonce' | 'ts' | 'sig'>, secret: string, clock: Clock = systemClock): DispatchPayload {
  const payload: DispatchPayload = { v: 1, ...fields, nonce: randomBytes(16).toString('hex'), ts: isoOn(clock) };
  payload.sig = signatureOf(payload, secret);
  return payload;
}

/** When the runner stops taking the dispatch (by its own clock). */
export function expiresAt(d: DispatchPayload): number {
  return Date.parse(d.ts) + d.timers.start_timeout_s * 1000 + CLOCK_SKEW_MS;
}

/**
 * Reads a dispatch that arrived on `topic` for `runner`: size and JSON (parseUntrusted), schema,
 * topic, signature (constant time), age. Throws RefusedDispatch; replays are the caller's check.
 */
export function readDispatch(bytes: Buffer, topic: string, runner: string, secret: string, now = systemClock.now()): DispatchPayload {
  const { topicJob, raw } = parseRemote(bytes, topic, runner, dispatchTopics, 'dispatches');
  const d = validateDispatch(raw);
  if (d.job_id !== topicJob) throw new RefusedDispatch('wrong_topic', `dispatch of job ${d.job_id} on the topic of job ${topicJob}`);
  if (d.runner !== runner) throw new RefusedDispatch('wrong_topic', `dispatch for runner '${d.runner}' on the topic of '${runner}'`);
  if (d.sig === undefined) throw new RefusedDispatch('missing_signature', `unsigned dispatch of job ${d.job_id}`);
  if (!verifySignature(d, secret)) throw new RefusedDispatch('bad_signature', `bad signature on the dispatch of job ${d.job_id} (is MAM_DISPATCH_SECRET the same on both hosts?)`);
  if (expiresAt(d) < now) throw new RefusedDispatch('expired', `the dispatch of job ${d.job_id} from ${d.ts} is older than its start timeout; its submitter has given up on it`);
  return d;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const seconds = num({ above: 0, max: 365 * 86_400, why: 'must be a positive number of seconds' });
const workspaceId = str({ pattern: /^[A-Za-z0-9_-]{1,64}$/, why: 'is not a workspace ID' });
const time = refine(str({ pattern: ISO_TIME, why: 'must be an ISO-8601 UTC time' }), (ts) => (Number.isNaN(Date.parse(ts)) ? 'must be an ISO-8601 UTC time' : undefined));
const named = (why: string): Schema<string> => refine(str({ why }), (name) => (nameProblem(name) === undefined ? undefined : why));
/** Fields a message must not carry are named in one line. */
const noExtra = { extra: 'refuse', unknown: (key: string): [string, string] => ['', `unexpected field '${key.slice(0, 40)}'`] } as const;
const schemaFault = (problem: string): RefusedDispatch => new RefusedDispatch('schema', problem);

const dispatchSchema: Schema<DispatchPayload> = obj(
  {
    v: lit(1),
    job_id: str({ pattern: JOB_ID_PATTERN, why: 'is not a job ID' }),
    workspace_id: workspaceId,
    runner: named('is not a name'),
    session: optional(named('is not a session name')),
    task: refine(str({ why: `must be a non-empty string of at most ${MAX_TASK_BYTES} bytes` }), (task) =>
      task.trim() === '' || Buffer.byteLength(task) > MAX_TASK_BYTES ? `must be a non-empty string of at most ${MAX_TASK_BYTES} bytes` : undefined,
    ),
    appendix: optional(refine(str(), (appendix) => (Buffer.byteLength(appendix) > MAX_TASK_BYTES ? `must be at most ${MAX_TASK_BYTES} bytes` : undefined))),
    role: nullable(str({ max: 100, pattern: /^[^\u0000-\u001f\u007f]*$/ }), { why: 'must be null or a short string' }),
    type: oneOf(JOB_TYPES, `must be one of ${JOB_TYPES.join(', ')}`),
    timers: obj(
      { start_timeout_s: seconds, heartbeat_s: seconds, idle_timeout_s: seconds, timeout_s: seconds },
      { extra: 'refuse', unknown: () => ['timers', 'must hold exactly the four job timers'], why: 'must hold exactly the four job timers' },
    ),
    token: str({ pattern: /^[0-9a-f]{32,128}$/, why: 'must be hex' }),
    nonce: str({ pattern: /^[0-9a-f]{16,128}$/, why: 'must be hex' }),
    ts: time,
    sig: optional(str()),
  },
  noExtra,
);

/** Every field typed, nothing extra. */
export function validateDispatch(raw: Record<string, unknown>): DispatchPayload {
  return parse(dispatchSchema, raw, schemaFault, '');
}

/**
 * A submitter's word that it cancelled a job it sent to `runner`: the runner cancels its mirror of
 * the job, which frees its session. Signed with the dispatch secret like the dispatch itself. A
 * replay does nothing: a cancelled job stays cancelled, and job IDs are never reused.
 */
export interface CancelPayload {
  v: 1;
  job_id: string;
  /** The submitter's workspace: only the workspace that sent a job can cancel it. */
  workspace_id: string;
  runner: string;
  ts: string;
  sig?: string;
}

export function signedCancel(fields: Omit<CancelPayload, 'v' | 'ts' | 'sig'>, secret: string, clock: Clock = systemClock): CancelPayload {
  const payload: CancelPayload = { v: 1, ...fields, ts: isoOn(clock) };
  payload.sig = signatureOf(payload, secret);
  return payload;
}

const cancelSchema = (topicJob: string, runner: string): Schema<CancelPayload> =>
  obj(
    {
      v: lit(1),
      job_id: lit(topicJob, `must name the job of its topic, ${topicJob}`),
      workspace_id: workspaceId,
      runner: lit(runner, `must name the runner of its topic, '${runner}'`),
      ts: str({ pattern: ISO_TIME, why: 'must be an ISO-8601 UTC time' }),
      sig: optional(str()),
    },
    noExtra,
  );

/** Reads a cancel that arrived on `topic` for `runner`: size, JSON, schema, topic, signature. Throws RefusedDispatch. */
export function readCancel(bytes: Buffer, topic: string, runner: string, secret: string): CancelPayload {
  const { topicJob, raw } = parseRemote(bytes, topic, runner, cancelTopics, 'cancels');
  const cancel = parse(cancelSchema(topicJob, runner), raw, schemaFault, '');
  if (cancel.sig === undefined) throw new RefusedDispatch('missing_signature', `unsigned cancel of job ${topicJob}`);
  if (!verifySignature(cancel, secret)) throw new RefusedDispatch('bad_signature', `bad signature on the cancel of job ${topicJob} (is MAM_DISPATCH_SECRET the same on both hosts?)`);
  return cancel;
}

/** The job a message's topic names, and the message parsed as untrusted JSON (size, syntax, forbidden keys). */
function parseRemote(bytes: Buffer, topic: string, runner: string, kind: PerJobTopics, what: string): { topicJob: string; raw: Record<string, unknown> } {
  const topicJob = kind.jobOf(runner, topic);
  if (topicJob === undefined) throw new RefusedDispatch('wrong_topic', `${what} for ${runner} go to ${kind.job(runner, '<job-id>')}, not ${topic}`);
  try {
    return { topicJob, raw: parseUntrusted(bytes) };
  } catch (err) {
    if (err instanceof RejectedMessage) throw new RefusedDispatch(err.reason, err.message);
    throw err;
  }
}
