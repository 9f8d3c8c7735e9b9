import { spawn } from 'node:child_process';
import type { MqttClient } from 'mqtt';
import { systemClock, unrefTimer, type Clock } from '../base/clock';
import { DisposableBase, toDisposable } from '../base/disposable';
import type { Logger } from '../base/log';
import type { ResolvedConfig } from '../config/settings';
import type { ControlPlane } from '../store/controlPlane';
import type { JobRecord } from '../store/jobSchema';
import { resolveBroker, type BrokerEndpoint } from '../messaging/brokerEndpoint';
import { connectClient, uniqueClientId } from '../messaging/mqttClient';
import { workspaceIdOf } from '../messaging/protocol';
import type { MuxFactory } from '../mux';
import type { SessionService } from '../sessions/sessionService';
import { JobBus } from './jobBus';
import { JobLedger } from './jobLedger';
import type { JobTargets } from './jobTarget';
import { JobSupervisor, type SupervisorOptions } from './supervisor';
import { errorMessage } from '../base/errors';
import { TRUSTED, type Trust } from '../base/trust';
import { JobIndex } from './jobIndex';

export interface JobEngineDeps {
  controlPlane: ControlPlane;
  config: ResolvedConfig;
  sessions: SessionService;
  muxFactory: MuxFactory;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** The bundled CLI agents run for events (absolute path of dist/cli.js). */
  cliPath: string;
  /** Where jobs can go, one target per kind, registered by the composition root (core.ts). */
  targets: JobTargets;
  /**
   * The time the engine keeps: records and audit entries are stamped with it, and its timers (outbox
   * drain, rescan, deadlines, usage readings, the dispatch wait) run on it. Default: the system
   * clock; tests pass a fake one. Its times are read against other processes' (agents' stores,
   * `mam event` timestamps), so anything but a test gives the system clock.
   */
  clock?: Clock;
  /** Untrusted: no job is delegated, cancelled or verified here (default: trusted, as the CLI is). */
  trust?: Trust;
}

/**
 * The jobs engine of one workspace, wired: the ledger (the one place job state changes), the
 * broker connection and its subscriber, and a supervisor for the timers. The CLI builds one per
 * command; the extension one per workspace folder.
 */
export class JobEngine extends DisposableBase {
  readonly ledger: JobLedger;
  /** Every job in memory, kept by the ledger (views read it; nothing polls the disk). */
  readonly index: JobIndex;
  readonly trust: Trust;
  readonly workspaceId: string;
  private bus: JobBus | undefined;
  private client: MqttClient | undefined;
  private endpointCache: BrokerEndpoint | undefined;
  readonly clock: Clock;

  constructor(readonly deps: JobEngineDeps) {
    super();
    this.clock = deps.clock ?? systemClock;
    this.ledger = this._register(new JobLedger(deps.controlPlane, deps.logger, this.clock));
    this.index = this._register(new JobIndex(deps.controlPlane, this.ledger));
    this.trust = deps.trust ?? TRUSTED;
    this.workspaceId = workspaceIdOf(deps.controlPlane.workspace);
  }

  /** Ties what watches this engine (usage readings, pane text: added by the composition root) to its life. */
  keep<T extends { dispose(): void }>(watcher: T): T {
    return this._register(watcher);
  }

  get endpoint(): BrokerEndpoint | undefined {
    return this.endpointCache;
  }

  /**
   * Connects to the workspace's broker (starting the embedded one if needed) and subscribes, before
   * anything is delivered. Throws BrokerUnusableError (exit 3) when no broker can be used.
   */
  async connect(): Promise<JobBus> {
    if (this.bus) return this.bus;
    const { controlPlane, config, env, logger, cliPath } = this.deps;
    this.endpointCache = await resolveBroker({ workspace: controlPlane.workspace, config, env, start: true, logger, cliPath });
    this.client = await connectClient(this.endpointCache, { clientId: uniqueClientId('engine'), logger });
    const client = this.client;
    this._register(toDisposable(() => void client.endAsync(true).catch(() => undefined)));
    this.bus = this._register(new JobBus(controlPlane, this.ledger, client, this.workspaceId, logger, this.clock));
    await this.bus.start();
    this.watchTargets();
    // Events that could not reach the broker wait in outboxes: drain them now and whenever the
    // connection comes back, and poll them while it is down.
    client.on('connect', () => {
      // A reconnect: apply what waited on disk, and ask the runners of remote jobs for what the
      // broker did not keep for us while we were away.
      void this.drain();
      this.bus?.resyncRemoteJobs();
    });
    // Outboxes while the broker is away; and, while it is here, those of the jobs whose events
    // arrive: a broker may drop what it queued for us (Mosquitto's queue limits do, after acking
    // the publisher), and nothing else would tell us that the last events of a job are missing.
    const drainTimer = unrefTimer(this.clock.setInterval(() => this.pollOutboxes(client.connected), 1000));
    this._register(toDisposable(() => this.clock.clearInterval(drainTimer)));
    await this.drain();
    return this.bus;
  }

