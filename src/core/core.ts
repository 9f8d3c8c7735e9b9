import { DisposableBase } from './base/disposable';
import type { Clock } from './base/clock';
import type { Logger } from './base/log';
import { TRUSTED, type Trust } from './base/trust';
import { resolveConfig, type ResolvedConfig } from './config/settings';
import { JobEngine } from './jobs/jobEngine';
import { JobService } from './jobs/jobService';
import { watchUsage } from './jobs/jobUsage';
import { keepPaneText } from './jobs/paneText';
import { JobTargets, type JobTarget } from './jobs/jobTarget';
import { localTarget } from './jobs/localTarget';
import { personTarget } from './jobs/personTarget';
import { LoopService } from './loop/loopService';
import { Monitor } from './monitor';
import { PlanService } from './plan/planService';
import { realMuxFactory, type MuxFactory } from './mux';
import { remoteTarget } from './remote/remoteTarget';
import { SessionService } from './sessions/sessionService';
import { ControlPlane } from './store/controlPlane';
import { WorkspaceMergeQueue } from './workspaceMergeQueue';
import { WorkspaceOverlaps } from './workspaceOverlaps';

export interface CoreOptions {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** The bundled CLI agents run for events (absolute path of dist/cli.js). */
  cliPath: string;
  /** Settings beyond the environment and `.mam.env` (VS Code's `mam.*`, the broker secret). */
  settings?: Readonly<Record<string, unknown>>;
  /** Default: trusted (the CLI, the bench, the tests). */
  trust?: Trust;
  /** The time the jobs engine keeps (JobEngineDeps.clock); default: the system clock. Tests pass a fake one. */
  clock?: Clock;
  /** Default: the real tmux and herdr backends. */
  muxFactory?: MuxFactory;
  /** Where jobs can go; default: this host's sessions, people and remote runners (tests narrow it). */
  targets?: readonly JobTarget[];
  /** Run before a loop or a merge-queue action: the extension starts its engine (broker connection) there. */
  prepare?: () => Promise<void>;
}

/**
 * The composition root of the core: one workspace's stores, sessions, jobs engine (with the job
 * targets registered here: this host's sessions, people, remote runners), loops, merge queue,
 * overlaps and monitor, wired once for the CLI, the extension, the bench and the tests. Each part
 * is built on first use, in dependency order, so a command pays only for what it touches — and a
 * malformed `.mam.env` is reported before anything is opened.
 */
export class Core extends DisposableBase {
  readonly trust: Trust;
  private configCache: ResolvedConfig | undefined;
  private controlPlaneCache: ControlPlane | undefined;
  private sessionsCache: SessionService | undefined;
  private jobsCache: JobEngine | undefined;
  private jobServiceCache: JobService | undefined;
  private loopsCache: LoopService | undefined;
  private mergeQueueCache: WorkspaceMergeQueue | undefined;
  private overlapsCache: WorkspaceOverlaps | undefined;
  private monitorCache: Monitor | undefined;
  private plansCache: PlanService | undefined;
  private readonly muxFactory: MuxFactory;

  constructor(
    readonly workspace: string,
    private readonly options: CoreOptions,
  ) {
    super();
    this.trust = options.trust ?? TRUSTED;
    this.muxFactory = options.muxFactory ?? realMuxFactory(options.env, options.logger);
  }

  get config(): ResolvedConfig {
    return (this.configCache ??= resolveConfig({ workspace: this.workspace, env: this.options.env, ...(this.options.settings ? { settings: this.options.settings } : {}) }));
  }

  get controlPlane(): ControlPlane {
    void this.config;
    return (this.controlPlaneCache ??= new ControlPlane(this.workspace, { logger: this.options.logger }));
  }

  get sessions(): SessionService {
    return (this.sessionsCache ??= new SessionService({ controlPlane: this.controlPlane, config: this.config, logger: this.options.logger, env: this.options.env, muxFactory: this.muxFactory, trust: this.trust }));
  }

  get jobs(): JobEngine {
    if (!this.jobsCache) {
      const engine = this._register(
        new JobEngine({
          controlPlane: this.controlPlane,
          config: this.config,
          sessions: this.sessions,
          muxFactory: this.muxFactory,
          logger: this.options.logger,
          env: this.options.env,
          cliPath: this.options.cliPath,
          targets: new JobTargets(this.options.targets ?? [localTarget, personTarget, remoteTarget]),
          trust: this.trust,
          ...(this.options.clock ? { clock: this.options.clock } : {}),
        }),
      );
      // What follows the engine's jobs: their tokens from the agents' stores, a pane's text when a job ends.
      engine.keep(watchUsage(engine));
      engine.keep(keepPaneText(engine));
      this.jobsCache = engine;
    }
    return this.jobsCache;
  }

  /** The jobs as a long-lived host uses them: submit, cancel, verify, act as a person, onboard, the jobs in memory. */
  get jobService(): JobService {
    return (this.jobServiceCache ??= new JobService(this.jobs));
  }

  get loops(): LoopService {
    return (this.loopsCache ??= this._register(new LoopService(this.jobs, this.options.logger, this.prepare)));
  }

  get mergeQueue(): WorkspaceMergeQueue {
    return (this.mergeQueueCache ??= this._register(
      new WorkspaceMergeQueue(this.jobs, this.workspace, this.options.logger, async (what) => {
        this.trust.require(what);
        await this.prepare();
      }),
    ));
  }

  /** Overlaps between the running sessions' checkouts; looks start with `overlaps.start()`. */
  get overlaps(): WorkspaceOverlaps {
    return (this.overlapsCache ??= this._register(new WorkspaceOverlaps(() => this.controlPlane.sessions.list(), this.options.logger)));
  }

  /** Plans (docs/plans.md): list, run in a process of their own, cancel, draft. */
  get plans(): PlanService {
    return (this.plansCache ??= this._register(new PlanService(this.jobs, this.options.cliPath)));
  }

  get monitor(): Monitor {
    return (this.monitorCache ??= this._register(new Monitor({ controlPlane: this.controlPlane, sessions: this.sessions, logger: this.options.logger, overlaps: this.overlaps, clock: this.jobs.clock })));
  }

  /** Whether the jobs engine was built (the CLI closes its connection only then). */
  get jobsBuilt(): boolean {
    return this.jobsCache !== undefined;
  }

  private readonly prepare = async (): Promise<void> => {
    await (this.options.prepare ?? (() => this.jobs.connect().then(() => undefined)))();
  };
}

export function buildCore(workspace: string, options: CoreOptions): Core {
  return new Core(workspace, options);
}
