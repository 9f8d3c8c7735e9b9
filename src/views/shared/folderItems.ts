import * as vscode from 'vscode';
import type { FolderEngine } from '../host/engineHost';
import { codeSpan, markdownText } from './markdown';

/** A workspace folder's row, heading its sessions, jobs, loops or merge queue when more than one folder uses MAM. */
export interface FolderNode {
  kind: 'folder';
  folderIndex: number;
}

/**
 * The row of a workspace folder in a multi-root window, drawn as VS Code's own multi-root views
 * draw theirs (the Explorer's root folders, the Source Control repositories): the folder's name
 * and its icon from the file icon theme, expanded; the description says what it holds. Its
 * context value gives it the folder's commands (Create Session, Run Merge Queue, …), which take the
 * folder from the row.
 */
export function folderItem(fe: FolderEngine, description?: string): vscode.TreeItem {
  const item = new vscode.TreeItem(fe.folder.name, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `folder:${fe.folder.index}`;
  // The folder's URI gives the file icon theme's folder icon, as the Explorer shows it.
  item.resourceUri = fe.folder.uri;
  item.iconPath = vscode.ThemeIcon.Folder;
  if (description) item.description = description;
  item.tooltip = folderTooltip(fe);
  item.contextValue = 'mam.folder';
  return item;
}

/** What the folder owns: its control plane, its broker and its terminal server. */
function folderTooltip(fe: FolderEngine): vscode.MarkdownString {
  const { engine } = fe;
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${markdownText(fe.folder.name)}** — ${codeSpan(fe.folder.uri.fsPath)}\n\n`);
  md.appendMarkdown(`- control plane: ${codeSpan(engine.core.controlPlane.paths.dir)}\n`);
  const embedded = engine.embeddedBroker();
  const external = engine.core.config.values.brokerHost.trim();
  const broker = embedded
    ? embedded.running && embedded.port ? `embedded, ${codeSpan(`127.0.0.1:${embedded.port}`)}` : 'embedded, not running'
    : external ? codeSpan(external) : engine.trusted ? '—' : 'none (untrusted)';
  md.appendMarkdown(`- broker: ${broker}\n`);
  const mux = engine.core.config.values.mux;
  md.appendMarkdown(`- terminal server: ${codeSpan(`${mux} ${mux === 'tmux' ? '-L ' : ''}${engine.core.sessions.defaultServer(mux)}`)}\n`);
  return md;
}