  /**
   * Someone must enforce the timers of a job nobody waits on. On the embedded broker its daemon
   * does (the job warden); on a broker of the user's own, a detached `mam monitor --until-idle`
   * does, one per workspace, until no job is open.
   */
  ensureWatcher(): void {
    if (!this.endpointCache || this.endpointCache.embedded || this.deps.env.MAM_NO_WARDEN) return;
    const child = spawn(process.execPath, [this.deps.cliPath, 'monitor', '--until-idle', '--workspace', this.deps.controlPlane.workspace], {
      detached: true,
      stdio: 'ignore',
      env: this.deps.env,
      cwd: this.deps.controlPlane.workspace,
    });
    child.on('error', (err) => this.deps.logger.warn(`could not start the job watcher: ${err.message}`));
    child.unref();
  }

  /** Waits until the state messages this process published have left it (before a short-lived process exits). */
  async flush(): Promise<void> {
    await this.bus?.flush();
  }

  supervise(scope: SupervisorOptions['scope'], options: { rescanEveryMs?: number } = {}): JobSupervisor {
    const supervisor = this._register(
      new JobSupervisor({
        controlPlane: this.deps.controlPlane, ledger: this.ledger, muxFactory: this.deps.muxFactory, logger: this.deps.logger, scope, clock: this.clock,
        beforeJudge: async (jobId) => void (await this.ledger.applyOutbox(jobId)),
      }),
    );
    supervisor.scan();
    this.supervisors.add(supervisor);
    this._register(toDisposable(() => this.supervisors.delete(supervisor)));
    this.watchTargets();
    if (options.rescanEveryMs) {
      // A change whose state message never arrived (its process died first) is still found.
      const timer = unrefTimer(this.clock.setInterval(() => supervisor.scan(), options.rescanEveryMs));
      this._register(toDisposable(() => this.clock.clearInterval(timer)));
    }
    return supervisor;
  }

  private readonly supervisors = new Set<JobSupervisor>();
  private watching = false;

  /**
   * Fails at once, with `reason`, the open jobs `which` picks that this engine judges (its
   * supervisors' scopes: its own jobs, or those nobody waits on): a fact heard, not a timer.
   */
  async failNow(which: (job: JobRecord) => boolean, reason: string, note: string): Promise<JobRecord[]> {
    const ended: JobRecord[] = [];
    for (const supervisor of [...this.supervisors]) ended.push(...(await supervisor.failNow(which, reason, note)));
    return ended;
  }

  /** What the targets' judges hear besides timers (a remote runner's presence): once connected and judging. */
  private watchTargets(): void {
    if (this.watching || !this.bus || this.supervisors.size === 0) return;
    this.watching = true;
    for (const target of this.deps.targets.all()) {
      const watch = target.watch?.(this, this.bus);
      if (watch) this._register(watch);
    }
  }

  /**
   * Every second of the engine's clock: all outboxes while the broker is away, the active jobs' while
   * it is here. One check at a time: a check still waiting for a job's lock is not joined by another
   * each second (they piled up behind a busy job and took its lock from its delivery: CI, stop 37).
   */
  private pollOutboxes(connected: boolean): void {
    if (!connected) void this.drain();
    else if (!this.checking && this.bus) {
      this.checking = true;
      void this.bus
        .drainActive()
        .catch((err: unknown) => this.deps.logger.warn(`outbox check: ${errorMessage(err)}`))
        .finally(() => (this.checking = false));
    }
  }

  private checking = false;
  private draining = false;

  private async drain(): Promise<void> {
    if (!this.bus || this.draining) return;
    this.draining = true;
    try {
      await this.bus.drainOutboxes();
    } catch (err) {
      this.deps.logger.warn(`outbox drain: ${errorMessage(err)}`);
    } finally {
      this.draining = false;
    }
  }
}
