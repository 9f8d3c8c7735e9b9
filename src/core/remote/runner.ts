/**
 * The runner's half of a remote job (`mam remote run --name R`): it takes signed dispatches for R
 * off the shared broker, runs each as a **mirror job** — same ID, same token — in a session of its
 * own workspace, delivered exactly like a local submit, and relays the mirror's events to the
 * submitter's workspace, where they are judged like a local agent's.
 */
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MqttClient } from 'mqtt';
import { dateOn } from '../base/clock';
import { DisposableBase, toDisposable } from '../base/disposable';
import { Emitter } from '../base/emitter';
import { errorMessage } from '../base/errors';
import { writeBrief } from '../jobs/brief';
import type { JobEngine } from '../jobs/jobEngine';
import { isTerminal, JOB_STATES, type JobOwner, type JobRecord, type MirrorOrigin } from '../store/jobSchema';
import { REASONS } from '../jobs/lifecycle';
import { deliverJob } from '../jobs/localTarget';
import { titleFromTask } from '../jobs/title';
import { connectClient, uniqueClientId } from '../messaging/mqttClient';
import { JobOutbox } from '../messaging/outbox';
import { isFinal, parseUntrusted, topics, validateState, verifySignature, type StatePayload } from '../messaging/protocol';
import { readJobToken } from '../store/jobToken';
import { newJobRecord } from '../store/newJobRecord';
import { cancelTopics, dispatchSecretOf, dispatchTopics, expiresAt, readCancel, readDispatch, RefusedDispatch, type CancelPayload, type DispatchPayload, type Refusal } from './dispatchMessage';
import { PresenceSpeaker } from './presenceSpeaker';
import { SeenDispatches } from './seenDispatches';
import { MirrorRelay } from './mirrorRelay';


export interface RemoteRunnerOptions {
  engine: JobEngine;
  /** The runner's name: it takes dispatches sent to `remote:<name>`. */
  name: string;
  /** The local session every job goes to; without it, the session the dispatch names. */
  session?: string;
  /** Take one dispatch, then no more (the caller exits when its job has ended). */
  once?: boolean;
}

export type { MirrorOrigin };

export interface RefusalNotice {
  /** What was refused: a dispatch, or a cancel of one. */
  kind: 'dispatch' | 'cancel';
  topic: string;
  jobId?: string;
  reason: Refusal;
  message: string;
}

export class RemoteRunner extends DisposableBase {
  private readonly refused = this._register(new Emitter<RefusalNotice>());
  private readonly accepted = this._register(new Emitter<{ job: JobRecord; from: string }>());
  private readonly finished = this._register(new Emitter<JobRecord>());
  /** A dispatch or a cancel was refused (nothing done); the message says why. */
  readonly onDidRefuse = this.refused.event;
  /** A dispatch was taken: its mirror job is registered and about to be delivered. */
  readonly onDidAccept = this.accepted.event;
  /** A mirror job ended, and its submitter has the outcome (or had two minutes to ask for it). */
  readonly onDidFinish = this.finished.event;

  private readonly owner: JobOwner = { pid: process.pid, host: os.hostname(), token: randomBytes(8).toString('hex') };
  private readonly seen: SeenDispatches;
  private secret = '';
  private client: MqttClient | undefined;
  /** Dispatches are checked one at a time: the seen set is read and written in order. */
  private intake: Promise<unknown> = Promise.resolve();
  private readonly work = new Set<Promise<unknown>>();
  /** The mirror jobs' events, on their way to their submitters. */
  private readonly outgoing: MirrorRelay;
  private closed = false;

  constructor(private readonly options: RemoteRunnerOptions) {
    super();
    this.seen = new SeenDispatches(options.engine.deps.controlPlane.paths, options.name);
    this.outgoing = new MirrorRelay({
      engine: options.engine,
      name: options.name,
      client: () => this.client,
      originOf: (job) => this.originOf(job),
      finished: (job) => this.finished.fire(job),
      track: (p) => this.track(p),
    });
  }

  get name(): string {
    return this.options.name;
  }

