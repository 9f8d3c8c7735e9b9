import * as vscode from 'vscode';
import { runDoctor } from './core/doctor';
import { JobsTreeProvider } from './views/jobsTree';
import { SessionsTreeProvider } from './views/sessionsTree';
import { WorkspaceCore, channelLogger } from './views/workspaceCore';

/** Composition root: one core per workspace folder, views wired to it. */
export function activate(context: vscode.ExtensionContext): void {
  const channel = vscode.window.createOutputChannel('Multi-Agent Mux', { log: true });
  context.subscriptions.push(channel);
  const logger = channelLogger(channel);

  let cores: WorkspaceCore[] = [];
  const rebuild = (): void => {
    cores = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => new WorkspaceCore(f, logger));
  };
  rebuild();

  const sessions = new SessionsTreeProvider(() => cores);
  const jobs = new JobsTreeProvider(() => cores);
  const refresh = (): void => {
    sessions.refresh();
    jobs.refresh();
  };
  context.subscriptions.push(
    vscode.window.createTreeView('mam.sessions', { treeDataProvider: sessions }),
    vscode.window.createTreeView('mam.jobs', { treeDataProvider: jobs }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      rebuild();
      refresh();
    }),
    vscode.commands.registerCommand('mam.refresh', refresh),
    vscode.commands.registerCommand('mam.runDoctor', async () => {
      for (const core of cores) {
        const checks = await runDoctor({ workspace: core.folder.uri.fsPath, env: process.env });
        channel.info(`doctor: ${core.folder.name}`);
        for (const c of checks) (c.ok ? channel.info : channel.error).call(channel, `${c.ok ? 'ok' : 'problem'} ${c.name}: ${c.detail}${c.fix ? ` → ${c.fix}` : ''}`);
      }
      channel.show(true);
    }),
    vscode.commands.registerCommand('mam.openControlPlane', async () => {
      const core = cores[0];
      if (!core) return void vscode.window.showInformationMessage('MAM: open a folder first.');
      await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(core.controlPlane.paths.dir));
    }),
  );

  const watcher = vscode.workspace.createFileSystemWatcher('**/.mam/{agent-sessions.yaml,jobs/*.json}');
  context.subscriptions.push(watcher, watcher.onDidChange(refresh), watcher.onDidCreate(refresh), watcher.onDidDelete(refresh));
}

export function deactivate(): void {}
