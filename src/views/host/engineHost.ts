import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Logger } from '../../core/base/log';
import type { WorkspaceEngine } from '../../core/workspaceEngine';
import { BROKER_PASSWORD_SECRET, ContextKeys } from './commandIds';
import { JobsModel } from '../jobs/jobsModel';
import { DisposableBase } from '../../core/base/disposable';
import { printable } from '../../core/base/ids';
import { errorMessage } from '../../core/base/errors';

/** One workspace folder, its engine, and its jobs as the views hear of them. */
export interface FolderEngine {
  folder: vscode.WorkspaceFolder;
  engine: WorkspaceEngine;
  /** Each change of a job once, with the job that changed. */
  jobs: JobsModel;
}

/** What a view holds on one folder's engine (its subscriptions to the services' events). */
export type FolderSubscription = vscode.Disposable | readonly vscode.Disposable[] | undefined | void;

/** A view's `forEachFolder` subscription, with what it holds on the current engines. */
interface Subscriber {
  subscribe: (fe: FolderEngine) => FolderSubscription;
  held: vscode.Disposable[];
}

type EngineModule = typeof import('../../engine');
type BrokerSecret = import('../../engine').BrokerSecret;

/**
 * One engine per workspace folder (multi-root: one each), built on first need from dist/engine.js
 * so that activation loads only the views. Engines are rebuilt when folders, settings or trust
 * change. The host re-emits none of an engine's events: each view subscribes to the services it
 * shows (`fe.engine.core.sessions`, `.jobService`, `.loops`, `.mergeQueue`, `.plans`, `.overlaps`,
 * `.monitor`) through `forEachFolder`, which subscribes it again to every new engine. What the
 * host itself does: file watchers that tell the services what other processes wrote, finding a
 * folder's engine, and saying when the engines were rebuilt.
 */
export class EngineHost extends DisposableBase {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  private readonly reset = this._register(new vscode.EventEmitter<void>());
  /** The engines were rebuilt or their jobs re-read from disk: views showing jobs read them all again. */
  readonly onDidReset = this.reset.event;
  /** Coarse: the engines were rebuilt or refreshed, or a folder's engine started (broker, monitor). */
  readonly onDidChange = this.changed.event;
  private engines: FolderEngine[] = [];
  private building: Promise<FolderEngine[]> | undefined;
  private engineSubscriptions: vscode.Disposable[] = [];
  private readonly subscribers = new Set<Subscriber>();
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
    // The registry, job, loop and merge-queue files are also written by the CLI and other windows; watchers (not polling) tell the services.
    this._register(this.watchFiles('**/.mam/agent-sessions.yaml', (fe) => {
      // A folder whose control plane appeared while the window is open (the CLI, Create Session) gets its engine started.
      this.startIfUsed(fe);
      fe.engine.core.sessions.notifyChanged();
    }));
    this._register(this.watchFiles('**/.mam/jobs/*.json', (fe, uri) => fe.engine.core.jobs.index.changedOnDisk(path.basename(uri.fsPath, '.json'))));
    this._register(this.watchFiles('**/.mam/loops/*.json', (fe, uri) => fe.engine.core.loops.changedOnDisk(path.basename(uri.fsPath, '.json'))));
    this._register(this.watchFiles('**/.mam/merge/{queue.json,logs/*.log}', (fe) => fe.engine.core.mergeQueue.changedOnDisk(), { deleted: true }));
    // A plan's runner is a process of its own: its state file says each step.
    this._register(this.watchFiles('**/.mam/plans/*/state.json', (fe, uri) => fe.engine.core.plans.changedOnDisk(path.basename(path.dirname(uri.fsPath)))));
    // A saved file may change what two sessions' checkouts share: the folder's overlaps are looked at again (bounded: one look per burst).
    this._register(vscode.workspace.onDidSaveTextDocument((doc) => doc.uri.scheme === 'file' && this.engineFor(doc.uri)?.engine.core.overlaps.schedule()));
    this._register({ dispose: () => this.disposeEngines() });
  }

  /**
   * Subscribes a view to every folder's engine: `subscribe` runs for each engine now and for each
   * engine built later (after folders, settings or trust change); what it returns is disposed when
   * that engine goes. A view subscribes to the services it shows, e.g.
   * `host.forEachFolder((fe) => fe.engine.core.mergeQueue.onDidChange(() => this.refresh()))`.
   */
  forEachFolder(subscribe: (fe: FolderEngine) => FolderSubscription): vscode.Disposable {
    const entry: Subscriber = { subscribe, held: [] };
    this.subscribers.add(entry);
    for (const fe of this.engines) this.subscribeTo(entry, fe);
    return {
      dispose: () => {
        this.subscribers.delete(entry);
        disposeAll(entry.held.splice(0), this.logger);
      },
    };
  }

  /**
   * A file watcher whose changes go to the engine of the folder holding the file (created and
   * changed files; deleted ones too with `deleted`).
   */
  watchFiles(glob: string, onChange: (fe: FolderEngine, uri: vscode.Uri) => void, options: { deleted?: boolean } = {}): vscode.Disposable {
    const watcher = vscode.workspace.createFileSystemWatcher(glob);
    const on = (uri: vscode.Uri) => {
      const fe = this.engineFor(uri);
      if (fe) onChange(fe, uri);
    };
    const subs = [watcher.onDidChange(on), watcher.onDidCreate(on), ...(options.deleted ? [watcher.onDidDelete(on)] : [])];
    return { dispose: () => disposeAll([...subs, watcher], this.logger) };
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

  /** Tells the views something changed (after a command): the jobs are read from disk again. */
  refresh(): void {
    for (const { engine, jobs } of this.engines) {
      engine.core.jobs.index.reload();
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
      const jobs = new JobsModel(engine.core.jobService.onDidChange, engine.core.jobs.index);
      this.engineSubscriptions.push(engine, jobs);
      return { folder, engine, jobs };
    });
    this.engines = engines;
    for (const entry of this.subscribers) for (const fe of engines) this.subscribeTo(entry, fe);
    for (const fe of engines) this.startIfUsed(fe);
    void this.updateMonitoring();
    return engines;
  }

  private subscribeTo(entry: Subscriber, fe: FolderEngine): void {
    try {
      const held = entry.subscribe(fe);
      if (!held) return;
      if ('dispose' in held) entry.held.push(held);
      else entry.held.push(...held);
    } catch (err) {
      this.logger.warn(`subscribing a view to ${fe.folder.name}: ${errorMessage(err)}`);
    }
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
      vscode.commands.executeCommand('setContext', ContextKeys.monitoring, this.engines.some((e) => e.engine.core.monitor.running)),
      vscode.commands.executeCommand('setContext', ContextKeys.monitorStopped, (used.length > 0 ? used : this.engines).some((e) => !e.engine.core.monitor.running)),
    ]);
  }

  private disposeEngines(): void {
    // The views' subscriptions first, then the engines they were subscribed to.
    for (const entry of this.subscribers) disposeAll(entry.held.splice(0), this.logger);
    disposeAll(this.engineSubscriptions.splice(0), this.logger);
    this.engines = [];
  }
}

function disposeAll(items: readonly vscode.Disposable[], logger: Logger): void {
  for (const d of items) {
    try {
      d.dispose();
    } catch (err) {
      logger.warn(`closing an engine: ${errorMessage(err)}`);
    }
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
