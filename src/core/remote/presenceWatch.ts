/**
 * The judges' side of runner presence (presence.ts): an engine that judges remote jobs — the
 * submitter that waits on them, the job warden, a monitor, the extension — hears every runner's
 * presence on its own connection, in turn with the job events, and when a runner is lost fails its
 * open jobs at once (`runner_lost`) instead of leaving them to their timers. Events the runner
 * relayed before it went are applied first: the broker publishes a will only after everything
 * that connection sent, and the bus handles messages in the order they came.
 */
import { DisposableBase } from '../base/disposable';
import { Emitter } from '../base/emitter';
import type { JobBus } from '../jobs/jobBus';
import type { JobEngine } from '../jobs/jobEngine';
import { REASONS } from '../jobs/lifecycle';
import { topics } from '../messaging/protocol';
import type { JobRecord } from '../store/jobSchema';
import { clearDispatches } from './dispatch';
import { RefusedDispatch } from './dispatchMessage';
import { presenceVerdict, readPresence, type PresencePayload } from './presence';

export interface RunnerLost {
  runner: string;
  /** The jobs this engine failed for it. */
  jobs: JobRecord[];
}

export class PresenceWatch extends DisposableBase {
  private readonly lost = this._register(new Emitter<RunnerLost>());
  private readonly refused = this._register(new Emitter<{ topic: string; reason: string; message: string }>());
  /** A runner went offline and this engine failed the jobs it judges of it (maybe none). */
  readonly onDidLoseRunner = this.lost.event;
  /** A presence message was refused (unsigned, mis-signed, malformed): nothing was done. */
  readonly onDidRefuse = this.refused.event;
  /** The last presence heard of each runner. */
  private readonly last = new Map<string, PresencePayload>();

  constructor(
    private readonly engine: JobEngine,
    bus: JobBus,
    private readonly secret: string,
  ) {
    super();
    this._register(bus.follow(topics.allPresence, (topic, bytes, retained) => this.hear(topic, bytes, retained)));
  }

  private async hear(topic: string, bytes: Buffer, retained: boolean): Promise<void> {
    if (bytes.length === 0) return; // a cleared retained message
    const { logger } = this.engine.deps;
    let p: PresencePayload;
    try {
      p = readPresence(bytes, topic, this.secret);
    } catch (err) {
      if (!(err instanceof RefusedDispatch)) throw err;
      logger.warn(`refused a presence message on ${topic}: ${err.reason}: ${err.message}`);
      this.refused.fire({ topic, reason: err.reason, message: err.message });
      return;
    }
    const prev = this.last.get(p.runner);
    const verdict = presenceVerdict(prev, p, retained);
    if (verdict === 'stale') return;
    this.last.set(p.runner, p);
    logger.info(`runner ${p.runner} is ${p.state} (run ${p.instance} since ${p.since})${retained ? ', as last said' : ''}`);
    if (verdict === 'none') return;
    const note =
      verdict === 'all'
        ? `remote runner '${p.runner}' went offline: its connection to the broker ended without a goodbye (killed, crashed, or cut off past the keepalive); nobody relays this job's events`
        : `remote runner '${p.runner}' is offline (its last word on the broker); nobody relays this job's events`;
    const jobs = await this.engine.failNow(
      (j) => j.target?.kind === 'remote' && j.target.name === p.runner && (verdict === 'all' ? j.state === 'dispatched' || j.state === 'started' : j.state === 'started'),
      REASONS.runnerLost,
      note,
    );
    // A runner that comes back must not take a job that was failed for its loss.
    await clearDispatches(this.engine, p.runner, jobs.map((j) => j.id));
    this.lost.fire({ runner: p.runner, jobs });
  }
}
