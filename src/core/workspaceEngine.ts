import { DisposableBase } from './base/disposable';
import { Emitter } from './base/emitter';
import { UsageError, errorMessage } from './base/errors';
import type { Logger } from './base/log';
import { trustOf, type Trust } from './base/trust';
import { addIgnores, missingIgnores } from './config/gitignore';
import { initWorkspace, type InitMode, type InitResult } from './init/initWorkspace';
import { externalBroker } from './messaging/brokerEndpoint';
import { runDoctor, type DoctorCheck } from './doctor';
import { isTerminal } from './store/jobSchema';
import { personReportFile } from './jobs/personJobs';
import { sessionStatus, type SessionState } from './sessions/sessionStatus';
import { embeddedBrokerStatus, startEmbeddedBroker, stopEmbeddedBroker, type EmbeddedBrokerStatus } from './messaging/embeddedBroker';
import { resumeAll, type RecoveredSession } from './recovery';
import { runDemo, type DemoSummary } from './demo/demo';
import { changedFiles, fileAt, type ChangedFile, type SnapshotIdentity } from './loop/snapshot';
import { brokerSecretSettings, type BrokerSecret } from './brokerSecret';
import { workspacePrices, type PriceTable } from './usage/prices';
import { buildCore, type Core } from './core';

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
 * One workspace folder of the window: its core (core.ts: sessions, jobs, loops, merge queue,
 * overlaps, monitor — views use those and their events directly), its trust, and starting it.
 * What is here is only what is per folder and not any one service's: the broker it runs, the
 * doctor, `.gitignore`, `mam init`, the demo, git reads for the diff editors.
 */
export class WorkspaceEngine extends DisposableBase {
  readonly core: Core;
  readonly trust: Trust;
  private readonly connection = this._register(new Emitter<'connected' | 'offline'>());
  readonly onDidChangeConnection = this.connection.event;
  private startCalled = false;

  constructor(readonly options: WorkspaceEngineOptions) {
    super();
    this.trust = trustOf(options.trusted);
    const settings = { ...options.settings, ...brokerSecretSettings(options) };
    this.core = this._register(buildCore(options.workspace, { env: options.env, logger: options.logger, cliPath: options.cliPath, settings, trust: this.trust, prepare: () => this.start() }));
    const { jobs, sessions, overlaps } = this.core;
    // A job that starts or ends changes its session's current job; each job or sessions change asks for an overlap look.
    this._register(jobs.ledger.onDidChangeJob((change) => {
      if (change.previous === null || isTerminal(change.job.state) !== (change.previous !== null && isTerminal(change.previous))) sessions.notifyChanged();
      overlaps.schedule();
    }));
    this._register(sessions.onDidChange(() => overlaps.schedule()));
  }

  get workspace(): string {
    return this.options.workspace;
  }

  get trusted(): boolean {
    return this.trust.trusted;
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
    if (this.startCalled || !this.trusted) return;
    this.startCalled = true;
    try {
      await this.core.jobs.connect();
      this.connection.fire('connected');
    } catch (err) {
      this.connection.fire('offline');
      this.options.logger.error(`broker: ${errorMessage(err)}`);
    }
    this.core.jobs.supervise('orphans');
    this.core.overlaps.start();
    this.core.monitor.start(options.monitorIntervalMs);
  }

  async sessionStates(): Promise<SessionState[]> {
    this.trust.require('ask the multiplexer about its panes');
    return sessionStatus(this.core.sessions, await this.core.controlPlane.sessions.list());
  }

  /** After a crash or reboot: every session that was running, back in its conversation (SPEC §4 resume). */
  async resumeAllSessions(): Promise<RecoveredSession[]> {
    this.trust.require('resume agents');
    try {
      return await resumeAll({ controlPlane: this.core.controlPlane, sessions: this.core.sessions, ledger: this.core.jobs.ledger });
    } finally {
      this.core.sessions.notifyChanged();
    }
  }