  /**
   * Connects (the workspace's broker, which must be the submitters' broker too), starts the timers
   * of its own mirror jobs, picks up the relaying of mirror jobs a previous run left open, and
   * subscribes to its dispatch topics; retained dispatches that waited for it arrive at once.
   */
  async start(): Promise<void> {
    const { engine } = this.options;
    const { controlPlane, logger } = engine.deps;
    this.secret = dispatchSecretOf(engine.deps.config);
    // Before connecting: the subscriber drains outboxes on connect, and those events need relaying.
    this._register(engine.ledger.onDidChangeJob(({ job }) => {
      if (this.originOf(job)) this.outgoing.relay(job.id);
    }));
    await engine.connect();
    engine.supervise({ ownerToken: this.owner.token });
    const speaker = (this.speaker = new PresenceSpeaker(this.name, this.secret, engine.clock, logger));
    const client = await connectClient(engine.endpoint!, { clientId: uniqueClientId(`runner-${this.name}`), logger, will: speaker.will });
    this.client = client;
    this._register(toDisposable(() => void client.endAsync(true).catch(() => undefined)));
    client.on('message', (topic: string, payload: Buffer) => {
      this.intake = this.intake.then(() => this.take(topic, payload)).catch((err: unknown) => logger.error(`runner ${this.name}: ${errorMessage(err)}`));
    });
    // Every mirror its submitter may still lack events of: open ones, and ended ones whose
    // submitter's state has not yet shown every event (a runner killed before it relayed them).
    for (const job of controlPlane.jobs.list().jobs) {
      const origin = this.originOf(job);
      if (!origin || origin.settled) continue;
      if (!isTerminal(job.state)) this.outgoing.relay(job.id);
      await this.followSubmitter(job);
    }
    await client.subscribeAsync([...this.dispatchFilters, cancelTopics.all(this.name)], { qos: 1 });
    await speaker.attach(client);
  }

  private speaker: PresenceSpeaker | undefined;

  private get dispatchFilters(): string[] {
    return [topics.dispatch(this.name), dispatchTopics.all(this.name)];
  }

  /** The topic filter it listens on, for messages to the user. */
  get listeningOn(): string {
    return dispatchTopics.all(this.name);
  }

  /**
   * Stops taking dispatches and lets the work in hand settle. A job still waiting for its session
   * is cancelled (its submitter hears so at once) rather than left for minutes; one being typed
   * is finished. Mirror jobs still open then lose their owner, so `mam monitor` or the extension on
   * this host enforces their timers; a runner started again relays their events.
   */
  async stop(): Promise<JobRecord[]> {
    this.closed = true;
    await this.client?.unsubscribeAsync([...this.dispatchFilters, cancelTopics.all(this.name)]).catch(() => undefined);
    await this.intake;
    const { controlPlane } = this.options.engine.deps;
    const mine = () => controlPlane.jobs.list().jobs.filter((j) => this.originOf(j) && !isTerminal(j.state) && j.owner?.token === this.owner.token);
    for (const job of mine().filter((j) => j.state === 'registered')) {
      await this.options.engine.ledger.transition(job.id, 'cancelled', REASONS.notDelivered, { when: (j) => j.state === 'registered', note: `runner '${this.name}' stopped before delivering it` });
    }
    await Promise.allSettled([...this.work]);
    await this.outgoing.settled();
    const open = mine();
    for (const job of open) await this.options.engine.ledger.patch(job.id, { owner: null });
    await this.outgoing.settled();
    // A stop on purpose: its jobs wait for a runner started again (their timers run meanwhile), so
    // it says `stopped` and leaves cleanly, and its submitters fail nothing.
    await this.speaker?.leave();
    return open;
  }

  /** Checks one dispatch message and, if it passes, runs it. */
  private async take(topic: string, bytes: Buffer): Promise<void> {
    // An empty payload is a retained message being cleared (by us or its submitter), not a message.
    if (bytes.length === 0) return;
    if (cancelTopics.jobOf(this.name, topic) !== undefined) return this.takeCancel(topic, bytes);
    if (topics.parse(topic)?.kind === 'state') return this.takeState(topic, bytes);
    if (this.closed) return;
    let d: DispatchPayload;
    try {
      d = readDispatch(bytes, topic, this.name, this.secret, this.options.engine.clock.now());
    } catch (err) {
      if (!(err instanceof RefusedDispatch)) throw err;
      // Only an authentic dispatch is cleared: a forged one does not get to make us act.
      if (err.reason === 'expired') await this.clear(topic);
      return this.refuse('dispatch', topic, dispatchTopics.jobOf(this.name, topic), err);
    }
    const { controlPlane } = this.options.engine.deps;
    if (!(await this.seen.remember(d, expiresAt(d), this.options.engine.clock.now()))) {
      await this.clear(topic);
      return this.refuse('dispatch', topic, d.job_id, new RefusedDispatch('replay', `the dispatch of job ${d.job_id} was taken before: a replay`));
    }
    await this.clear(topic);
    if (controlPlane.jobs.get(d.job_id)) return this.refuse('dispatch', topic, d.job_id, new RefusedDispatch('replay', `job ${d.job_id} already exists in this workspace (a replay, or the runner runs in the submitter's own workspace)`));
    if (this.options.once) {
      // One job only: leave every other dispatch on the broker for the next runner.
      this.closed = true;
      void this.client?.unsubscribeAsync(this.dispatchFilters).catch(() => undefined);
    }
    const job = await this.registerMirror(d);
    await this.followSubmitter(job);
    this.accepted.fire({ job, from: d.workspace_id });
    this.track(this.deliver(job));
  }

