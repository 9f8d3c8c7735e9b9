/**
 * The runner's relay of a mirror job's events to the workspace that sent the job: verbatim from the
 * job's outbox, in seq order, again where the submitter says it lacks them; and when the mirror has
 * ended and the submitter has the outcome, the one word that the job is finished here.
 */
import * as os from 'node:os';
import type { MqttClient } from 'mqtt';
import { unrefTimer } from '../base/clock';
import { errorMessage } from '../base/errors';
import type { JobEngine } from '../jobs/jobEngine';
import { REASONS } from '../jobs/lifecycle';
import { JobOutbox } from '../messaging/outbox';
import { isFinal, topics } from '../messaging/protocol';
import { publishJobEvent } from '../messaging/publisher';
import { isTerminal, type JobRecord, type MirrorOrigin } from '../store/jobSchema';

/**
 * How long a mirror job that has ended here waits for its submitter to say it has the outcome
 * before it counts as finished anyway (a `--once` runner then exits): past the keepalive a
 * broker gives a silent client (1.5 × 30 s), with room for the submitter to reconnect.
 */
const SUBMITTER_ACK_WAIT_MS = 120_000;

export interface MirrorRelayDeps {
  engine: JobEngine;
  /** The runner's name, for what is logged and the `error` event's sender. */
  name: string;
  /** The runner's connection, once it has one. */
  client(): MqttClient | undefined;
  /** Where a job came from, when it is a mirror of this runner's. */
  originOf(job: JobRecord): MirrorOrigin | undefined;
  /** A mirror job ended and its submitter has the outcome (or had two minutes to ask): said once per job. */
  finished(job: JobRecord): void;
  /** Work the runner waits for when it stops. */
  track(p: Promise<unknown>): void;
}

export class MirrorRelay {
  /** Relays run one at a time, so each job's events leave in seq order. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Seqs of each mirror job sent (or being sent) to the submitter. */
  private readonly sent = new Map<string, Set<number>>();
  private readonly errorPublished = new Set<string>();
  private readonly done = new Set<string>();
  /** Mirror jobs whose submitter's own state says they have ended. */
  private readonly acknowledged = new Set<string>();
  private readonly announced = new Set<string>();

  constructor(private readonly deps: MirrorRelayDeps) {}

  /** Sends what the submitter has not been sent of the job, after the relays queued before it. */
  relay(jobId: string): void {
    this.chain = this.chain.then(() => this.pump(jobId)).catch((err: unknown) => this.deps.engine.deps.logger.warn(`runner ${this.deps.name}: relaying job ${jobId}: ${errorMessage(err)}`));
    this.deps.track(this.chain);
  }

  /** Resolves once every relay queued so far has run. */
  settled(): Promise<unknown> {
    return this.chain;
  }

  /** The submitter's own state says the job has ended there: finished here once its outcome was sent. */
  acknowledge(job: JobRecord): void {
    this.acknowledged.add(job.id);
    if (this.done.has(job.id)) this.announce(this.deps.engine.deps.controlPlane.jobs.get(job.id) ?? job);
  }

  /**
   * The submitter has every event up to `seq` but `missing`: the rest is relayed (again). `outboxSeqs`
   * stands for what was sent when this runner has no account of the job (it started again since).
   */
  resend(jobId: string, seq: number, missing: ReadonlySet<number>, outboxSeqs?: readonly number[]): void {
    const has = (s: number): boolean => s <= seq && !missing.has(s);
    const known = this.sent.get(jobId);
    if (outboxSeqs === undefined) this.sent.set(jobId, new Set([...(known ?? [])].filter(has)));
    else if (!known) this.sent.set(jobId, new Set(outboxSeqs.filter(has)));
    this.relay(jobId);
  }

  private announce(job: JobRecord): void {
    if (this.announced.has(job.id)) return;
    this.announced.add(job.id);
    this.deps.finished(job);
  }

  /**
   * Sends the submitter every event of the mirror job it has not been sent yet, verbatim (signed
   * with the job's token by the agent's `mam event`), from the job's outbox: the publishers' own
   * record, complete even when another process (`mam monitor`) applied the events first. A job
   * ended here without an event from its agent — timers, its pane gone, not delivered — gets an
   * `error` event first, so that the submitter ends too instead of waiting out its own timers.
   */
  private async pump(jobId: string): Promise<void> {
    const { engine, name } = this.deps;
    const client = this.deps.client();
    const job = engine.deps.controlPlane.jobs.get(jobId);
    const origin = job && this.deps.originOf(job);
    if (!job || !origin || !client) return;
    const outbox = new JobOutbox(engine.deps.controlPlane.paths.jobDir(jobId));
    let events = outbox.events();
    const endedByAgent = job.state === 'completed' || (job.state === 'failed' && job.reason === 'agent_error');
    // Its submitter, which cancelled it, needs no word of the end it asked for.
    const endedBySubmitter = job.reason === REASONS.cancelledBySubmitter || job.reason === REASONS.endedBySubmitter;
    if (isTerminal(job.state) && !endedByAgent && !endedBySubmitter && !events.some(isFinal) && !this.errorPublished.has(jobId)) {
      this.errorPublished.add(jobId);
      await publishJobEvent({
        workspace: engine.deps.controlPlane.workspace,
        jobId,
        event: 'error',
        detail: `remote runner '${name}': the job ended ${job.state} (${job.reason ?? 'no reason'}) on ${os.hostname()}`,
        sender: `mam-remote-${name}`,
        endpoint: engine.endpoint,
      });
      events = outbox.events();
    }
    const sent = this.sent.get(jobId) ?? new Set<number>();
    this.sent.set(jobId, sent);
    const topic = topics.events(origin.workspace_id, jobId);
    const pending = events.filter((p) => !sent.has(p.seq));
    for (const p of pending) sent.add(p.seq);
    // QoS 1 from one client keeps their order; a failed one is sent again on the next change.
    const results = await Promise.allSettled(pending.map((p) => client.publishAsync(topic, JSON.stringify(p), { qos: 1 })));
    results.forEach((r, i) => {
      if (r.status === 'rejected') {
        sent.delete(pending[i]!.seq);
        engine.deps.logger.warn(`runner ${name}: job ${jobId}: event seq ${pending[i]!.seq} not relayed: ${errorMessage(r.reason)}`);
      }
    });
    if (isTerminal(job.state) && !this.done.has(jobId) && (endedBySubmitter || events.some((p) => isFinal(p) && sent.has(p.seq)))) {
      this.done.add(jobId);
      // The broker has the outcome; the submitter may not (cut off, its events dropped). The job is
      // finished here once the submitter's own state says it has ended, or after a while anyway: a
      // submitter that comes back asks for what it missed, and this runner must still be here.
      if (endedBySubmitter || this.acknowledged.has(jobId)) this.announce(job);
      else unrefTimer(engine.clock.setTimeout(() => this.announce(job), SUBMITTER_ACK_WAIT_MS));
    }
  }
}
