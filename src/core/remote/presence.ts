/**
 * A runner's presence on the shared broker, `mam/remote/<runner>/presence` (retained, QoS 1): the
 * runner says `online` each time it connects, `stopped` when it stops on purpose, and leaves
 * `offline` as its MQTT will, which the broker publishes for it when its connection ends without a
 * goodbye — the runner was killed or crashed, or its host was cut off for longer than 1.5 × the
 * keepalive. The judges of remote jobs (presenceWatch.ts) fail a lost runner's open jobs at once.
 *
 * Signed with MAM_DISPATCH_SECRET like dispatches, so that a client without the secret cannot make
 * a runner look lost. Each run of a runner is an `instance` (random) started at `since`; a message of
 * an earlier run than one already heard is stale (a replay, or the will of a connection the runner
 * has since replaced) and changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { isoOn, systemClock, type Clock } from '../base/clock';
import { nameProblem } from '../base/ids';
import { lit, obj, oneOf, optional, parse, refine, str, type Schema } from '../base/schema';
import { parseUntrusted, RejectedMessage, signatureOf, topics, verifySignature } from '../messaging/protocol';
import { RefusedDispatch } from './dispatchMessage';

export const PRESENCE_STATES = ['online', 'stopped', 'offline'] as const;
export type PresenceState = (typeof PRESENCE_STATES)[number];

export interface PresencePayload {
  v: 1;
  runner: string;
  state: PresenceState;
  /** This run of the runner: random, the same in its online, stopped and will messages. */
  instance: string;
  /** When this run started (the runner's clock): orders runs of one runner. */
  since: string;
  /** HMAC-SHA256 with the dispatch secret over the canonical JSON of every other field. */
  sig?: string;
}

/** One run of a runner: its three signed messages (the will is fixed when it connects, so it carries no time of its own). */
export class RunnerPresence {
  readonly instance = randomBytes(8).toString('hex');
  readonly since: string;

  constructor(
    readonly runner: string,
    private readonly secret: string,
    clock: Clock = systemClock,
  ) {
    this.since = isoOn(clock);
  }

  get topic(): string {
    return topics.presence(this.runner);
  }

  message(state: PresenceState): string {
    const payload: PresencePayload = { v: 1, runner: this.runner, state, instance: this.instance, since: this.since };
    payload.sig = signatureOf(payload, this.secret);
    return JSON.stringify(payload);
  }
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const presenceSchema = (runner: string): Schema<PresencePayload> =>
  obj(
    {
      v: lit(1),
      runner: lit(runner, `must name the runner of its topic, '${runner}'`),
      state: oneOf(PRESENCE_STATES, `must be one of ${PRESENCE_STATES.join(', ')}`),
      instance: str({ pattern: /^[0-9a-f]{8,64}$/, why: 'must be hex' }),
      since: refine(str({ pattern: ISO_TIME, why: 'must be an ISO-8601 UTC time' }), (t) => (Number.isNaN(Date.parse(t)) ? 'must be an ISO-8601 UTC time' : undefined)),
      sig: optional(str()),
    },
    { extra: 'refuse', unknown: (key: string): [string, string] => ['', `unexpected field '${key.slice(0, 40)}'`] },
  );

/** The runner a presence topic names, or undefined for any other topic. */
export function presenceRunnerOf(topic: string): string | undefined {
  const m = /^mam\/remote\/([^/]+)\/presence$/.exec(topic);
  return m && nameProblem(m[1]!) === undefined ? m[1] : undefined;
}

/** Reads a presence message: size, JSON, schema, topic, signature (constant time). Throws RefusedDispatch. */
export function readPresence(bytes: Buffer, topic: string, secret: string): PresencePayload {
  const runner = presenceRunnerOf(topic);
  if (runner === undefined) throw new RefusedDispatch('wrong_topic', `presence goes to mam/remote/<runner>/presence, not ${topic}`);
  let raw: Record<string, unknown>;
  try {
    raw = parseUntrusted(bytes);
  } catch (err) {
    if (err instanceof RejectedMessage) throw new RefusedDispatch(err.reason, err.message);
    throw err;
  }
  const p = parse(presenceSchema(runner), raw, (problem) => new RefusedDispatch('schema', problem), '');
  if (p.sig === undefined) throw new RefusedDispatch('missing_signature', `unsigned presence of runner '${runner}'`);
  if (!verifySignature(p, secret)) throw new RefusedDispatch('bad_signature', `bad signature on the presence of runner '${runner}' (is MAM_DISPATCH_SECRET the same on every host?)`);
  return p;
}

/**
 * What a presence message ends, given the last one heard from that runner (`prev`) and whether it
 * came as the retained message a new subscription gets (`retained`) rather than live:
 *
 * - `stale`: from an earlier run than `prev` (or the same word again): ignored.
 * - `none`: heard, nothing to end (online, stopped).
 * - `all`: the run we knew online is gone (or we hear it go live): every job dispatched to it fails.
 * - `started`: all we know is the retained word that the runner is offline, since some time: the
 *   jobs it had started fail (nobody relays them); one merely dispatched may be waiting for a
 *   runner that has not come back yet, as a dispatch may, and keeps its timers.
 */
export function presenceVerdict(prev: PresencePayload | undefined, next: PresencePayload, retained: boolean): 'stale' | 'none' | 'all' | 'started' {
  if (prev) {
    if (Date.parse(next.since) < Date.parse(prev.since)) return 'stale';
    if (next.instance === prev.instance && next.state === prev.state) return 'stale';
    // A run that said it stopped leaves no will (its DISCONNECT discards it): an offline of it anyway is not news.
    if (next.instance === prev.instance && prev.state === 'stopped') return 'stale';
  }
  if (next.state !== 'offline') return 'none';
  if (prev?.state === 'online' && prev.instance === next.instance) return 'all';
  return retained ? 'started' : 'all';
}
