import * as fs from 'node:fs';
import { DisposableBase, toDisposable } from './base/disposable';
import { Emitter } from './base/emitter';
import { ExitCode, MamError, UsageError, errorMessage } from './base/errors';
import type { Logger } from './base/log';
import { addIgnores, missingIgnores } from './config/gitignore';
import { initWorkspace, type InitMode, type InitResult } from './init/initWorkspace';
import { resolveConfig, type ResolvedConfig } from './config/settings';
import { externalBroker } from './messaging/brokerEndpoint';
import { ControlPlane } from './store/controlPlane';
import { paneTextFile } from './jobs/paneText';
import { runDoctor, type DoctorCheck } from './doctor';
import { cancelJob, verifyJob, type VerifyResult } from './jobs/jobActions';
import { JobEngine } from './jobs/jobEngine';
import { jobTargets } from './jobs/jobTarget';
import { remoteTarget } from './remote/remoteTarget';
import type { JobChange } from './jobs/jobLedger';
import { isTerminal, type JobRecord } from './store/jobSchema';
import { submitJob, type SubmitRequest, type SubmitResult } from './jobs/submit';
import { actAsPerson, personReportFile, type PersonAction } from './jobs/personJobs';
import { onboardSession, type OnboardResult } from './jobs/onboard';
import type { EventPayload } from './messaging/protocol';
import { realMuxFactory } from './mux';
import type { InjectReport } from './mux/inject';
import { NeedsAttentionError, SessionService, type CreateRequest, type StopOptions } from './sessions/sessionService';
import { reconcile, sessionStatus, type ReconcileReport, type SessionState } from './sessions/sessionStatus';
import type { AuditEntry } from './store/auditLog';
import type { SessionRow } from './store/sessionSchema';
import type { LoopRequest } from './loop/loopRequest';
import { LoopRunner } from './loop/loopRunner';
import { cancelLoop } from './loop/loopCancel';
import { embeddedBrokerStatus, startEmbeddedBroker, stopEmbeddedBroker, type EmbeddedBrokerStatus } from './messaging/embeddedBroker';
import type { NamedScreen } from './mux/inject';
import { resumeAll, type RecoveredSession } from './recovery';
import { runDemo, type DemoSummary } from './demo/demo';
import { LoopStore, type LoopState } from './loop/loopState';
import { changedFiles, fileAt, type ChangedFile, type SnapshotIdentity } from './loop/snapshot';
import { brokerSecretSettings, type BrokerSecret } from './brokerSecret';
import { WorkspaceMergeQueue } from './workspaceMergeQueue';
import { WorkspaceOverlaps } from './workspaceOverlaps';
import { workspacePrices, type PriceTable } from './usage/prices';

export interface WorkspaceEngineOptions {
  workspace: string;
  env: NodeJS.ProcessEnv;
  /** VS Code settings under `mam.` (never a password: see `brokerSecret`). */
  settings: Readonly<Record<string, unknown>>;
  /**
   * The broker password from VS Code's secret storage, with the broker it was saved for. It is
   * used only in a trusted workspace whose settings name that same broker (host and port): never
   * sent to a host a workspace's own files (`.mam.env`, folder settings) point somewhere else.
   */
  brokerSecret?: BrokerSecret;
  logger: Logger;
  /** The bundled CLI agents run for events. */
  cliPath: string;
  /** In an untrusted workspace nothing is spawned: no broker, no agents, no monitor. */
  trusted: boolean;
}

/**
 * Everything one workspace folder's views need, behind one object: the stores, sessions, the jobs
 * engine (broker connection, subscriber, timers of jobs nobody waits on) and the monitor. It keeps
 * the job list in memory, updated from core events, so views never poll the disk.
 */
