import * as vscode from 'vscode';
import type { JobRecord } from '../../core/store/jobSchema';
import type { SessionRow } from '../../core/store/sessionSchema';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { isBlocked, isOpen, jobTreeItem } from '../jobs/jobItems';
import { folderItem } from '../shared/folderItems';
import { DisposableBase } from '../../core/base/disposable';
import { codeSpan, markdownText } from '../shared/markdown';
import * as path from 'node:path';
import { printable } from '../../core/base/ids';
import { pairKey, type LineRange, type OverlapPair, type PairSide } from '../../core/overlap/overlapReport';

export type SessionsNode =
  | { kind: 'folder'; folderIndex: number }
  | { kind: 'session'; folderIndex: number; name: string }
  | { kind: 'job'; folderIndex: number; session: string; jobId: string }
  /** Another session's checkout whose changes touch the same files as this session's (or would conflict). */
  | { kind: 'overlap'; folderIndex: number; session: string; pair: string }
  | { kind: 'overlapFile'; folderIndex: number; session: string; pair: string; path: string };

const RECENT_JOBS = 5;

const STATUS_LOOK: Record<SessionRow['status'], { icon: string; color?: string }> = {
  running: { icon: 'circle-filled', color: 'testing.iconPassed' },
  starting: { icon: 'loading~spin' },
  stopped: { icon: 'debug-pause', color: 'disabledForeground' },
  terminated: { icon: 'circle-slash', color: 'disabledForeground' },
  failed: { icon: 'error', color: 'testing.iconFailed' },
};

/**
 * The Sessions view: each session with its current and recent jobs (grouped by folder in a
 * multi-root workspace). It renders what the engines hold; it refreshes when they say something
 * changed, and reads the registry once per refresh.
 */