  /**
   * The submitter's state of a mirror job. One marked `resync` comes from a submitter that has just
   * reconnected: every event it has not applied (beyond its seq, and the gaps it lists) is relayed
   * again — the broker kept nothing for it while it was cut off, and the events' only other copy
   * is this host's outbox. It must be signed with the job's token: nobody else makes us resend.
   */
  private async takeState(topic: string, bytes: Buffer): Promise<void> {
    const where = topics.parse(topic)!;
    const { controlPlane, logger } = this.options.engine.deps;
    const job = controlPlane.jobs.get(where.jobId);
    const origin = job && this.originOf(job);
    if (!job || !origin || origin.workspace_id !== where.workspaceId) return;
    let state: StatePayload;
    try {
      state = validateState(parseUntrusted(bytes));
    } catch {
      return;
    }
    const token = readJobToken(controlPlane.paths, job.id);
    if (state.job_id !== job.id || !token || !verifySignature(state, token)) return;
    const told = JOB_STATES.find((s) => s === state.state);
    if (told !== undefined && isTerminal(told)) {
      // The submitter has the outcome: a --once runner may go.
      this.outgoing.acknowledge(job);
      // It ended there while the job is open here (its runner was lost, a timer there ran out first):
      // nobody waits on this mirror any more, and its session is free for the next job. Unless the
      // agent's own last word is here already, relayed before this mirror applied it: that ends it.
      const outbox = new JobOutbox(controlPlane.paths.jobDir(job.id));
      if (!isTerminal(job.state) && !outbox.events().some(isFinal)) {
        await this.options.engine.ledger.transition(job.id, 'cancelled', REASONS.endedBySubmitter, {
          when: (j) => !isTerminal(j.state),
          note: `its submitter ended the job ${told}${state.reason ? ` (${state.reason})` : ''}`,
        });
      }
      // What its audit log lacks still goes to it, late there but kept: a runner that was away when
      // the job ended there (killed, its host down) comes back with events it never relayed.
      const missing = new Set(state.missing ?? []);
      if (outbox.allocatedSeq() > state.seq || missing.size > 0) {
        this.outgoing.resend(job.id, state.seq, missing, outbox.events().map((p) => p.seq));
        return;
      }
      // It has every event there is: nothing to follow at the next start.
      const now = controlPlane.jobs.get(job.id);
      if (now && isTerminal(now.state) && !now.remote?.settled) await this.options.engine.ledger.patch(job.id, { remote: { ...origin, settled: true } });
      return;
    }
    if (!state.resync) return;
    const missing = new Set(state.missing ?? []);
    logger.info(`runner ${this.name}: job ${job.id}: its submitter has seq ${state.seq}${missing.size ? ` and misses ${[...missing].join(',')}` : ''}; relaying the rest again`);
    this.outgoing.resend(job.id, state.seq, missing);
  }

  /** Follows the submitter's state of an open mirror job (for resync), until the job is done here. */
  private async followSubmitter(job: JobRecord): Promise<void> {
    const origin = this.originOf(job);
    if (!origin || !this.client) return;
    await this.client.subscribeAsync(topics.state(origin.workspace_id, job.id), { qos: 1 }).catch((err: unknown) => this.options.engine.deps.logger.warn(`runner ${this.name}: cannot follow job ${job.id}: ${errorMessage(err)}`));
  }

