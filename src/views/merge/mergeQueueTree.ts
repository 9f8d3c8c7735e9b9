import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import type { MergeEntry } from '../../core/merge/mergeQueue';
import { DisposableBase } from '../../core/base/disposable';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { codeSpan, markdownText } from '../shared/markdown';
import { ViewProblems } from '../shared/viewProblems';
import { folderItem, type FolderNode } from '../shared/folderItems';
import { folderFor, reportErrors, type FolderRef } from '../shared/picks';

/** The view's and its commands' IDs (package.json contributes the same; test/unit/contributions.test.ts checks). */
export const MergeQueueIds = {
  view: 'mam.mergeQueue',
  run: 'mam.runMergeQueue',
  enqueue: 'mam.enqueueMerge',
  remove: 'mam.removeMergeEntry',
  showLog: 'mam.showMergeLog',
} as const;

/**
 * The Merge Queue view, whole: its tree, its commands (run the queue, show an entry's log, remove
 * an entry, queue a passed loop's branch) and its subscriptions to each folder's merge queue. The
 * extension only calls this.
 */
export function registerMergeQueueView(host: EngineHost): { provider: MergeQueueTreeProvider; disposables: vscode.Disposable[] } {
  const provider = new MergeQueueTreeProvider(host);
  const view = vscode.window.createTreeView(MergeQueueIds.view, { treeDataProvider: provider, showCollapseAll: true });
  // A queue file that cannot be read is named in the view, not hidden.
  return { provider, disposables: [provider, view, provider.problems.showIn(view), ...registerMergeQueueCommands(host)] };
}

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
 * their state, why they wait, and the end of their log. It re-reads the queue file when a folder's
 * merge queue says it changed.
 */
