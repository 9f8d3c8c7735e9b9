import * as fs from 'node:fs';
import { isAlive } from '../base/process';
import type { Clock } from '../base/clock';
import { oneOf, obj, parse } from '../base/schema';
import { isTerminal, JOB_STATES } from '../store/jobSchema';
import type { HeartbeatRegistration, HeartbeatRegistry } from './heartbeatRegistry';
import type { Disposable } from '../base/disposable';
import { listenRelay } from './eventRelay';
import { flushOutbox, publishHeartbeat } from './publisher';
import { QuickConnection, type QuickEndpoint } from './quickPublish';

export interface HeartbeatServiceOptions {
  registry: HeartbeatRegistry;
  /** The broker to publish to, read again whenever a publish fails (the embedded broker may move). */
  endpoint: () => QuickEndpoint | undefined;
  clock: Clock;
  /** How often registrations, agents and jobs are looked at (default 1 s). */
  checkMs?: number;
  /**
   * How long the service stays with nothing to serve before it exits. Default 0: starting it again
   * for the next job costs one Node start (~0.1 s of CPU), less than a process idling between jobs.
   */
  idleExitMs?: number;
  /** An MQTT client ID unique to this service. */
  clientId: string;
  /** Whether it reads the host's event relay (eventRelay.ts; default true). */
  relay?: boolean;
}

interface Served {
  reg: HeartbeatRegistration;
  nextAt: number;
  /** The job record's mtime when last read, and whether the job had ended then. */
  seenMtimeMs: number;
  ended: boolean;
  /** Its outbox holds the agent's last word (completed, error), though its record may not say so yet. */
  lastWord: boolean;
  publishing: boolean;
}

/** What the service reads of a job's record: its state. */
const jobState = obj({ state: oneOf(JOB_STATES) });

/**
 * The heartbeat service of one workspace on one host: publishes a heartbeat every N s for each
 * registered job, on one long-lived connection, and drops a job the moment (within a check) its
 * agent's process is gone or its record says it ended. One process serves every job of the host —
 * fifty jobs cost one Node process and a few reads a second, not fifty processes. It exits once it
 * has had nothing to serve for a while (the registry decides under its lock; see heartbeatRegistry.ts).
 *
 * It is also the host's event relay (eventRelay.ts): a job named to it has its outbox's waiting
 * events published on the same connection, so a `mam event` on this host opens none of its own.
 * A job's outbox is flushed when the service first serves it too: events handed to a relay that
 * died before it sent them go out when the next one starts.
 */
export class HeartbeatService {
  private readonly served = new Map<string, Served>();
  private readonly checkMs: number;
  private readonly idleExitMs: number;
  private connection: QuickConnection | undefined;
  private endpointKey = '';
  /** The broker as last read; read again after a publish fails. */
  private endpointNow: QuickEndpoint | undefined;
  private relay: Disposable | undefined;
  /** Jobs whose outbox is being flushed, and whether another flush was asked meanwhile. */
  private readonly flushing = new Map<string, { again: boolean }>();
  private idleSince: number | undefined;
  private timer: unknown;
  private stopped = false;
  private finished!: () => void;
  /** Resolves when the service has stopped (idle, or `stop()`). */
  readonly done = new Promise<void>((resolve) => (this.finished = resolve));

  constructor(private readonly options: HeartbeatServiceOptions) {
    this.checkMs = options.checkMs ?? 1000;
    this.idleExitMs = options.idleExitMs ?? 0;
  }

  start(): void {
    if (this.options.relay !== false) this.relay = listenRelay(this.options.registry.relayFile, (job) => this.flush(job));
    void this.check();
  }

  /** The jobs served now (for tests and the benchmark). */
  jobs(): string[] {
    return [...this.served.keys()];
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.options.clock.clearTimeout(this.timer);
    this.relay?.dispose();
    this.connection?.close();
    this.finished();
  }

