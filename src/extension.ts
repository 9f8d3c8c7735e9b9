import * as vscode from 'vscode';
import type { Logger } from './core/base/log';
import { Views } from './views/host/commandIds';
import { EngineHost } from './views/host/engineHost';
import { registerJobCommands } from './views/jobs/jobCommands';
import { registerPersonCommands } from './views/jobs/personCommands';
import { JobLogProvider } from './views/jobs/jobLogDocument';
import { JobsTreeProvider } from './views/jobs/jobsTree';
import { Notifier } from './views/window/notifications';
import { registerSessionCommands } from './views/sessions/sessionCommands';
import { SessionsTreeProvider } from './views/sessions/sessionsTree';
import { JobStatusBar } from './views/window/statusBar';
import { registerDemoCommand, registerLoopCommands } from './views/loops/loopCommands';
import { LoopsTreeProvider } from './views/loops/loopsTree';
import { registerMergeQueueView, type MergeQueueTreeProvider } from './views/merge/mergeQueueTree';
import { registerPlansView, type PlansTreeProvider } from './views/plans/plansTree';
import { ReportPanels } from './views/loops/reportPanel';
import { SnapshotContentProvider } from './views/loops/snapshotDocuments';
import { UriSchemes } from './views/shared/uriSchemes';
import { GitignoreOffer } from './views/workspace/gitignoreOffer';
import { InitOffer } from './views/workspace/initOffer';
import { registerMcpServers, type McpServerProvider } from './views/workspace/mcpServers';
import { registerWorkspaceCommands } from './views/workspace/workspaceCommands';

/** What the extension hands to its own tests (and to anyone curious): the live parts. */
export interface MamApi {
  host: EngineHost;
  sessions: SessionsTreeProvider;
  jobs: JobsTreeProvider;
  loops: LoopsTreeProvider;
  mergeQueue: MergeQueueTreeProvider;
  plans: PlansTreeProvider;
  statusBar: JobStatusBar;
  notifier: Notifier;
  reports: ReportPanels;
  gitignore: GitignoreOffer;
  init: InitOffer;
  /** What the window's agent mode is offered: `mam mcp` per MAM folder. */
  mcp: McpServerProvider;
  /** How long `activate` took, in ms. */
  activationMs: number;
  /** How long evaluating dist/extension.js took, in ms (measured by the bundle's first and last lines). */
  loadMs: number;
}

/**
 * Composition root: views, commands and the status bar, wired to one engine per workspace folder.
 * The engines (SQLite, MQTT, the jobs engine) load from dist/engine.js after activation returns.
 */
export function activate(context: vscode.ExtensionContext): MamApi {
  const started = performance.now();
  const channel = vscode.window.createOutputChannel('Multi-Agent Mux', { log: true });
  context.subscriptions.push(channel);
  const host = new EngineHost(context, channelLogger(channel));
  context.subscriptions.push(host);

  const sessions = new SessionsTreeProvider(host);
  const jobs = new JobsTreeProvider(host);
  const statusBar = new JobStatusBar(host, context.workspaceState);
  const notifier = new Notifier(host);
  const jobLogs = new JobLogProvider(host);
  const loops = new LoopsTreeProvider(host);
  const { provider: mergeQueue, disposables: mergeQueueParts } = registerMergeQueueView(host);
  context.subscriptions.push(...mergeQueueParts);
  const { provider: mcp, disposables: mcpParts } = registerMcpServers(host, context);
  context.subscriptions.push(...mcpParts);
  const loopsView = vscode.window.createTreeView(Views.loops, { treeDataProvider: loops, showCollapseAll: true });
  // A loop file that cannot be read is named in its view, not hidden.
  context.subscriptions.push(loops.problems.showIn(loopsView));
  const reports = new ReportPanels(host, context.extensionUri);
  const { provider: plans, disposables: planParts } = registerPlansView(host, reports);
  context.subscriptions.push(...planParts);
  const gitignore = new GitignoreOffer(host, context.workspaceState);
  const init = new InitOffer(host, context.workspaceState, context.globalState, vscode.Uri.joinPath(context.extensionUri, 'dist', 'cli.js').fsPath);
  const sessionsView = vscode.window.createTreeView(Views.sessions, { treeDataProvider: sessions, showCollapseAll: true });
  const jobsView = vscode.window.createTreeView(Views.jobs, { treeDataProvider: jobs, showCollapseAll: true });
  // A failure counts as seen once the Jobs view has shown it: the status bar stops asking for attention.
  statusBar.watchJobsView(jobsView);
  // Restricted mode: the views still show what is on disk, and say why nothing runs.
  const trustMessage = (): void => {
    sessionsView.message = vscode.workspace.isTrusted ? undefined : 'Untrusted workspace: read-only. MAM starts no agents, broker or monitor here.';
  };
  trustMessage();
  context.subscriptions.push(vscode.workspace.onDidGrantWorkspaceTrust(trustMessage));
  context.subscriptions.push(
    sessions,
    jobs,
    statusBar,
    notifier,
    jobLogs,
    sessionsView,
    jobsView,
    loops,
    reports,
    gitignore,
    init,
    loopsView,
    vscode.workspace.registerTextDocumentContentProvider(UriSchemes.snapshot, new SnapshotContentProvider(host)),
    ...registerLoopCommands(host, reports),
    registerDemoCommand(host, reports, context.extensionUri),
    vscode.workspace.registerTextDocumentContentProvider(UriSchemes.jobLog, jobLogs),
    ...registerSessionCommands(host),
    ...registerJobCommands(host, notifier),
    ...registerPersonCommands(host, context.globalState),
    ...registerWorkspaceCommands(host, context, channel),
  );
  // Elapsed times in the Jobs view move on by themselves: its provider refreshes the open rows (jobsTree.ts).

  // A git folder without .mam/ is offered `mam init` (reading the folders only: no engine needed), and so is one added to the window later.
  const offerInit = () => void init.check().catch((err: unknown) => channel.error(`offering to initialize: ${(err as Error).message}`));
  setImmediate(offerInit);
  context.subscriptions.push(vscode.workspace.onDidChangeWorkspaceFolders((e) => e.added.length > 0 && offerInit()));
  // Build the engines off the activation path; the views fill in when they are ready.
  setImmediate(() => void host.ready().then(() => {
    sessions.refresh();
    jobs.refresh();
    statusBar.update();
    notifier.tellSharedServers();
    return gitignore.check();
  }).catch((err: unknown) => channel.error(`starting: ${(err as Error).message}`)));

  const activationMs = performance.now() - started;
  const loadMs = (module.exports as { __mamLoadMs?: number }).__mamLoadMs ?? 0;
  channel.info(`activated in ${activationMs.toFixed(1)} ms; loading the bundle took ${loadMs.toFixed(1)} ms`);
  return { host, sessions, jobs, loops, mergeQueue, plans, statusBar, notifier, reports, gitignore, init, mcp, activationMs, loadMs };
}

export function deactivate(): void {}

/** The engine's Logger over the extension's LogOutputChannel. */
function channelLogger(channel: vscode.LogOutputChannel): Logger {
  return {
    debug: (m) => channel.debug(m),
    info: (m) => channel.info(m),
    warn: (m) => channel.warn(m),
    error: (m) => channel.error(m),
  };
}