export class MergeQueueTreeProvider extends DisposableBase implements vscode.TreeDataProvider<MergeQueueNode> {
  private readonly changed = this._register(new vscode.EventEmitter<MergeQueueNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  /** Queue files that cannot be read: the view's message names them. */
  readonly problems = this._register(new ViewProblems());

  constructor(private readonly host: EngineHost) {
    super();
    // Its queue changed here or on disk (the CLI's `mam merge run` writes it too; the host's watcher tells it).
    this._register(host.forEachFolder((fe) => fe.engine.core.mergeQueue.onDidChange(() => this.refresh())));
    this._register(host.onDidReset(() => this.refresh()));
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  private entries(fe: FolderEngine): MergeEntry[] {
    return fe.engine.core.mergeQueue.reading().entries;
  }

  async getChildren(node?: MergeQueueNode): Promise<MergeQueueNode[]> {
    await this.host.ready();
    if (!node) {
      // Only folders that use MAM; grouped by folder when there are several.
      const used = this.host.mamFolders;
      const problems: string[] = [];
      const byFolder = used.map((fe) => {
        const { entries, problem } = fe.engine.core.mergeQueue.reading();
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
    return (fe?.engine.core.mergeQueue.logTail(node.entryId, LOG_LINES) ?? []).map((line, n) => ({ kind: 'log', folderIndex: node.folderIndex, entryId: node.entryId, n, line }));
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
      item.command = { command: MergeQueueIds.showLog, title: 'Show Log', arguments: [ref] };
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
    item.command = { command: MergeQueueIds.showLog, title: 'Show Log', arguments: [ref] };
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

type EntryRef = { folderIndex: number; entryId: string };

/** The Merge Queue's commands: run it, show an entry's log, remove an entry, and queue a passed loop's branch. */
function registerMergeQueueCommands(host: EngineHost): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(MergeQueueIds.run, (ref?: FolderRef) => reportErrors('the merge queue', () => runQueue(host, ref))),
    vscode.commands.registerCommand(MergeQueueIds.showLog, (ref?: EntryRef | MergeQueueNode) =>
      reportErrors('opening the merge log', async () => {
        const fe = ref && host.byFolderIndex(ref.folderIndex);
        if (!fe || !ref || !('entryId' in ref)) return;
        // A real file in an ordinary editor: search, copy, follow it as it grows.
        await vscode.window.showTextDocument(vscode.Uri.file(fe.engine.core.mergeQueue.logFile(ref.entryId)), { preview: true });
      }),
    ),
    vscode.commands.registerCommand(MergeQueueIds.remove, (ref?: EntryRef | MergeQueueNode) =>
      reportErrors('removing the entry', async () => {
        const fe = ref && host.byFolderIndex(ref.folderIndex);
        if (!fe || !ref || !('entryId' in ref)) return;
        const entry = fe.engine.core.mergeQueue.reading().entries.find((e) => e.id === ref.entryId);
        if (!entry) return;
        const answer = await vscode.window.showWarningMessage(`Remove ${printable(entry.branch, 80)} from the merge queue?`, { modal: true, detail: 'The branch and its worktree stay as they are.' }, 'Remove');
        if (answer === 'Remove') await fe.engine.core.mergeQueue.remove(entry.id);
      }),
    ),
    vscode.commands.registerCommand(MergeQueueIds.enqueue, (ref?: { folderIndex: number; loopId?: string }) => reportErrors('queueing the branch', () => enqueueLoop(host, ref))),
  ];
}

async function runQueue(host: EngineHost, ref: FolderRef | undefined): Promise<void> {
  const fe = await folderFor(host, ref, 'Run Merge Queue');
  if (!fe) return;
  const result = await vscode.window.withProgress({ location: { viewId: MergeQueueIds.view }, title: 'Landing' }, () => fe.engine.core.mergeQueue.run());
  const waiting = result.entries.filter((e) => e.state === 'waiting');
  const landed = result.landed.map((e) => printable(e.branch, 60));
  const parts = [landed.length > 0 ? `landed ${landed.join(', ')}` : 'nothing landed', ...(waiting.length > 0 ? [`${waiting.length} waiting`] : [])];
  const message = `Merge queue${inFolder(host, fe, ' of')}: ${parts.join('; ')}.`;
  if (waiting.length > 0) void vscode.window.showWarningMessage(message);
  else void vscode.window.showInformationMessage(message);
}

/** Queues the branch of a passed loop's worktree (from the Loops view), asking for a validation command. */
async function enqueueLoop(host: EngineHost, ref: { folderIndex: number; loopId?: string } | undefined): Promise<void> {
  const fe: FolderEngine | undefined = await folderFor(host, ref, 'Add to Merge Queue');
  if (!fe) return;
  const passed = fe.engine.core.loops.list().filter((l) => l.status === 'passed' && !l.job);
  const loop = ref?.loopId ? fe.engine.core.loops.get(ref.loopId) : undefined;
  if (ref?.loopId && !loop) return; // a row of a loop that is gone
  const chosen = loop ?? (await pickPassedLoop(host, fe, passed));
  if (!chosen) return;
  const validate = await vscode.window.showInputBox({
    title: 'Add to Merge Queue',
    prompt: 'A command that must succeed on the rebased branch before it lands (run as a program with arguments, never by a shell). Empty: none.',
    placeHolder: 'npm test',
    ignoreFocusOut: true,
  });
  if (validate === undefined) return;
  const entry = await fe.engine.core.mergeQueue.enqueue({ what: chosen.checkout, ...(validate.trim() ? { validate } : {}) });
  void vscode.window.showInformationMessage(`Queued ${printable(entry.branch, 80)} into ${printable(entry.into, 60)}${inFolder(host, fe, ' in')}.`);
}

async function pickPassedLoop<T extends { id: string; task: string; checkout: string }>(host: EngineHost, fe: FolderEngine, loops: T[]): Promise<T | undefined> {
  if (loops.length === 0) {
    void vscode.window.showInformationMessage(`No review loop has passed${inFolder(host, fe, ' in') || ' here'} yet: a branch enters the merge queue after its loop passes.`);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(loops.map((l) => ({ label: printable(l.task, 80), description: printable(l.checkout, 120), loop: l })), { title: 'Add to Merge Queue', placeHolder: 'The passed loop whose branch should land' });
  return picked?.loop;
}

/** ` of api` / ` in api` when more than one folder uses MAM: which folder's queue a message is about. */
function inFolder(host: EngineHost, fe: FolderEngine, word: string): string {
  return host.multiRoot ? `${word} ${printable(fe.folder.name, 60)}` : '';
}