  private async check(): Promise<void> {
    if (this.stopped) return;
    const { registry, clock } = this.options;
    // The workspace's .mam/ deleted: nothing is left to serve, and nothing may bring it back.
    if (!fs.existsSync(registry.paths.dir)) return this.stop();
    const now = clock.now();
    const regs = registry.list();
    const current = new Set(regs.map((r) => r.job));
    for (const job of this.served.keys()) if (!current.has(job)) this.served.delete(job);
    for (const reg of regs) {
      const known = this.served.get(reg.job);
      // A newer `started` of the job (another agent process, another N) starts its count again.
      if (!known || known.reg.watch_pid !== reg.watch_pid || known.reg.every_s !== reg.every_s) {
        this.served.set(reg.job, { reg, nextAt: now + reg.every_s * 1000, seenMtimeMs: -1, ended: false, lastWord: false, publishing: known?.publishing ?? false });
        if (!known && this.relay) this.flush(reg.job);
      }
    }
    for (const s of [...this.served.values()]) {
      if (!isAlive(s.reg.watch_pid) || s.lastWord || this.ended(s)) {
        this.served.delete(s.reg.job);
        await registry.remove(s.reg).catch(() => undefined);
      } else if (now >= s.nextAt && !s.publishing) {
        s.nextAt = Math.max(s.nextAt + s.reg.every_s * 1000, now);
        void this.publish(s);
      }
    }
    if (this.served.size > 0) this.idleSince = undefined;
    else if ((this.idleSince ??= now) + this.idleExitMs <= now && (await registry.releaseIfIdle(process.pid).catch(() => false))) return this.stop();
    if (this.stopped) return;
    // Looked at every checkMs, and sooner when a heartbeat falls due before that (N may be under a second).
    const due = Math.min(...[...this.served.values()].map((s) => s.nextAt - clock.now()), this.checkMs);
    this.timer = clock.setTimeout(() => void this.check(), Math.max(10, due));
  }

  /** Whether the job's record says it ended; read again only when the file changed. */
  private ended(s: Served): boolean {
    const file = this.options.registry.paths.jobFile(s.reg.job);
    let mtimeMs: number;
    try {
      mtimeMs = fs.statSync(file).mtimeMs;
    } catch {
      return true; // the job is gone (its workspace's .mam/ deleted)
    }
    if (mtimeMs !== s.seenMtimeMs) {
      s.seenMtimeMs = mtimeMs;
      try {
        s.ended = isTerminal(parse(jobState, JSON.parse(fs.readFileSync(file, 'utf8'))).state);
      } catch {
        s.seenMtimeMs = -1; // torn or being replaced: read it again next time
      }
    }
    return s.ended;
  }

  private async publish(s: Served): Promise<void> {
    s.publishing = true;
    try {
      const endpoint = (this.endpointNow ??= this.options.endpoint());
      const connection = endpoint && this.connectionTo(endpoint);
      // A `mam event`'s own budget (1 s), not more: the publish holds the job's outbox lock, and the
      // agent's next event waits for it; an undelivered heartbeat goes out with the next event.
      const r = await publishHeartbeat({
        workspace: this.options.registry.paths.workspace, jobId: s.reg.job, sender: s.reg.sender, endpoint,
        retryBudgetMs: Math.min(s.reg.every_s * 1000, 1000), ...(connection ? { connection } : {}),
      });
      // The agent had its last word: no heartbeat follows it, and the next check drops the job.
      if (r === undefined) s.lastWord = true;
      // Not delivered: the event waits in the outbox (it goes with the next one); a fresh connection then.
      else if (!r.delivered) this.dropConnection();
    } catch {
      // the job vanished meanwhile: the next check drops it
    } finally {
      s.publishing = false;
    }
  }

  /** Publishes what the job's outbox holds beyond the broker's acknowledgement (one flush of a job at a time). */
  private flush(job: string): void {
    const running = this.flushing.get(job);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.flushing.set(job, state);
    void (async () => {
      do {
        state.again = false;
        const endpoint = (this.endpointNow ??= this.options.endpoint());
        const connection = endpoint && this.connectionTo(endpoint);
        try {
          // The budget a `mam event` has for itself: the flush holds the job's outbox lock, and the
          // agent's next event waits for it; a broker that stays down leaves the events to the next flush.
          const r = await flushOutbox({ workspace: this.options.registry.paths.workspace, jobId: job, endpoint, retryBudgetMs: 1000, ...(connection ? { connection } : {}) });
          // Not delivered: the events wait in the outbox (the job's next event, or a subscriber's drain, takes them).
          if (r.problem !== undefined) this.dropConnection();
        } catch {
          // not a job of this workspace (the relay reads IDs only), or its outbox lock was held too long
        }
      } while (state.again && !this.stopped);
      this.flushing.delete(job);
    })();
  }

  private connectionTo(endpoint: QuickEndpoint): QuickConnection {
    const key = `${endpoint.host}:${endpoint.port}:${endpoint.username ?? ''}`;
    if (this.connection && key !== this.endpointKey) this.dropConnection();
    this.endpointKey = key;
    return (this.connection ??= new QuickConnection(endpoint, this.options.clientId));
  }

  private dropConnection(): void {
    this.connection?.close();
    this.connection = undefined;
    this.endpointNow = undefined;
  }
}