export class WorkspaceEngine extends DisposableBase {
  readonly controlPlane: ControlPlane;
  readonly config: ResolvedConfig;
  readonly sessions: SessionService;
  readonly jobs: JobEngine;
  private readonly sessionsChanged = this._register(new Emitter<void>());
  private readonly jobChanged = this._register(new Emitter<JobChange>());
  private readonly eventApplied = this._register(new Emitter<{ job: JobRecord; payload: EventPayload; late: boolean }>());
  private readonly connection = this._register(new Emitter<'connected' | 'offline'>());
  private readonly loopChanged = this._register(new Emitter<{ loop: LoopState; message?: string }>());
  /** A loop moved on (here, or — through a file watcher — in another process). */
  readonly onDidChangeLoop = this.loopChanged.event;
  readonly loopStore: LoopStore;
  /** The local merge queue (`mam merge`): read by the Merge Queue view, run and edited from it. */
  readonly mergeQueue: WorkspaceMergeQueue;
  /** Overlaps and predicted conflicts between the running sessions' checkouts (`mam conflicts`); looks start with `start()`. */
  readonly overlaps: WorkspaceOverlaps;
  readonly onDidChangeSessions = this.sessionsChanged.event;
  readonly onDidChangeJob = this.jobChanged.event;
  readonly onDidApplyEvent = this.eventApplied.event;
  readonly onDidChangeConnection = this.connection.event;
  private jobCache: Map<string, JobRecord> | undefined;
  private sortedJobs: JobRecord[] | undefined;
  private monitorTimer: NodeJS.Timeout | undefined;
  /** Running agents that show a screen only a person should answer, as the monitor last saw them. */
  private attention = new Map<string, NamedScreen>();
  private readonly terminatedSessions = this._register(new Emitter<string[]>());
  /** The monitor found sessions whose panes are gone (a crash, a reboot, `tmux kill-server`). */
  readonly onDidTerminateSessions = this.terminatedSessions.event;
  private startCalled = false;

  constructor(readonly options: WorkspaceEngineOptions) {
    super();
    this.controlPlane = new ControlPlane(options.workspace, { logger: options.logger });
    this.config = resolveConfig({ workspace: options.workspace, env: options.env, settings: { ...options.settings, ...brokerSecretSettings(options) } });
    const muxFactory = realMuxFactory(options.env, options.logger);
    this.sessions = new SessionService({ controlPlane: this.controlPlane, config: this.config, logger: options.logger, env: options.env, muxFactory });
    this.jobs = this._register(new JobEngine({ controlPlane: this.controlPlane, config: this.config, sessions: this.sessions, muxFactory, logger: options.logger, env: options.env, cliPath: options.cliPath, targets: jobTargets(remoteTarget) }));
    this._register(this.jobs.ledger.onDidChangeJob((change) => {
      this.jobCache?.set(change.job.id, change.job);
      this.sortedJobs = undefined;
      this.jobChanged.fire(change);
      // A job that starts or ends changes its session's current job.
      if (change.previous === null || isTerminal(change.job.state) !== (change.previous !== null && isTerminal(change.previous))) this.sessionsChanged.fire();
    }));
    this._register(this.jobs.ledger.onDidApplyEvent((e) => this.eventApplied.fire(e)));
    this.loopStore = new LoopStore(this.controlPlane.paths);
    this.overlaps = this._register(new WorkspaceOverlaps(() => this.controlPlane.sessions.list(), options.logger));
    // Each job change and each change of the sessions asks for a look (one per burst).
    this._register(this.jobs.ledger.onDidChangeJob(() => this.overlaps.schedule()));
    this._register(this.sessionsChanged.event(() => this.overlaps.schedule()));
    this.mergeQueue = new WorkspaceMergeQueue(this.jobs, options.workspace, options.logger, async (what) => {
      this.requireTrust(what);
      await this.start();
    });
    this._register(toDisposable(() => this.stopMonitor()));
  }

  get workspace(): string {
    return this.options.workspace;
  }

  get trusted(): boolean {
    return this.options.trusted;
  }

  /** Whether `start()` has run (it runs once; untrusted, never). */
  get started(): boolean {
    return this.startCalled;
  }

  /**
   * Connects to the broker (starting the embedded one), applies what the outboxes hold, adopts the
   * timers of jobs whose submitter is gone, and starts the monitor. Untrusted: read-only, nothing
   * started.
   */
  async start(options: { monitorIntervalMs?: number } = {}): Promise<void> {
    if (this.startCalled || !this.options.trusted) return;
    this.startCalled = true;
    try {
      await this.jobs.connect();
      this.connection.fire('connected');
    } catch (err) {
      this.connection.fire('offline');
      this.options.logger.error(`broker: ${errorMessage(err)}`);
    }
    this.jobs.supervise('orphans');
    this.overlaps.start();
    this.startMonitor(options.monitorIntervalMs);
  }

