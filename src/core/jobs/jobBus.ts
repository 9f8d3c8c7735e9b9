import * as os from 'node:os';
import type { MqttClient } from 'mqtt';
import { isoOn, systemClock, unrefTimer, type Clock } from '../base/clock';
import { DisposableBase, toDisposable, type Disposable } from '../base/disposable';
import { Emitter } from '../base/emitter';
import type { Logger } from '../base/log';
import type { ControlPlane } from '../store/controlPlane';
import { parseUntrusted, RejectedMessage, signatureOf, topics, validateEvent, validateState, verifySignature, type EventPayload, type StatePayload } from '../messaging/protocol';
import { isAlive } from '../base/process';
import { isTerminal, type JobRecord } from '../store/jobSchema';
import type { JobLedger } from './jobLedger';
import { errorMessage } from '../base/errors';

/** How long after its last event a job's outbox is still checked for events that did not arrive. */
const ACTIVE_MS = 10 * 60_000;

/** A listener on topics beside the job topics (JobBus.follow). */
interface Follower {
  filter: string;
  /** `retained`: the broker's retained message, sent because we subscribed; otherwise live. */
  handle(topic: string, bytes: Buffer, retained: boolean): Promise<void>;
}

/** Whether `topic` matches the MQTT topic filter `filter` (`+` one level, `#` the rest). */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length || (f[i] !== '+' && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

export interface RejectionNotice {
  topic: string;
  jobId?: string;
  reason: RejectedMessage['reason'];
  message: string;
}

/**
 * The subscriber (SPEC §5.3): takes every job event of the workspace off the broker, checks it
 * (size before parsing, JSON, schema, `__proto__` keys, topic, signature, seq) and hands the good
 * ones to the ledger, which applies each exactly once. It publishes the retained state of every job
 * it sees change, drains outboxes of events that never reached the broker, and keeps running
 * through any bad message.
 */
export class JobBus extends DisposableBase {
  private readonly rejected = this._register(new Emitter<RejectionNotice>());
  private readonly stateSeen = this._register(new Emitter<StatePayload>());
  readonly onDidReject = this.rejected.event;
  /** A retained or fresh state message: another process changed a job (views reload it from disk). */
  readonly onDidSeeState = this.stateSeen.event;
  /** Everything received before the last message that was not about one job (see inTurn). */
  private barrier: Promise<unknown> = Promise.resolve();
  /** Whether everything the barrier waits for was handled (nothing about no one job is pending). */
  private barrierOpen = true;
  /** The last message of each job still being handled. */
  private readonly turns = new Map<string, Promise<unknown>>();
  /** Jobs whose events arrived, with when: their outboxes are checked while the broker is up. */
  private readonly active = new Map<string, number>();

  constructor(
    private readonly controlPlane: ControlPlane,
    private readonly ledger: JobLedger,
    private readonly client: MqttClient,
    private readonly workspaceId: string,
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
  ) {
    super();
    const onMessage = (topic: string, payload: Buffer, packet: { retain?: boolean }): void => {
      const handled = this.inTurn(topics.parse(topic)?.jobId, () => this.handle(topic, payload, packet.retain === true));
      void handled.catch((err: unknown) => this.logger.error(`subscriber: ${errorMessage(err)}`));
    };
    client.on('message', onMessage);
    this._register(toDisposable(() => client.removeListener('message', onMessage)));
    this._register(ledger.onDidChangeJob(({ job, previous, patched }) => {
      // A patch (the prompt was typed, nobody waits any more) moves other processes' deadlines: tell them too.
      if (job.state !== previous || isTerminal(job.state) || patched) void this.publishState(job);
    }));
  }

  /** Subscribes to the workspace's job topics; resolves once the broker granted them. */
  async start(): Promise<void> {
    await this.client.subscribeAsync([topics.allEvents(this.workspaceId), topics.allStates(this.workspaceId)], { qos: 1 });
  }

  /** Waits until every message received so far has been handled. */
  settled(): Promise<unknown> {
    return Promise.all([this.barrier, ...this.turns.values()]);
  }

  /**
   * Orders the handling of messages: one job's in the order they came (seq order matters, and its
   * lock is taken for each), different jobs' side by side — while one waits for the disk to
   * fsync its audit line, the next job's event is taken on. A message about no one job (a runner's
   * presence, a follower's topic) waits for everything before it, and everything after waits for it.
   */
  private inTurn(jobId: string | undefined, handle: () => Promise<void>): Promise<unknown> {
    const settle = (p: Promise<unknown>): Promise<unknown> => p.catch(() => undefined);
    if (jobId === undefined) {
      const all = Promise.all([this.barrier, ...this.turns.values()].map(settle));
      this.turns.clear();
      const done = all.then(handle);
      const barrier = settle(done);
      this.barrier = barrier;
      this.barrierOpen = false;
      void barrier.then(() => {
        if (this.barrier === barrier) this.barrierOpen = true;
      });
      return done;
    }
    const before = this.turns.get(jobId);
    // Nothing before it to wait for: started now, inside the client's delivery of the message —
    // before the client writes its PUBACK, a syscall that came first on an event's path before.
    const done = !before && this.barrierOpen ? handle() : (before ? Promise.all([settle(before), this.barrier]) : this.barrier).then(handle);
    const turn = settle(done);
    this.turns.set(jobId, turn);
    void turn.then(() => {
      if (this.turns.get(jobId) === turn) this.turns.delete(jobId);
    });
    return done;
  }

  /**
   * Hears `filter` (other than the workspace's job topics) on this connection. Its messages are
   * handled in turn with the job events: one that arrived after an event is handled after that
   * event was applied, so a judgement it brings never overtakes a late event.
   */
  follow(filter: string, handle: Follower['handle']): Disposable {
    const follower: Follower = { filter, handle };
    this.followers.add(follower);
    void this.client.subscribeAsync(filter, { qos: 1 }).catch((err: unknown) => this.logger.warn(`cannot subscribe to ${filter}: ${errorMessage(err)}`));
    return toDisposable(() => {
      this.followers.delete(follower);
      if (this.client.connected) void this.client.unsubscribeAsync(filter).catch(() => undefined);
    });
  }

  private readonly followers = new Set<Follower>();

  private async handle(topic: string, bytes: Buffer, retained: boolean): Promise<void> {
    const where = topics.parse(topic);
    if (!where) {
      for (const f of this.followers) if (topicMatches(f.filter, topic)) await f.handle(topic, bytes, retained);
      return;
    }
    if (where.workspaceId !== this.workspaceId) return;
    if (where.kind === 'state') {
      if (bytes.length === 0) return; // a cleared retained message
      try {
        const state = validateState(parseUntrusted(bytes));
        if (state.job_id !== where.jobId) throw new RejectedMessage('wrong_topic', `state for ${state.job_id} on the topic of ${where.jobId}`);
        const token = this.tokenOf(state.job_id);
        if (token && !verifySignature(state, token)) throw new RejectedMessage('bad_signature', `bad signature on the state of job ${state.job_id}`);
        this.ledger.observe(state.job_id);
        this.stateSeen.fire(state);
      } catch (err) {
        this.reject(topic, where.jobId, err);
      }
      return;
    }
    let payload: EventPayload;
    try {
      payload = validateEvent(parseUntrusted(bytes));
      if (payload.job_id !== where.jobId) throw new RejectedMessage('wrong_topic', `event for ${payload.job_id} on the topic of ${where.jobId}`);
    } catch (err) {
      return this.reject(topic, where.jobId, err);
    }
    this.active.set(payload.job_id, this.clock.now());
    // One subscriber applies each event: the process that waits on the job (its submitter, a loop,
    // a runner), while it lives; everyone when nobody does. The others follow its state messages,
    // and take over from the outbox if it dies (drainActive). Otherwise every subscriber — the
    // extension, a monitor, the broker's warden — would take the job's lock for every event.
    const owner = this.controlPlane.jobs.peek(payload.job_id)?.owner;
    if (owner && owner.pid !== process.pid && owner.host === os.hostname() && isAlive(owner.pid)) return;
    const outcome = await this.ledger.applyEvent(payload);
    if (outcome.status === 'rejected') this.reject(topic, where.jobId, new RejectedMessage(outcome.reason, outcome.message));
    else if (outcome.status === 'duplicate') this.ledger.observe(payload.job_id); // another subscriber applied it first
    // A seq that overtook an earlier one left a gap; the earlier event, refused from the broker as
    // out of order, is in the agent's outbox already: take it from there now, not at a reconnect.
    if (outcome.status !== 'rejected' || outcome.reason === 'stale_seq') {
      const job = outcome.status === 'applied' ? outcome.job : this.controlPlane.jobs.get(payload.job_id);
      if (job && (job.missing ?? []).length > 0) await this.ledger.applyOutbox(job);
    }
  }

  private reject(topic: string, jobId: string | undefined, err: unknown): void {
    if (!(err instanceof RejectedMessage)) {
      this.logger.error(`subscriber: unexpected failure on ${topic}: ${errorMessage(err)}`);
      return;
    }
    this.logger.warn(`dropped a message on ${topic}: ${err.reason}: ${err.message}`);
    this.rejected.fire({ topic, ...(jobId ? { jobId } : {}), reason: err.reason, message: err.message });
  }

  /**
   * After a reconnect: the state of every open remote job again, marked `resync`, so that its
   * runner relays what this workspace may have missed while it was cut off (the broker keeps
   * nothing for a subscriber that is away, and a remote job's outbox lies on the runner's host).
   */
  resyncRemoteJobs(): void {
    for (const job of this.controlPlane.jobs.list().jobs) {
      if (job.target?.kind === 'remote' && !isTerminal(job.state)) void this.publishState(job, true);
    }
  }

  /**
   * Resolves once every state message this process has started to publish has been sent (or
   * failed), or after `boundMs`: with the broker away a QoS 1 publish waits for its return, and the
   * watchers find the change on disk anyway (they rescan).
   */
  async flush(boundMs = 2_000): Promise<void> {
    if (!this.client.connected) return;
    const deadline = this.clock.now() + boundMs;
    while (this.publishing.size > 0 && this.clock.now() < deadline) {
      let timer: unknown;
      const bound = new Promise((resolve) => (timer = unrefTimer(this.clock.setTimeout(() => resolve(undefined), Math.max(0, deadline - this.clock.now())))));
      await Promise.race([Promise.all([...this.publishing]), bound]);
      this.clock.clearTimeout(timer);
    }
  }

  private readonly publishing = new Set<Promise<void>>();

  /** Publishes the job's retained state message (signed when the job is). */
  private publishState(job: JobRecord, resync = false): Promise<void> {
    const sent = this.sendState(job, resync).finally(() => this.publishing.delete(sent));
    this.publishing.add(sent);
    return sent;
  }

  private async sendState(job: JobRecord, resync: boolean): Promise<void> {
    const jobId = job.id;
    const payload: StatePayload = {
      v: 1, job_id: jobId, state: job.state, reason: job.reason, seq: job.seq,
      ...((job.missing ?? []).length > 0 ? { missing: job.missing } : {}), ...(resync ? { resync: true } : {}), ts: isoOn(this.clock),
    };
    const token = this.tokenOf(jobId);
    if (token) payload.sig = signatureOf(payload, token);
    try {
      await this.client.publishAsync(topics.state(this.workspaceId, jobId), JSON.stringify(payload), { qos: 1, retain: true });
    } catch (err) {
      this.logger.debug(`retained state of ${jobId} not published: ${errorMessage(err)}`);
    }
  }

  /**
   * Applies, from disk, every event in an outbox that no subscriber has applied yet: those that
   * never reached a broker, and those the broker took while no subscriber was listening (a
   * completion after the submitter gave up). The disk, not the broker, is the record. A job is
   * looked at only when its seq counter is ahead of its record or its record misses a seq.
   */
  /**
   * Applies what the outboxes of the jobs whose events arrived lately hold beyond their records:
   * events the broker took but never passed on. Cheap: two small files per such job.
   */
  async drainActive(): Promise<void> {
    const now = this.clock.now();
    for (const [jobId, seen] of this.active) {
      const job = this.controlPlane.jobs.get(jobId);
      if (!job || isTerminal(job.state) || now - seen > ACTIVE_MS) {
        this.active.delete(jobId);
        continue;
      }
      const owner = job.owner;
      if (owner && owner.pid !== process.pid && owner.host === os.hostname() && isAlive(owner.pid)) continue; // its owner applies it
      await this.ledger.applyOutbox(job);
    }
  }

  async drainOutboxes(): Promise<number> {
    let applied = 0;
    for (const job of this.controlPlane.jobs.list().jobs) applied += await this.ledger.applyOutbox(job);
    return applied;
  }

  private tokenOf(jobId: string): string | undefined {
    return this.ledger.tokenOf(jobId);
  }
}
