import * as vscode from 'vscode';
import type { LoopRound, LoopState } from '../core/loop/loopState';
import type { ChangedFile } from '../core/loop/snapshot';
import { Commands } from './commandIds';
import type { EngineHost } from './engineHost';
import { escape } from './jobItems';
import { DisposableBase } from './lifecycle';

export type LoopsNode =
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

/** The Loops view: loop → rounds → reviewer verdicts and the round's changed files. */
export class LoopsTreeProvider extends DisposableBase implements vscode.TreeDataProvider<LoopsNode> {
  private readonly changed = this._register(new vscode.EventEmitter<LoopsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private readonly files = new Map<string, Promise<ChangedFile[]>>();

  constructor(private readonly host: EngineHost) {
    super();
    this._register(host.onDidChangeLoop(() => this.changed.fire(undefined)));
    this._register(host.onDidChange(() => this.changed.fire(undefined)));
  }

  private loop(node: { folderIndex: number; loopId: string }): LoopState | undefined {
    return this.host.byFolderIndex(node.folderIndex)?.engine.loop(node.loopId);
  }

  async getChildren(node?: LoopsNode): Promise<LoopsNode[]> {
    const engines = await this.host.ready();
    if (!node) return engines.flatMap((fe) => fe.engine.listLoops().map((l): LoopsNode => ({ kind: 'loop', folderIndex: fe.folder.index, loopId: l.id })));
    const loop = this.loop(node);
    if (!loop) return [];
    if (node.kind === 'loop') return [...loop.rounds].reverse().map((r) => ({ kind: 'round', folderIndex: node.folderIndex, loopId: node.loopId, round: r.n }));
    if (node.kind === 'round') {
      const round = loop.rounds.find((r) => r.n === node.round);
      const reviewers = round?.reviews.length ? round.reviews.map((r) => r.reviewer) : loop.reviewers;
      return [
        ...reviewers.map((reviewer): LoopsNode => ({ kind: 'review', folderIndex: node.folderIndex, loopId: node.loopId, round: node.round, reviewer })),
        { kind: 'files', folderIndex: node.folderIndex, loopId: node.loopId, round: node.round },
      ];
    }
    if (node.kind === 'files') {
      return (await this.changedFiles(loop, node.round)).map((f) => ({ kind: 'file', folderIndex: node.folderIndex, loopId: node.loopId, round: node.round, path: f.path, status: f.status }));
    }
    return [];
  }

  getParent(node: LoopsNode): LoopsNode | undefined {
    if (node.kind === 'loop') return undefined;
    if (node.kind === 'round') return { kind: 'loop', folderIndex: node.folderIndex, loopId: node.loopId };
    if (node.kind === 'file') return { kind: 'files', folderIndex: node.folderIndex, loopId: node.loopId, round: node.round };
    return { kind: 'round', folderIndex: node.folderIndex, loopId: node.loopId, round: node.round };
  }

  getTreeItem(node: LoopsNode): vscode.TreeItem {
    const loop = this.loop(node);
    const id = `loop:${node.folderIndex}:${node.loopId}`;
    if (!loop) return new vscode.TreeItem(node.loopId);
    const ref = { folderIndex: node.folderIndex, loopId: node.loopId };
    switch (node.kind) {
      case 'loop': {
        const item = new vscode.TreeItem(loop.task.split('\n')[0]!.slice(0, 80), loop.status === 'running' ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
        const [icon, color] = LOOP_LOOK[loop.status];
        item.id = id;
        item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
        item.description = `${loop.status}${loop.reason ? ` (${loop.reason})` : ''} · ${loop.rounds.length} round${loop.rounds.length === 1 ? '' : 's'}`;
        item.tooltip = new vscode.MarkdownString(`**${escape(loop.task.split('\n')[0]!)}**\n\n- loop \`${loop.id}\`\n- creator ${escape(loop.creator)}, reviewers ${escape(loop.reviewers.join(', '))}\n- checkout \`${escape(loop.checkout)}\`, base \`${loop.base.slice(0, 12)}\``);
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
        item.description = `${label} · tree ${round.identity.tree.slice(0, 8)}`;
        item.tooltip = `base ${round.identity.base}\nhead ${round.identity.head}\ntree ${round.identity.tree}${round.rebut ? `\nrebuttal: ${round.rebut}` : ''}`;
        item.contextValue = 'mam.round';
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
      const engine = this.host.current.find((fe) => fe.engine.loop(loop.id))?.engine;
      files = engine ? engine.changedFiles(r.identity, loop.checkout).catch(() => []) : Promise.resolve([]);
      this.files.set(key, files);
    }
    return files;
  }
}
