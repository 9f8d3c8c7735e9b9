import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Logger } from '../../core/base/log';
import type { WorkspaceEngine } from '../../core/workspaceEngine';
import type { JobChange } from '../../core/jobs/jobLedger';
import type { JobRecord } from '../../core/store/jobSchema';
import type { EventPayload } from '../../core/messaging/protocol';
import type { OverlapPair } from '../../core/overlap/overlapReport';
import { BROKER_PASSWORD_SECRET, ContextKeys } from './commandIds';
import { JobsModel } from '../jobs/jobsModel';
import { DisposableBase } from '../../core/base/disposable';
import { printable } from '../../core/base/ids';

/** One workspace folder, its engine, and its jobs as the views hear of them. */
export interface FolderEngine {
  folder: vscode.WorkspaceFolder;
  engine: WorkspaceEngine;
  /** Each change of a job once, with the job that changed. */
  jobs: JobsModel;
}

type EngineModule = typeof import('../../engine');
type BrokerSecret = import('../../engine').BrokerSecret;

/**
 * One engine per workspace folder (multi-root: one each), built on first need from dist/engine.js
 * so that activation loads only the views. Engines are rebuilt when folders, settings or trust
 * change; the views listen to this host, never to an engine directly.
 */
export class EngineHost extends DisposableBase {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  private readonly reset = this._register(new vscode.EventEmitter<void>());
  /** The engines were rebuilt or their jobs re-read from disk: views showing jobs read them all again. */
  readonly onDidReset = this.reset.event;
  private readonly jobChanged = this._register(new vscode.EventEmitter<{ folder: vscode.WorkspaceFolder; change: JobChange }>());
  private readonly eventApplied = this._register(new vscode.EventEmitter<{ folder: vscode.WorkspaceFolder; job: JobRecord; payload: EventPayload; late: boolean }>());
  private readonly loopChanged = this._register(new vscode.EventEmitter<{ folder: vscode.WorkspaceFolder; loopId: string }>());
  readonly onDidChangeLoop = this.loopChanged.event;
  private readonly overlapsChanged = this._register(new vscode.EventEmitter<{ folder: vscode.WorkspaceFolder }>());
  /** A folder's overlap report changed (sessions' checkouts touching the same files). */
  readonly onDidChangeOverlaps = this.overlapsChanged.event;
  private readonly newConflict = this._register(new vscode.EventEmitter<{ folder: vscode.WorkspaceFolder; pair: OverlapPair }>());
  /** Two sessions' checkouts newly conflict: once per conflict. */
  readonly onNewConflict = this.newConflict.event;
  private readonly mergeQueueChanged = this._register(new vscode.EventEmitter<void>());
  /** Some folder's merge queue file or an entry's log changed (here, or the CLI's `mam merge run`). */
  readonly onDidChangeMergeQueue = this.mergeQueueChanged.event;
  private readonly sessionsLost = this._register(new vscode.EventEmitter<{ folder: vscode.WorkspaceFolder; names: string[] }>());
  /** The monitor found sessions whose panes are gone (a crash, a reboot, `tmux kill-server`). */
  readonly onDidLoseSessions = this.sessionsLost.event;
  /** Sessions or jobs changed somewhere: views re-read from the engines (which cache). */
  readonly onDidChange = this.changed.event;
  /** A job appeared or changed, in some folder: once per change (the folders' JobsModels drop echoes). */
  readonly onDidChangeJob = this.jobChanged.event;
  readonly onDidApplyEvent = this.eventApplied.event;
  private engines: FolderEngine[] = [];
  private building: Promise<FolderEngine[]> | undefined;
  private engineSubscriptions: vscode.Disposable[] = [];
  private module: EngineModule | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly logger: Logger,
  ) {
    super();
    this._register(vscode.workspace.onDidChangeWorkspaceFolders(() => void this.rebuild()));
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(() => void this.rebuild()));
    this._register(vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('mam') && void this.rebuild()));
    this._register(context.secrets.onDidChange((e) => e.key === BROKER_PASSWORD_SECRET && void this.rebuild()));
    // The registry and job files are also written by the CLI and other windows; watchers (not polling) follow them.
    const sessionsWatcher = this._register(vscode.workspace.createFileSystemWatcher('**/.mam/agent-sessions.yaml'));
    const onSessions = (uri: vscode.Uri) => {
      const fe = this.engineFor(uri);
      if (!fe) return;
      // A folder whose control plane appeared while the window is open (the CLI, Create Session) gets its engine started.
      this.startIfUsed(fe);
      fe.engine.notifySessionsChangedOnDisk();
    };
    this._register(sessionsWatcher.onDidChange(onSessions));
    this._register(sessionsWatcher.onDidCreate(onSessions));
    const jobsWatcher = this._register(vscode.workspace.createFileSystemWatcher('**/.mam/jobs/*.json'));
    const onJob = (uri: vscode.Uri) => this.engineFor(uri)?.engine.notifyJobChangedOnDisk(path.basename(uri.fsPath, '.json'));
    this._register(jobsWatcher.onDidChange(onJob));
    this._register(jobsWatcher.onDidCreate(onJob));
    const loopsWatcher = this._register(vscode.workspace.createFileSystemWatcher('**/.mam/loops/*.json'));
    const onLoop = (uri: vscode.Uri) => this.engineFor(uri)?.engine.notifyLoopChangedOnDisk(path.basename(uri.fsPath, '.json'));
    this._register(loopsWatcher.onDidChange(onLoop));
    this._register(loopsWatcher.onDidCreate(onLoop));
    // A saved file may change what two sessions' checkouts share: the folder's overlaps are looked at again (bounded: one look per burst).
    this._register(vscode.workspace.onDidSaveTextDocument((doc) => doc.uri.scheme === 'file' && this.engineFor(doc.uri)?.engine.overlaps.schedule()));
    const mergeWatcher = this._register(vscode.workspace.createFileSystemWatcher('**/.mam/merge/{queue.json,logs/*.log}'));
    for (const on of [mergeWatcher.onDidChange, mergeWatcher.onDidCreate, mergeWatcher.onDidDelete]) this._register(on(() => this.mergeQueueChanged.fire()));
    this._register({ dispose: () => this.disposeEngines() });
  }

  /** The engines built so far (possibly none before `ready`). */
  get current(): readonly FolderEngine[] {
    return this.engines;
  }

  /**
   * The folders MAM is used in: those holding a `.mam/` control plane, looked at now (the CLI or
   * Create Session may have just made one). The views show these; with more than one, they group
   * by folder and commands ask which one. A folder without `.mam/` has nothing to show.
   */
  get mamFolders(): readonly FolderEngine[] {
    return this.engines.filter(hasControlPlane);
  }

  /** Whether the views group by folder and messages name the folder: more than one folder uses MAM. */
  get multiRoot(): boolean {
    return this.mamFolders.length > 1;
  }

  /**
   * How a message names the folder it is about: `api: ` when more than one folder uses MAM (so
   * `MAM: api: creator-1 completed …`), nothing otherwise.
   */
  where(folderIndex: number): string {
    if (!this.multiRoot) return '';
    const fe = this.byFolderIndex(folderIndex);
    return fe ? `${printable(fe.folder.name, 60)}: ` : '';
  }

  get trusted(): boolean {
    return vscode.workspace.isTrusted;
  }

  /** Builds the engines if needed and starts those whose folder already has a control plane. */
  ready(): Promise<FolderEngine[]> {
    this.building ??= this.build();
    return this.building;
  }

  async rebuild(): Promise<FolderEngine[]> {
    this.disposeEngines();
    this.building = this.build();
    const engines = await this.building;
    this.reset.fire();
    this.changed.fire();
    return engines;
  }

  /** The engine of the folder holding `uri`, or of the only folder. */
  engineFor(uri: vscode.Uri | undefined): FolderEngine | undefined {
    if (uri) {
      const folder = vscode.workspace.getWorkspaceFolder(uri);
      if (folder) return this.engines.find((e) => e.folder.uri.toString() === folder.uri.toString());
    }
    return this.engines.length === 1 ? this.engines[0] : undefined;
  }

  byFolderIndex(index: number): FolderEngine | undefined {
    return this.engines.find((e) => e.folder.index === index);
  }

  /** Tells the views something changed (after a command). */
  refresh(): void {
    for (const { engine, jobs } of this.engines) {
      engine.reloadJobs();
      jobs.forget();
    }
    this.reset.fire();
    this.changed.fire();
  }

  private async build(): Promise<FolderEngine[]> {
    this.module ??= require(path.join(this.context.extensionPath, 'dist', 'engine.js')) as EngineModule;
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
    const trusted = vscode.workspace.isTrusted;
    const brokerSecret = trusted ? parseBrokerSecret(await this.context.secrets.get(BROKER_PASSWORD_SECRET), this.logger) : undefined;
    const engines: FolderEngine[] = folders.map((folder) => {
      const engine = this.module!.createWorkspaceEngine({
        workspace: folder.uri.fsPath,
        env: process.env,
        settings: readSettings(folder),
        ...(brokerSecret ? { brokerSecret } : {}),
        logger: this.logger,
        cliPath: path.join(this.context.extensionPath, 'dist', 'cli.js'),
        trusted,
      });
      const jobs = new JobsModel((listener) => engine.onDidChangeJob(listener), engine);
      this.engineSubscriptions.push(
        engine,
        jobs,
        engine.onDidChangeSessions(() => this.changed.fire()),
        jobs.onDidChangeJob((change) => {
          this.jobChanged.fire({ folder, change });
          this.changed.fire();
        }),
        engine.onDidApplyEvent((e) => this.eventApplied.fire({ folder, ...e })),
        engine.onDidTerminateSessions((names) => this.sessionsLost.fire({ folder, names })),
        engine.overlaps.onDidChange(() => this.overlapsChanged.fire({ folder })),
        engine.overlaps.onNewConflict((pair) => this.newConflict.fire({ folder, pair })),
        engine.onDidChangeLoop(({ loop }) => {
          this.loopChanged.fire({ folder, loopId: loop.id });
          this.changed.fire();
        }),
      );
      return { folder, engine, jobs };
    });
    this.engines = engines;
    for (const fe of engines) this.startIfUsed(fe);
    void this.updateMonitoring();
    return engines;
  }

  /** Starts the engine (broker, monitor) of a folder that holds `.mam/`, in a trusted window with monitor.autoStart. */
  private startIfUsed(fe: FolderEngine): void {
    if (!vscode.workspace.isTrusted || fe.engine.started || !hasControlPlane(fe)) return;
    if (!vscode.workspace.getConfiguration('mam').get<boolean>('monitor.autoStart', true)) return;
    void fe.engine.start().then(() => {
      void this.updateMonitoring();
      this.changed.fire();
    });
  }

  /** The context keys of the monitor menus: whether some folder's monitor runs, and whether some MAM folder's does not. */
  updateMonitoring(): Thenable<unknown> {
    const used = this.mamFolders;
    return Promise.all([
      vscode.commands.executeCommand('setContext', ContextKeys.monitoring, this.engines.some((e) => e.engine.monitoring)),
      vscode.commands.executeCommand('setContext', ContextKeys.monitorStopped, (used.length > 0 ? used : this.engines).some((e) => !e.engine.monitoring)),
    ]);
  }

  private disposeEngines(): void {
    for (const d of this.engineSubscriptions.splice(0)) {
      try {
        d.dispose();
      } catch (err) {
        this.logger.warn(`closing an engine: ${(err as Error).message}`);
      }
    }
    this.engines = [];
  }
}

