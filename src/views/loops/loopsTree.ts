import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import { loopTitle } from '../../core/jobs/title';
import type { LoopRound, LoopState } from '../../core/loop/loopState';
import { isPinned, type ChangedFile } from '../../core/loop/snapshot';
import { Commands } from '../host/commandIds';
import type { EngineHost } from '../host/engineHost';
import { DisposableBase } from '../../core/base/disposable';
import { codeSpan, markdownLines, markdownText } from '../shared/markdown';
import { ViewProblems } from '../shared/viewProblems';
import { folderItem, type FolderNode } from '../shared/folderItems';

export type LoopsNode =
  | FolderNode
  | { kind: 'loop'; folderIndex: number; loopId: string }
  | { kind: 'round'; folderIndex: number; loopId: string; round: number }
  | { kind: 'review'; folderIndex: number; loopId: string; round: number; reviewer: string }
  | { kind: 'files'; folderIndex: number; loopId: string; round: number }
  | { kind: 'file'; folderIndex: number; loopId: string; round: number; path: string; status: string };

const LOOP_LOOK: Record<LoopState['status'], [string, string | undefined]> = {
  running: ['sync~spin', 'charts.blue'],
  passed: ['pass-filled', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  cancelled: ['circle-slash', 'disabledForeground'],
};

const ROUND_LOOK: Record<LoopRound['status'], [string, string | undefined, string]> = {
  reviewing: ['eye', 'charts.blue', 'under review'],
  passed: ['pass', 'testing.iconPassed', 'passed'],
  not_passed: ['close', 'testing.iconFailed', 'not passed'],
  stale: ['history', 'disabledForeground', 'stale: changed during review'],
};

/** The Loops view: loop → rounds → reviewer verdicts and the round's changed files (under each folder, when more than one uses MAM). */
export class LoopsTreeProvider extends DisposableBase implements vscode.TreeDataProvider<LoopsNode> {
  private readonly changed = this._register(new vscode.EventEmitter<LoopsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private readonly files = new Map<string, Promise<ChangedFile[]>>();
  /** Loop files that cannot be read: the view's message names them. */
  readonly problems = this._register(new ViewProblems());

  constructor(private readonly host: EngineHost) {
    super();
    this._register(host.forEachFolder((fe) => fe.engine.core.loops.onDidChange(() => this.changed.fire(undefined))));
    this._register(host.onDidChange(() => this.changed.fire(undefined)));
  }

  private loop(node: { folderIndex: number; loopId?: string }): LoopState | undefined {
    if (node.loopId === undefined) return undefined;
    return this.host.byFolderIndex(node.folderIndex)?.engine.core.loops.get(node.loopId);
  }

  async getChildren(node?: LoopsNode): Promise<LoopsNode[]> {
    await this.host.ready();
    if (!node) {
      // Only folders that use MAM; grouped by folder when there are several.
      const used = this.host.mamFolders;
      const problems: string[] = [];
      const byFolder = used.map((fe) => {
        const { loops, unreadable } = fe.engine.core.loops.listing();
        problems.push(...unreadable.map((u) => `${printable(u.file, 80)} in ${printable(fe.engine.core.controlPlane.paths.loopsDir, 200)} is not a loop: ${printable(u.why, 300)}`));
        return { fe, nodes: loops.map((l): LoopsNode => ({ kind: 'loop', folderIndex: fe.folder.index, loopId: l.id })) };
      });
      this.problems.update(problems);
      // No loop in any folder: nothing, so the view's welcome text shows.
      if (used.length > 1) return byFolder.some((f) => f.nodes.length > 0) ? byFolder.map(({ fe }) => ({ kind: 'folder', folderIndex: fe.folder.index })) : [];
      return byFolder[0]?.nodes ?? [];
    }
    if (node.kind === 'folder') {
      const fe = this.host.byFolderIndex(node.folderIndex);
      return (fe?.engine.core.loops.list() ?? []).map((l) => ({ kind: 'loop', folderIndex: node.folderIndex, loopId: l.id }));
    }
    const loop = this.loop(node);
    if (!loop) return [];
    if (node.kind === 'loop') return [...loop.rounds].reverse().map((r) => ({ kind: 'round', folderIndex: node.folderIndex, loopId: node.loopId, round: r.n }));
    if (node.kind === 'round') {
      const round = loop.rounds.find((r) => r.n === node.round);
      const reviewers = round?.reviews.length ? round.reviews.map((r) => r.reviewer) : loop.reviewers;
      // A round that pinned no snapshot (a `--type loop` job's) has no changed files to list.
      return [
        ...reviewers.map((reviewer): LoopsNode => ({ kind: 'review', folderIndex: node.folderIndex, loopId: node.loopId, round: node.round, reviewer })),
        ...(round && isPinned(round.identity) ? [{ kind: 'files', folderIndex: node.folderIndex, loopId: node.loopId, round: node.round } as const] : []),
      ];
    }
    if (node.kind === 'files') {
      return (await this.changedFiles(loop, node.round)).map((f) => ({ kind: 'file', folderIndex: node.folderIndex, loopId: node.loopId, round: node.round, path: f.path, status: f.status }));
    }
    return [];
  }

  getParent(node: LoopsNode): LoopsNode | undefined {
    if (node.kind === 'folder') return undefined;
    if (node.kind === 'loop') return this.host.multiRoot ? { kind: 'folder', folderIndex: node.folderIndex } : undefined;
    if (node.kind === 'round') return { kind: 'loop', folderIndex: node.folderIndex, loopId: node.loopId };
    if (node.kind === 'file') return { kind: 'files', folderIndex: node.folderIndex, loopId: node.loopId, round: node.round };
    return { kind: 'round', folderIndex: node.folderIndex, loopId: node.loopId, round: node.round };
  }

  getTreeItem(node: LoopsNode): vscode.TreeItem {
    if (node.kind === 'folder') {
      const fe = this.host.byFolderIndex(node.folderIndex);
      if (!fe) return new vscode.TreeItem('?');
      const loops = fe.engine.core.loops.list();
      const running = loops.filter((l) => l.status === 'running').length;
      const item = folderItem(fe, loops.length === 0 ? 'no loops' : running ? `${running} running` : `${loops.length} ended`);
      if (loops.length === 0) item.collapsibleState = vscode.TreeItemCollapsibleState.None;
      return item;
    }
    const loop = this.loop(node);
    const id = `loop:${node.folderIndex}:${node.loopId}`;
    if (!loop) return new vscode.TreeItem(node.loopId);
    const ref = { folderIndex: node.folderIndex, loopId: node.loopId };
    switch (node.kind) {
      case 'loop': {
        const item = new vscode.TreeItem(printable(loopTitle(loop), 80), loop.status === 'running' ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
        const [icon, color] = LOOP_LOOK[loop.status];
        item.id = id;
        item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
        // State first, then the rounds, then why it ended (the longest part, cut first by a narrow sidebar).
        item.description = `${loop.status} · ${loop.rounds.length} round${loop.rounds.length === 1 ? '' : 's'}${loop.reason ? ` · ${printable(loop.reason, 80)}` : ''}`;
        item.tooltip = loopTooltip(loop);
        item.contextValue = `mam.loop.${loop.status}`;
        item.command = { command: Commands.openReport, title: 'Open Report', arguments: [ref] };
        return item;
      }
      case 'round': {
        const round = loop.rounds.find((r) => r.n === node.round)!;
        const [icon, color, label] = ROUND_LOOK[round.status];
        const item = new vscode.TreeItem(`Round ${round.n}`, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `${id}:r${round.n}`;
        item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
        const pinned = isPinned(round.identity);
        item.description = `${label} · ${pinned ? `tree ${round.identity.tree.slice(0, 8)}` : 'what the worker reported'}`;
        item.tooltip = roundTooltip(round);
        // Unpinned: no Open Changes on the row (package.json's menus match `mam.round` exactly).
        item.contextValue = pinned ? 'mam.round' : 'mam.round.unpinned';
        return item;
      }
      case 'review': {
        const round = loop.rounds.find((r) => r.n === node.round)!;
        const review = round.reviews.find((r) => r.reviewer === node.reviewer);
        const verdict = review?.verdict;
        const item = new vscode.TreeItem(node.reviewer, vscode.TreeItemCollapsibleState.None);
        item.id = `${id}:r${node.round}:${node.reviewer}`;
        item.iconPath = new vscode.ThemeIcon(verdict === 'PASS' ? 'pass' : verdict ? 'close' : 'loading~spin', new vscode.ThemeColor(verdict === 'PASS' ? 'testing.iconPassed' : verdict ? 'testing.iconFailed' : 'charts.blue'));
        item.description = verdict ?? 'reviewing';
        const jobId = review?.job_id ?? loop.steps.find((s) => s.key === `r${node.round}:review:${node.reviewer}`)?.job_id;
        if (jobId) item.command = { command: Commands.showJobLog, title: 'Show Job Log', arguments: [{ folderIndex: node.folderIndex, jobId }] };
        return item;
      }
      case 'files': {
        const item = new vscode.TreeItem('Changed files', vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `${id}:r${node.round}:files`;
        item.iconPath = new vscode.ThemeIcon('diff');
        item.contextValue = 'mam.round.files';
        item.command = { command: Commands.openChanges, title: 'Open Changes', arguments: [{ ...ref, round: node.round }] };
        return item;
      }
      case 'file': {
        const item = new vscode.TreeItem(vscode.Uri.file(node.path), vscode.TreeItemCollapsibleState.None);
        item.id = `${id}:r${node.round}:file:${node.path}`;
        item.label = node.path.split('/').pop();
        item.description = `${node.status} · ${node.path}`;
        item.command = { command: Commands.openSnapshotDiff, title: 'Open Diff', arguments: [{ ...ref, round: node.round, path: node.path }] };
        return item;
      }
    }
  }

  private changedFiles(loop: LoopState, round: number): Promise<ChangedFile[]> {
    const r = loop.rounds.find((x) => x.n === round);
    if (!r) return Promise.resolve([]);
    const key = `${loop.checkout}\u0000${r.identity.base}\u0000${r.identity.tree}`;
    let files = this.files.get(key);
    if (!files) {
      const engine = this.host.current.find((fe) => fe.engine.core.loops.get(loop.id))?.engine;
      files = engine ? engine.changedFiles(r.identity, loop.checkout).catch(() => []) : Promise.resolve([]);
      this.files.set(key, files);
    }
    return files;
  }
}

/** Names, paths and IDs in code spans (never escaped inside), the task as plain text: no stray backslashes. */
function loopTooltip(loop: LoopState): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  const title = loopTitle(loop);
  md.appendMarkdown(`**${markdownText(title, 200)}**\n\n`);
  // The whole task under its title (the row shows only the title).
  if (loop.task.trim() !== title) md.appendMarkdown(`${markdownLines(loop.task)}\n\n`);
  md.appendMarkdown(`- loop ${codeSpan(loop.id)}\n`);
  md.appendMarkdown(`- creator ${codeSpan(loop.creator)}, ${loop.reviewers.length === 1 ? 'reviewer' : 'reviewers'} ${loop.reviewers.map((r) => codeSpan(r)).join(', ')}\n`);
  md.appendMarkdown(loop.base ? `- checkout ${codeSpan(loop.checkout)}, base ${codeSpan(loop.base.slice(0, 12))}\n` : `- folder ${codeSpan(loop.checkout)}\n`);
  return md;
}

function roundTooltip(round: LoopRound): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  if (isPinned(round.identity)) md.appendMarkdown(`- base ${codeSpan(round.identity.base)}\n- head ${codeSpan(round.identity.head)}\n- tree ${codeSpan(round.identity.tree)}\n`);
  else md.appendMarkdown('Reviewed what the worker reported: no snapshot.\n');
  if (round.rebut) md.appendMarkdown(`\n**Rebuttal:** ${markdownText(round.rebut, 600)}\n`);
  return md;
}