export class SessionsTreeProvider extends DisposableBase implements vscode.TreeDataProvider<SessionsNode> {
  private readonly changed = this._register(new vscode.EventEmitter<SessionsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private rows = new Map<number, Promise<SessionRow[]>>();

  constructor(private readonly host: EngineHost) {
    super();
    this._register(host.onDidChange(() => this.refresh()));
    // A session's row shows its jobs and its overlaps with other sessions' checkouts.
    this._register(host.forEachFolder(({ engine, jobs }) => [engine.core.sessions.onDidChange(() => this.refresh()), jobs.onDidChangeJob(() => this.refresh()), engine.core.overlaps.onDidChange(() => this.refresh())]));
  }

  refresh(): void {
    this.rows.clear();
    this.changed.fire(undefined);
  }

  async getChildren(node?: SessionsNode): Promise<SessionsNode[]> {
    await this.host.ready();
    if (!node) {
      // Only folders that use MAM (hold .mam/); grouped by folder when there are several.
      const used = this.host.mamFolders;
      // No session in any folder: nothing, so the view's welcome text (Create Session) shows.
      if (used.length > 1) return (await Promise.all(used.map((fe) => this.rowsOf(fe)))).some((rows) => rows.length > 0) ? used.map((fe) => ({ kind: 'folder', folderIndex: fe.folder.index })) : [];
      return used[0] ? this.sessionsOf(used[0]) : [];
    }
    const fe = this.host.byFolderIndex(node.folderIndex);
    if (!fe) return [];
    if (node.kind === 'folder') return this.sessionsOf(fe);
    if (node.kind === 'session') {
      return [
        ...fe.engine.core.overlaps.pairsOf(node.name).map((p): SessionsNode => ({ kind: 'overlap', folderIndex: node.folderIndex, session: node.name, pair: pairKey(p) })),
        ...jobsOfSession(fe, node.name).map((job): SessionsNode => ({ kind: 'job', folderIndex: node.folderIndex, session: node.name, jobId: job.id })),
      ];
    }
    if (node.kind === 'overlap') {
      const pair = pairOf(fe, node);
      return (pair?.files ?? []).map((f) => ({ kind: 'overlapFile', folderIndex: node.folderIndex, session: node.session, pair: node.pair, path: f.path }));
    }
    return [];
  }

  getParent(node: SessionsNode): SessionsNode | undefined {
    if (node.kind === 'job' || node.kind === 'overlap') return { kind: 'session', folderIndex: node.folderIndex, name: node.session };
    if (node.kind === 'overlapFile') return { kind: 'overlap', folderIndex: node.folderIndex, session: node.session, pair: node.pair };
    if (node.kind === 'session' && this.host.multiRoot) return { kind: 'folder', folderIndex: node.folderIndex };
    return undefined;
  }

  async getTreeItem(node: SessionsNode): Promise<vscode.TreeItem> {
    const fe = this.host.byFolderIndex(node.folderIndex);
    if (node.kind === 'folder' || !fe) {
      if (!fe) return new vscode.TreeItem('?');
      const rows = await this.rowsOf(fe);
      const running = rows.filter((r) => r.status === 'running' || r.status === 'starting').length;
      return folderItem(fe, rows.length === 0 ? 'no sessions' : `${running} of ${rows.length} running`);
    }
    if (node.kind === 'job') {
      const job = fe.engine.core.jobs.index.get(node.jobId);
      return job ? jobTreeItem(job, 'session-job', node.folderIndex) : new vscode.TreeItem(node.jobId);
    }
    if (node.kind === 'overlap' || node.kind === 'overlapFile') {
      const pair = pairOf(fe, node);
      if (!pair) return new vscode.TreeItem(node.kind === 'overlap' ? 'Overlap' : node.path);
      return node.kind === 'overlap' ? overlapItem(node, pair) : overlapFileItem(node, pair);
    }
    const row = (await this.rowsOf(fe)).find((r) => r.name === node.name);
    return row ? sessionItem(fe, row) : new vscode.TreeItem(node.name);
  }

  /** The registry rows of a folder, read once per refresh. */
  rowsOf(fe: FolderEngine): Promise<SessionRow[]> {
    let rows = this.rows.get(fe.folder.index);
    if (!rows) {
      rows = fe.engine.core.controlPlane.sessions.list().catch(() => []);
      this.rows.set(fe.folder.index, rows);
    }
    return rows;
  }

  private async sessionsOf(fe: FolderEngine): Promise<SessionsNode[]> {
    return (await this.rowsOf(fe)).map((r) => ({ kind: 'session', folderIndex: fe.folder.index, name: r.name }));
  }
}

/** The session's current job first, then its most recent ones. */
function jobsOfSession(fe: FolderEngine, name: string): JobRecord[] {
  const mine = fe.engine.core.jobs.index.list().filter((j) => j.target?.kind === 'local' && j.target.name === name);
  const open = mine.filter(isOpen);
  return [...open, ...mine.filter((j) => !isOpen(j))].slice(0, Math.max(RECENT_JOBS, open.length));
}

/** The pair a node names, in the folder's latest overlap report (gone once the overlap is). */
function pairOf(fe: FolderEngine, node: { session: string; pair: string }): OverlapPair | undefined {
  return fe.engine.core.overlaps.pairsOf(node.session).find((p) => pairKey(p) === node.pair);
}

/** This session's side of a pair first, the other second. */
function sides(pair: OverlapPair, session: string): { mine: PairSide; theirs: PairSide; mineIsA: boolean } {
  const mineIsA = pair.a.sessions.includes(session);
  return { mine: mineIsA ? pair.a : pair.b, theirs: mineIsA ? pair.b : pair.a, mineIsA };
}

function overlapItem(node: { folderIndex: number; session: string; pair: string }, pair: OverlapPair): vscode.TreeItem {
  const { theirs } = sides(pair, node.session);
  const who = theirs.sessions.map((s) => printable(s, 60)).join(', ');
  const conflict = pair.kind === 'conflict';
  const item = new vscode.TreeItem(`${conflict ? 'Conflicts' : 'Overlaps'} with ${who}`, vscode.TreeItemCollapsibleState.Collapsed);
  item.id = `overlap:${node.folderIndex}:${node.session}:${node.pair}`;
  item.iconPath = new vscode.ThemeIcon(conflict ? 'warning' : 'info', conflict ? new vscode.ThemeColor('list.warningForeground') : undefined);
  const conflicted = pair.files.filter((f) => f.conflict).length;
  item.description = conflict ? `${conflicted} of ${pair.files.length} file${pair.files.length === 1 ? '' : 's'}` : `${pair.files.length} file${pair.files.length === 1 ? '' : 's'}`;
  const md = new vscode.MarkdownString();
  md.appendMarkdown(conflict ? `**Would conflict** when both are merged (predicted by \`git merge-tree\` on both working trees, uncommitted changes included).\n\n` : `**Touch the same files**, and would merge cleanly as they stand.\n\n`);
  md.appendMarkdown(`- other checkout: ${codeSpan(theirs.checkout)}\n`);
  if (pair.merge_error) md.appendMarkdown(`- not predicted: ${markdownText(pair.merge_error, 300)}\n`);
  item.tooltip = md;
  item.contextValue = `mam.overlap.${pair.kind}`;
  return item;
}

function overlapFileItem(node: { folderIndex: number; session: string; pair: string; path: string }, pair: OverlapPair): vscode.TreeItem {
  const file = pair.files.find((f) => f.path === node.path);
  const { mine, theirs, mineIsA } = sides(pair, node.session);
  const myLines = (mineIsA ? file?.a_lines : file?.b_lines) ?? [];
  const theirLines = (mineIsA ? file?.b_lines : file?.a_lines) ?? [];
  const uri = vscode.Uri.file(path.join(mine.checkout, node.path));
  const item = new vscode.TreeItem(uri, vscode.TreeItemCollapsibleState.None);
  item.id = `overlap:${node.folderIndex}:${node.session}:${node.pair}:${node.path}`;
  item.label = printable(node.path, 200);
  item.iconPath = file?.conflict ? new vscode.ThemeIcon('diff-modified', new vscode.ThemeColor('list.warningForeground')) : vscode.ThemeIcon.File;
  item.description = `${file?.conflict ? 'conflict · ' : ''}${lines(myLines) || '—'} ↔ ${lines(theirLines) || '—'}`;
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`${codeSpan(node.path)}${file?.conflict ? ' — **conflicts**' : ''}\n\n`);
  md.appendMarkdown(`- here (${codeSpan(mine.checkout)}): ${lines(myLines) || 'no line changes'}\n`);
  md.appendMarkdown(`- ${markdownText(theirs.sessions.join(', '))} (${codeSpan(theirs.checkout)}): ${lines(theirLines) || 'no line changes'}\n\n`);
  md.appendMarkdown('Line numbers are those of the common base.');
  item.tooltip = md;
  const first = myLines[0]?.[0] ?? 1;
  const line = Math.max(0, first - 1);
  item.command = { command: 'vscode.open', title: 'Open File', arguments: [uri, { selection: new vscode.Range(line, 0, line, 0), preview: true }] };
  return item;
}