function hasControlPlane(fe: FolderEngine): boolean {
  return fs.existsSync(path.join(fe.folder.uri.fsPath, '.mam'));
}

/** The `mam.*` settings of a folder as the core's settings map (names without `mam.`). */
export function readSettings(folder: vscode.WorkspaceFolder): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration('mam', folder.uri);
  const out: Record<string, unknown> = {};
  const pkg = require('../../../package.json') as { contributes: { configuration: { properties: Record<string, unknown> } } };
  for (const key of Object.keys(pkg.contributes.configuration.properties)) {
    const name = key.slice('mam.'.length);
    const inspected = config.inspect(name);
    // Only values the user set: defaults come from the core, where env and .mam.env can beat them.
    const value = inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * The broker password as Configure Broker saved it: JSON with the broker it was entered for. A bare
 * password (saved before passwords were tied to their broker) is not used: nothing says where it
 * may go.
 */
export function parseBrokerSecret(raw: string | undefined, logger: { warn(m: string): void }): BrokerSecret | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<BrokerSecret>;
    if (typeof v.host === 'string' && typeof v.port === 'number' && typeof v.password === 'string') return { host: v.host, port: v.port, password: v.password };
  } catch {
    // not JSON: an old bare password
  }
  logger.warn('the saved broker password is not tied to a broker address; enter it again with MAM: Configure Broker…');
  return undefined;
}
