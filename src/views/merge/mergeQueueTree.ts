import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import type { MergeEntry } from '../../core/merge/mergeQueue';
import { DisposableBase } from '../../core/base/disposable';
import { Commands } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { codeSpan, markdownText } from '../shared/markdown';
import { ViewProblems } from '../shared/viewProblems';
import { folderItem, type FolderNode } from '../shared/folderItems';

export type MergeQueueNode =
  | FolderNode
  | { kind: 'entry'; folderIndex: number; entryId: string }
  | { kind: 'log'; folderIndex: number; entryId: string; n: number; line: string };

/** How many of an entry's last log lines its row shows when expanded (Show Log opens all of it). */
const LOG_LINES = 8;

const LOOK: Record<MergeEntry['state'], [string, string | undefined]> = {
  queued: ['circle-large-outline', undefined],
  running: ['sync~spin', 'charts.blue'],
  waiting: ['bell-dot', 'list.warningForeground'],
  landed: ['pass-filled', 'testing.iconPassed'],
};

/**
 * The Merge Queue view: the entries of each folder's queue in order (`mam merge status`), with
 * their state, why they wait, and the end of their log. It re-reads the queue file when the host
 * says it changed (a watcher: the CLI's `mam merge run` writes it too).
 */
export class MergeQueueTreeProvider extends DisposableBase implements vscode.TreeDataProvider<MergeQueueNode> {
  private readonly changed = this._register(new vscode.EventEmitter<MergeQueueNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  /** Queue files that cannot be read: the view's message names them. */
  readonly problems = this._register(new ViewProblems());

  constructor(private readonly host: EngineHost) {
    super();
    this._register(host.onDidChangeMergeQueue(() => this.refresh()));
    this._register(host.onDidReset(() => this.refresh()));
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  private entries(fe: FolderEngine): MergeEntry[] {
    return fe.engine.mergeQueue.reading().entries;
  }

  async getChildren(node?: MergeQueueNode): Promise<MergeQueueNode[]> {
    await this.host.ready();
    if (!node) {
      // Only folders that use MAM; grouped by folder when there are several.
      const used = this.host.mamFolders;
      const problems: string[] = [];
      const byFolder = used.map((fe) => {
        const { entries, problem } = fe.engine.mergeQueue.reading();
        if (problem) problems.push(used.length > 1 ? `${fe.folder.name}: ${problem}` : problem);
        return entries.map((e): MergeQueueNode => ({ kind: 'entry', folderIndex: fe.folder.index, entryId: e.id }));
      });
      this.problems.update(problems);
      // No entry in any folder: nothing, so the view's welcome text shows.
      if (used.length > 1) return byFolder.some((nodes) => nodes.length > 0) ? used.map((fe) => ({ kind: 'folder', folderIndex: fe.folder.index })) : [];
      return byFolder[0] ?? [];
    }
    if (node.kind === 'folder') {
      const fe = this.host.byFolderIndex(node.folderIndex);
      return (fe ? this.entries(fe) : []).map((e) => ({ kind: 'entry', folderIndex: node.folderIndex, entryId: e.id }));
    }
    if (node.kind !== 'entry') return [];
    const fe = this.host.byFolderIndex(node.folderIndex);
    return (fe?.engine.mergeQueue.logTail(node.entryId, LOG_LINES) ?? []).map((line, n) => ({ kind: 'log', folderIndex: node.folderIndex, entryId: node.entryId, n, line }));
  }

  getParent(node: MergeQueueNode): MergeQueueNode | undefined {
    if (node.kind === 'log') return { kind: 'entry', folderIndex: node.folderIndex, entryId: node.entryId };
    if (node.kind === 'entry' && this.host.multiRoot) return { kind: 'folder', folderIndex: node.folderIndex };
    return undefined;
  }

  getTreeItem(node: MergeQueueNode): vscode.TreeItem {
    const fe = this.host.byFolderIndex(node.folderIndex);
    if (node.kind === 'folder') {
      if (!fe) return new vscode.TreeItem('?');
      const entries = this.entries(fe);
      const waiting = entries.filter((e) => e.state === 'waiting').length;
      const queued = entries.filter((e) => e.state !== 'landed').length;
      const item = folderItem(fe, entries.length === 0 ? 'empty' : [queued && `${queued} queued`, waiting && `${waiting} waiting`].filter(Boolean).join(' · ') || `${entries.length} landed`);
      if (entries.length === 0) item.collapsibleState = vscode.TreeItemCollapsibleState.None;
      return item;
    }
    const ref = { folderIndex: node.folderIndex, entryId: node.entryId };
    if (node.kind === 'log') {
      // `[2026-12-01T10:00:00.000Z] text`: the time goes to the tooltip, the text is the row.
      const m = /^\[([^\]]+)\] (.*)$/.exec(node.line);
      const item = new vscode.TreeItem(printable(m ? m[2]! : node.line.trim(), 200));
      item.id = `merge:${node.folderIndex}:${node.entryId}:log:${node.n}:${node.line.length}`;
      item.tooltip = m ? new Date(m[1]!).toLocaleString() : undefined;
      item.command = { command: Commands.showMergeLog, title: 'Show Log', arguments: [ref] };
      return item;
    }
    const entry = fe ? this.entries(fe).find((e) => e.id === node.entryId) : undefined;
    if (!entry) return new vscode.TreeItem(node.entryId);
    const [icon, color] = LOOK[entry.state];
    const item = new vscode.TreeItem(printable(entry.branch, 80), vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `merge:${node.folderIndex}:${entry.id}`;
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    item.description = `→ ${printable(entry.into, 60)} · ${stateText(entry)}`;
    item.tooltip = entryTooltip(entry);
    item.contextValue = `mam.mergeEntry.${entry.state}`;
    item.command = { command: Commands.showMergeLog, title: 'Show Log', arguments: [ref] };
    return item;
  }
}

function stateText(e: MergeEntry): string {
  if (e.state === 'running') return e.step ?? 'running';
  if (e.state === 'waiting') return e.job_id ? `waiting on ${printable(e.creator, 40)}` : 'waiting';
  return e.state;
}

function entryTooltip(e: MergeEntry): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${markdownText(e.branch)}** → ${codeSpan(e.into)} — ${stateText(e)}\n\n`);
  if (e.reason) md.appendMarkdown(`${markdownText(e.reason, 600)}\n\n`);
  md.appendMarkdown(`- entry: ${codeSpan(e.id)}\n`);
  if (e.worktree) md.appendMarkdown(`- worktree: ${codeSpan(e.worktree)}\n`);
  md.appendMarkdown(`- reviewed: loop ${codeSpan(e.reviewed.loop)}, tree ${codeSpan(e.reviewed.tree.slice(0, 12))}\n`);
  md.appendMarkdown(`- validate: ${e.validate ? codeSpan(e.validate.join(' ')) : '—'}\n`);
  if (e.job_id) md.appendMarkdown(`- job: ${codeSpan(e.job_id)} for ${markdownText(e.creator)}\n`);
  if (e.landed_commit) md.appendMarkdown(`- landed: ${codeSpan(e.landed_commit.slice(0, 12))}${e.landed_at ? ` at ${new Date(e.landed_at).toLocaleString()}` : ''}\n`);
  md.appendMarkdown(`- queued: ${new Date(e.created_at).toLocaleString()}\n`);
  return md;
}