/** `lines 12–18, 40` (base line numbers). */
function lines(ranges: readonly LineRange[]): string {
  if (ranges.length === 0) return '';
  const shown = ranges.slice(0, 4).map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`));
  return `line${ranges.length === 1 && ranges[0]![0] === ranges[0]![1] ? '' : 's'} ${shown.join(', ')}${ranges.length > 4 ? ', …' : ''}`;
}

function sessionItem(fe: FolderEngine, row: SessionRow): vscode.TreeItem {
  const jobs = jobsOfSession(fe, row.name);
  const pairs = fe.engine.core.overlaps.pairsOf(row.name);
  const conflict = pairs.some((p) => p.kind === 'conflict');
  // The registry may still name a job another process has just ended (it releases the session a moment later).
  const held = row.current_job ? fe.engine.core.jobs.index.get(row.current_job) : undefined;
  const current = held && isOpen(held) ? held : undefined;
  const blocked = current && isBlocked(current);
  const attention = row.status === 'running' ? fe.engine.core.sessions.lastAttention(row.name) : undefined;
  const look = blocked || attention ? { icon: 'bell-dot', color: 'list.warningForeground' } : conflict ? { icon: 'warning', color: 'list.warningForeground' } : STATUS_LOOK[row.status];
  const item = new vscode.TreeItem(row.name, jobs.length + pairs.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
  item.id = `session:${fe.folder.index}:${row.name}`;
  item.iconPath = new vscode.ThemeIcon(look.icon, look.color ? new vscode.ThemeColor(look.color) : undefined);
  item.description = `${row.agent} · ${row.role} · ${attention ? 'needs attention' : blocked ? 'needs permission' : current ? 'working' : row.status}${conflict ? ' · conflict' : pairs.length > 0 ? ' · overlap' : ''}`;
  item.tooltip = sessionTooltip(row, current, blocked, attention);
  item.contextValue = ['mam.session', row.status, row.resumable ? 'resumable' : '', row.conversation_id ? 'conversation' : ''].filter(Boolean).join('.');
  return item;
}

/** Names, paths and IDs in code spans (never escaped inside), the rest as plain text: no stray backslashes. */
function sessionTooltip(row: SessionRow, current: JobRecord | undefined, blocked: boolean | undefined, attention: { name: string; answer: string } | undefined): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${markdownText(row.name)}** — ${markdownText(row.agent)}, ${markdownText(row.role)}\n\n`);
  md.appendMarkdown(`- status: ${row.status}${row.resumable ? ' (resumable)' : ''}\n`);
  md.appendMarkdown(`- folder: ${codeSpan(row.cwd)}\n`);
  md.appendMarkdown(`- conversation: ${row.conversation_id ? codeSpan(row.conversation_id) : '—'}\n`);
  md.appendMarkdown(`- pane: ${row.target ? `${codeSpan(`${row.mux} -L ${row.server}`)} ${codeSpan(row.target)}` : '—'}\n`);
  if (current) md.appendMarkdown(`- job: ${codeSpan(current.id)}${blocked ? ' — **waiting for permission**' : ''}\n`);
  if (attention) md.appendMarkdown(`\n**Needs attention:** ${markdownText(`${row.agent} shows ${attention.name}. ${attention.answer}`, 600)}\n`);
  return md;
}