  /**
   * A submitter cancelled a job it sent here: its mirror is cancelled too, which frees the session
   * (the agent finishes its turn; its later events are kept as late). Only the workspace that sent
   * the job can cancel it. An authentic cancel is cleared once read, whether or not the job is
   * known here: a runner that never took the job has nothing to do.
   */
  private async takeCancel(topic: string, bytes: Buffer): Promise<void> {
    let c: CancelPayload;
    try {
      c = readCancel(bytes, topic, this.name, this.secret);
    } catch (err) {
      if (!(err instanceof RefusedDispatch)) throw err;
      return this.refuse('cancel', topic, cancelTopics.jobOf(this.name, topic), err);
    }
    const { engine } = this.options;
    const job = engine.deps.controlPlane.jobs.get(c.job_id);
    const origin = job && this.originOf(job);
    if (job && origin && origin.workspace_id !== c.workspace_id) {
      return this.refuse('cancel', topic, c.job_id, new RefusedDispatch('wrong_topic', `workspace ${c.workspace_id} did not send job ${c.job_id}; ${origin.workspace_id} did`));
    }
    await this.clear(topic);
    if (!job || !origin || isTerminal(job.state)) return;
    await engine.ledger.transition(job.id, 'cancelled', REASONS.cancelledBySubmitter, { when: (j) => !isTerminal(j.state), note: `cancelled by its submitter (workspace ${c.workspace_id})` });
  }

  private async registerMirror(d: DispatchPayload): Promise<JobRecord> {
    const { engine } = this.options;
    const { controlPlane, cliPath } = engine.deps;
    const session = this.options.session ?? d.session;
    const briefPath = path.join(controlPlane.paths.jobDir(d.job_id), 'brief.md');
    const origin: MirrorOrigin = { runner: this.name, workspace_id: d.workspace_id, nonce: d.nonce, dispatched_ts: d.ts };
    const job = await engine.ledger.register(
      newJobRecord({
        id: d.job_id, session: session ?? `remote:${this.name}`, type: d.type, role: d.role, ...(session ? { target: { kind: 'local' as const, name: session } } : {}),
        timers: d.timers, brief: briefPath, owner: this.owner, title: titleFromTask(d.task), remote: origin, origin: { kind: 'remote', by: d.workspace_id },
      }, dateOn(engine.clock)),
      d.token,
    );
    writeBrief({ job, task: d.task, cliPath, workspace: controlPlane.workspace, heartbeatS: d.timers.heartbeat_s, ...(d.appendix !== undefined ? { appendix: d.appendix } : {}) }, briefPath);
    return job;
  }

  /** Delivers like a local submit; a job that cannot be delivered ends here and the relay says so. */
  private async deliver(job: JobRecord): Promise<void> {
    const { engine } = this.options;
    if (!job.target) {
      await engine.ledger.transition(job.id, 'cancelled', REASONS.targetNotFound, { note: `runner '${this.name}' has no --session and the submitter named none (submit to remote:${this.name}/SESSION)` });
      return;
    }
    try {
      await deliverJob(engine, { id: job.id, ownerToken: this.owner.token, briefPath: job.brief!, target: { name: job.target.name } });
    } catch (err) {
      // Whatever went wrong, the job must end here, so that the submitter hears of it.
      engine.deps.logger.error(`runner ${this.name}: job ${job.id}: delivery failed: ${errorMessage(err)}`);
      // One its agent has taken up was delivered: it goes on, and ends as its agent or its timers say.
      await engine.ledger.transition(job.id, 'cancelled', REASONS.notDelivered, { when: (j) => !isTerminal(j.state) && !j.started_at, note: `delivery failed: ${errorMessage(err)}` });
    }
  }

  private async clear(topic: string): Promise<void> {
    try {
      await this.client!.publishAsync(topic, '', { qos: 1, retain: true });
    } catch (err) {
      this.options.engine.deps.logger.warn(`runner ${this.name}: could not clear the retained message on ${topic}: ${errorMessage(err)}`);
    }
  }

  private refuse(kind: RefusalNotice['kind'], topic: string, jobId: string | undefined, err: RefusedDispatch): void {
    this.refused.fire({ kind, topic, ...(jobId ? { jobId } : {}), reason: err.reason, message: err.message });
  }

  private originOf(job: JobRecord): MirrorOrigin | undefined {
    const origin = job.remote;
    return origin?.runner === this.name ? origin : undefined;
  }

  private track(p: Promise<unknown>): void {
    this.work.add(p);
    void p.finally(() => this.work.delete(p)).catch(() => undefined);
  }
}