  /**
   * Every `intervalMs` (SPEC §4 monitor): repairs session drift, records conversation IDs that
   * have appeared in an agent's store, and notices agents that show a blocking screen.
   */
  startMonitor(intervalMs = 5000): void {
    if (!this.options.trusted || this.monitorTimer) return;
    const tick = async (): Promise<void> => {
      // A deleted .mam/ stays deleted: nothing to watch until the folder is used again.
      if (!fs.existsSync(this.controlPlane.paths.dir)) return;
      try {
        const report = await this.reconcileNow();
        let changed = report.terminated.length + report.registered.length + report.revived.length + report.pidUpdated.length + report.repaired.length > 0;
        if (report.terminated.length) this.terminatedSessions.fire(report.terminated);
        const running = (await this.controlPlane.sessions.list()).filter((r) => r.status === 'running');
        for (const row of running) {
          if (!row.conversation_id && (await this.sessions.learnConversation(row.name, { boundMs: 0, onlyIfUnique: true, quiet: true }))) changed = true;
        }
        const attention = new Map<string, NamedScreen>();
        for (const row of running) {
          const screen = await this.sessions.attentionOf(row);
          if (screen) attention.set(row.name, screen);
        }
        if ([...attention].map(([n, a]) => `${n}:${a.id}`).join() !== [...this.attention].map(([n, a]) => `${n}:${a.id}`).join()) changed = true;
        this.attention = attention;
        if (changed) this.sessionsChanged.fire();
      } catch (err) {
        this.options.logger.warn(`monitor: ${errorMessage(err)}`);
      }
    };
    this.monitorTimer = setInterval(() => void tick(), intervalMs);
    void tick();
  }

  stopMonitor(): void {
    if (this.monitorTimer) clearInterval(this.monitorTimer);
    this.monitorTimer = undefined;
  }

  get monitoring(): boolean {
    return this.monitorTimer !== undefined;
  }

  async reconcileNow(): Promise<ReconcileReport> {
    this.requireTrust('ask the multiplexer about its panes');
    return reconcile(this.sessions, this.controlPlane.sessions);
  }

  /** The registry changed on disk (another window, the CLI): tell the views. */
  notifySessionsChangedOnDisk(): void {
    this.sessionsChanged.fire();
  }

  /** A job file changed on disk while no broker told us: re-read it. */
  notifyJobChangedOnDisk(jobId: string): void {
    this.jobs.ledger.observe(jobId);
  }

  listSessions(): Promise<SessionRow[]> {
    return this.controlPlane.sessions.list();
  }

  async sessionStates(): Promise<SessionState[]> {
    this.requireTrust('ask the multiplexer about its panes');
    return sessionStatus(this.sessions, await this.controlPlane.sessions.list());
  }