  /** The report file a person's reviewer or planner job hands in, made with a start if missing. */
  personReportFile(jobId: string): string | undefined {
    this.trust.require('write a report');
    return personReportFile(this.core.controlPlane.jobs.require(jobId));
  }

  doctor(): Promise<DoctorCheck[]> {
    return runDoctor({ workspace: this.workspace, env: this.options.env, settings: this.options.settings, trusted: this.trusted });
  }

  /** Which of `.mam/` and `.mam.env` git does not ignore here; undefined outside a git checkout. */
  async missingIgnores(): Promise<string[] | undefined> {
    this.trust.require('run git');
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
    this.trust.require('set the workspace up');
    return initWorkspace({ workspace: this.workspace, cliPath: this.options.cliPath, mode });
  }

  /** The workspace's embedded broker as its files and the process table say; undefined when the folder uses a broker of its own. */
  embeddedBroker(): EmbeddedBrokerStatus | undefined {
    if (!this.trusted || externalBroker(this.core.config)) return undefined;
    return embeddedBrokerStatus(this.core.controlPlane.paths);
  }

  /** Starts the embedded broker (reusing one that runs) and connects; the engine's client reconnects by itself after a stop. */
  async startBroker(): Promise<{ started: boolean; port: number }> {
    this.trust.require('start a broker');
    const external = externalBroker(this.core.config);
    if (external) throw new UsageError(`this folder uses the broker at ${external.host}:${external.port}; MAM runs none of its own here`);
    const handle = await startEmbeddedBroker(this.core.controlPlane.paths, this.options.logger, { env: this.options.env, cliPath: this.options.cliPath });
    await this.start();
    return { started: handle.started, port: handle.endpoint.port };
  }

  /** Stops the embedded broker; agents' events wait in their outboxes until it runs again. */
  async stopBroker(): Promise<{ stopped: boolean; pid: number | null }> {
    this.trust.require('stop the broker');
    return stopEmbeddedBroker(this.core.controlPlane.paths, { logger: this.options.logger });
  }

  /** The demo (`mam demo`) in this workspace, in a fresh repo at `repoDir`; its loop's steps reach the views like any loop's. */
  async runDemo(repoDir: string, distDir: string, onLine: (line: string) => void, signal?: AbortSignal): Promise<DemoSummary> {
    this.trust.require('run the demo');
    await this.start();
    const { jobs, sessions, loops } = this.core;
    // MAM_DEMO_PACE=fast: the same demo at a twentyfifth of the pace (tests, impatient people).
    const pace = this.options.env.MAM_DEMO_PACE === 'fast' ? 'fast' : 'normal';
    return runDemo({ engine: jobs, sessions, distDir, repoDir, onLine, onLoopProgress: (e) => loops.report(e), env: this.options.env, pace, logger: this.options.logger, ...(signal ? { signal } : {}) });
  }

  /** The price table for token estimates: the built-in one with `.mam/prices.json` over it (a bad file is logged, then ignored). */
  prices(): PriceTable {
    return workspacePrices(this.core.controlPlane.paths, (m) => this.options.logger.warn(m));
  }

  /** The files a round changed, base to reviewed tree. */
  async changedFiles(identity: SnapshotIdentity, checkout: string): Promise<ChangedFile[]> {
    this.trust.require('run git');
    return changedFiles(checkout, identity);
  }

  /** A file's content at a commit or tree of a checkout (undefined when absent there). */
  async fileAt(checkout: string, treeish: string, file: string): Promise<string | undefined> {
    this.trust.require('run git');
    return fileAt(checkout, treeish, file);
  }
}

/** The entry of dist/engine.js: the extension loads the engine only when a folder needs it. */
export function createWorkspaceEngine(options: WorkspaceEngineOptions): WorkspaceEngine {
  return new WorkspaceEngine(options);
}