  /** Every job, newest first, from memory after the first read (the array is shared: do not change it). */
  listJobs(): readonly JobRecord[] {
    this.sortedJobs ??= [...this.jobMap().values()].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1));
    return this.sortedJobs;
  }

  job(jobId: string): JobRecord | undefined {
    return this.jobMap().get(jobId);
  }

  /** Forgets the cached job list (after a reload, or when files changed while offline). */
  reloadJobs(): void {
    this.jobCache = undefined;
    this.sortedJobs = undefined;
  }

  private jobMap(): Map<string, JobRecord> {
    this.jobCache ??= new Map(this.controlPlane.jobs.list().jobs.map((j) => [j.id, j]));
    return this.jobCache;
  }

  jobLog(jobId: string): AuditEntry[] {
    return this.controlPlane.audit.readEntries(jobId).entries;
  }

  /** The job's pane.txt (paneText.ts), when one was kept. */
  paneTextFile(jobId: string): string | undefined {
    const file = paneTextFile(this.controlPlane.paths, jobId);
    return fs.existsSync(file) ? file : undefined;
  }

  async createSession(request: CreateRequest): Promise<SessionRow> {
    this.requireTrust('start an agent');
    try {
      return await this.sessions.create(request);
    } catch (err) {
      if (err instanceof NeedsAttentionError && err.screen) this.attention.set(err.session, err.screen);
      throw err;
    } finally {
      this.sessionsChanged.fire();
    }
  }

  /** The onboarding job, under `jobId` when the caller picked one (to know it before it exists). */
  async onboard(name: string, options: { jobId?: string } = {}): Promise<OnboardResult> {
    this.requireTrust('onboard an agent');
    return onboardSession(this.jobs, name, options);
  }

  async stopSession(name: string, options: StopOptions = {}): Promise<SessionRow> {
    this.requireTrust('stop an agent');
    const result = await this.sessions.stop(name, options);
    this.sessionsChanged.fire();
    return result.row;
  }

  /** The blocking screen a running session's agent shows, as the monitor last saw it. */
  attentionOf(name: string): NamedScreen | undefined {
    return this.attention.get(name);
  }

  /** After a crash or reboot: every session that was running, back in its conversation (SPEC §4 resume). */
  async resumeAllSessions(): Promise<RecoveredSession[]> {
    this.requireTrust('resume agents');
    try {
      return await resumeAll({ controlPlane: this.controlPlane, sessions: this.sessions, ledger: this.jobs.ledger });
    } finally {
      this.sessionsChanged.fire();
    }
  }

  async resumeSession(name: string): Promise<SessionRow> {
    this.requireTrust('resume an agent');
    try {
      return await this.sessions.resume(name, { baseDir: this.workspace });
    } catch (err) {
      if (err instanceof NeedsAttentionError && err.screen) this.attention.set(err.session, err.screen);
      throw err;
    } finally {
      this.sessionsChanged.fire();
    }
  }

  async sendToSession(name: string, text: string): Promise<InjectReport> {
    this.requireTrust('type into an agent');
    return this.sessions.send(name, text);
  }

  /** Delegates a job and returns once its prompt is delivered; this engine then watches its timers. */
  async delegate(request: Omit<SubmitRequest, 'wait' | 'baseDir'>): Promise<SubmitResult> {
    this.requireTrust('delegate a job');
    return submitJob(this.jobs, { ...request, wait: false, baseDir: this.workspace });
  }

  /** A person (`human:NAME`) starts, completes or gives up on a job assigned to them. */
  async actAsPerson(jobId: string, action: PersonAction): Promise<JobRecord> {
    this.requireTrust('report on a job');
    return actAsPerson(this.jobs, jobId, action);
  }

  /** The report file a person's reviewer or planner job hands in, made with a start if missing. */
  personReportFile(jobId: string): string | undefined {
    this.requireTrust('write a report');
    return personReportFile(this.controlPlane.jobs.require(jobId));
  }

  async cancelJob(jobId: string): Promise<{ job: JobRecord; changed: boolean }> {
    // A remote job's cancel goes to the broker its files name, with the user's credentials.
    this.requireTrust('cancel a job');
    return cancelJob(this.jobs, jobId);
  }

  async verifyJob(jobId: string, command: string): Promise<VerifyResult> {
    this.requireTrust('run a validation command');
    return verifyJob(this.jobs, jobId, command);
  }

  doctor(): Promise<DoctorCheck[]> {
    return runDoctor({ workspace: this.workspace, env: this.options.env, settings: this.options.settings, trusted: this.options.trusted });
  }

  /** Which of `.mam/` and `.mam.env` git does not ignore here; undefined outside a git checkout. */
  async missingIgnores(): Promise<string[] | undefined> {
    this.requireTrust('run git');
    return missingIgnores(this.workspace);
  }

  /** Adds the entries that are missing to the folder's .gitignore; returns what it added. */
  async addIgnores(): Promise<string[]> {
    const missing = await this.missingIgnores();
    if (missing === undefined) throw new UsageError(`${this.workspace} is not a git checkout`);
    addIgnores(this.workspace, missing);
    return missing;
  }

  /** `mam init` for this folder ("MAM: Initialize Workspace"): the skills name the extension's own CLI. */
  async initWorkspace(mode: InitMode = 'install'): Promise<InitResult> {
    this.requireTrust('set the workspace up');
    return initWorkspace({ workspace: this.workspace, cliPath: this.options.cliPath, mode });
  }

  /** The argv that attaches a terminal to the session's pane (never a shell string). */
  async attachArgv(name: string): Promise<string[]> {
    this.requireTrust('attach to an agent');
    const row = await this.sessions.require(name);
    if (!row.target) throw new Error(`session '${name}' has no pane; resume it first`);
    return this.sessions.muxOf(row).attachArgv(row.target);
  }

  /** The loops, newest first, and the loop files that cannot be read, with why. */
  loopListing(): ReturnType<LoopStore['listing']> {
    return this.loopStore.listing();
  }

  /** Every loop of the workspace, newest first. */
  listLoops(): LoopState[] {
    return this.loopStore.list();
  }

  /** A loop by ID; undefined for an unknown one, or a name that is not a loop ID (a stray file). */
  loop(id: string): LoopState | undefined {
    try {
      return this.loopStore.get(id);
    } catch (err) {
      if (err instanceof UsageError) return undefined;
      throw err;
    }
  }

  /** A loop file changed on disk (the CLI runs one): tell the views. */
  notifyLoopChangedOnDisk(id: string): void {
    const loop = this.loop(id);
    if (loop) this.loopChanged.fire({ loop });
  }

  /** Runs a review loop here, reporting every step; resolves when it ends. */
  async runLoop(request: Omit<LoopRequest, 'baseDir'>, onProgress?: (message: string) => void): Promise<LoopState> {
    this.requireTrust('run a review loop');
    return this.followLoop((runner) => runner.start({ ...request, baseDir: this.workspace }), onProgress);
  }

  /** Continues here a loop whose run stopped midway (its process died), without repeating finished jobs. */
  async resumeLoop(id: string, onProgress?: (message: string) => void): Promise<LoopState> {
    this.requireTrust('resume a review loop');
    return this.followLoop((runner) => runner.resume(id), onProgress);
  }

  /** Cancels a running loop and its open jobs, wherever it runs (loop/loopCancel.ts). */
  async cancelLoop(id: string): Promise<{ loop: LoopState; changed: boolean }> {
    this.requireTrust('cancel a review loop');
    return cancelLoop(this.jobs, this.loopStore, id);
  }

  private async followLoop(run: (runner: LoopRunner) => Promise<LoopState>, onProgress?: (message: string) => void): Promise<LoopState> {
    await this.start();
    const runner = new LoopRunner(this.jobs, this.options.logger);
    const sub = runner.onDidProgress(({ loop, message }) => {
      this.loopChanged.fire({ loop, message });
      onProgress?.(message);
    });
    try {
      return await run(runner);
    } finally {
      sub.dispose();
      runner.dispose();
    }
  }

  /** The workspace's embedded broker as its files and the process table say; undefined when the folder uses a broker of its own. */
  embeddedBroker(): EmbeddedBrokerStatus | undefined {
    if (!this.options.trusted || externalBroker(this.config)) return undefined;
    return embeddedBrokerStatus(this.controlPlane.paths);
  }

  /** Starts the embedded broker (reusing one that runs) and connects; the engine's client reconnects by itself after a stop. */
  async startBroker(): Promise<{ started: boolean; port: number }> {
    this.requireTrust('start a broker');
    const external = externalBroker(this.config);
    if (external) throw new UsageError(`this folder uses the broker at ${external.host}:${external.port}; MAM runs none of its own here`);
    const handle = await startEmbeddedBroker(this.controlPlane.paths, this.options.logger, { env: this.options.env, cliPath: this.options.cliPath });
    await this.start();
    return { started: handle.started, port: handle.endpoint.port };
  }

  /** Stops the embedded broker; agents' events wait in their outboxes until it runs again. */
  async stopBroker(): Promise<{ stopped: boolean; pid: number | null }> {
    this.requireTrust('stop the broker');
    return stopEmbeddedBroker(this.controlPlane.paths, { logger: this.options.logger });
  }

  /**
   * The demo (`mam demo`) in this workspace: four scripted agents, a delegated job and a review
   * loop in a fresh repo at `repoDir`. The loop's steps reach the views like any loop's.
   */
  async runDemo(repoDir: string, distDir: string, onLine: (line: string) => void, signal?: AbortSignal): Promise<DemoSummary> {
    this.requireTrust('run the demo');
    await this.start();
    return runDemo({
      engine: this.jobs,
      sessions: this.sessions,
      distDir,
      repoDir,
      onLine,
      onLoopProgress: ({ loop, message }) => this.loopChanged.fire({ loop, message }),
      env: this.options.env,
      // MAM_DEMO_PACE=fast: the same demo at a twentyfifth of the pace (tests, impatient people).
      pace: this.options.env.MAM_DEMO_PACE === 'fast' ? 'fast' : 'normal',
      logger: this.options.logger,
      ...(signal ? { signal } : {}),
    });
  }

  /** The price table for token estimates: the built-in one with `.mam/prices.json` over it (a bad file is logged, then ignored). */
  prices(): PriceTable {
    return workspacePrices(this.controlPlane.paths, (m) => this.options.logger.warn(m));
  }

  /** The files a round changed, base to reviewed tree. */
  async changedFiles(identity: SnapshotIdentity, checkout: string): Promise<ChangedFile[]> {
    this.requireTrust('run git');
    return changedFiles(checkout, identity);
  }

  /** A file's content at a commit or tree of a checkout (undefined when absent there). */
  async fileAt(checkout: string, treeish: string, file: string): Promise<string | undefined> {
    this.requireTrust('run git');
    return fileAt(checkout, treeish, file);
  }

  private requireTrust(what: string): void {
    if (!this.options.trusted) throw new UntrustedWorkspaceError(`this workspace is not trusted: MAM does not ${what} here; trust the workspace to use it`);
  }
}

export class UntrustedWorkspaceError extends MamError {
  constructor(message: string) {
    super(message, 'untrusted', ExitCode.usage);
  }
}

/** The entry of dist/engine.js: the extension loads the engine only when a folder needs it. */
export function createWorkspaceEngine(options: WorkspaceEngineOptions): WorkspaceEngine {
  return new WorkspaceEngine(options);
}
