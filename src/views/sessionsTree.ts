import * as vscode from 'vscode';
import type { JobRecord } from '../core/store/jobSchema';
import type { SessionRow } from '../core/store/sessionSchema';
import type { EngineHost, FolderEngine } from './engineHost';
import { isBlocked, isOpen, jobTreeItem } from './jobItems';
import { DisposableBase } from '../core/base/disposable';
import { codeSpan, markdownText } from './markdown';

export type SessionsNode =
  | { kind: 'folder'; folderIndex: number }
  | { kind: 'session'; folderIndex: number; name: string }
  | { kind: 'job'; folderIndex: number; session: string; jobId: string };

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
  }

  refresh(): void {
    this.rows.clear();
    this.changed.fire(undefined);
  }

  async getChildren(node?: SessionsNode): Promise<SessionsNode[]> {
    const engines = await this.host.ready();
    if (!node) {
      if (engines.length > 1) return engines.map((fe) => ({ kind: 'folder', folderIndex: fe.folder.index }));
      return engines[0] ? this.sessionsOf(engines[0]) : [];
    }
    const fe = this.host.byFolderIndex(node.folderIndex);
    if (!fe) return [];
    if (node.kind === 'folder') return this.sessionsOf(fe);
    if (node.kind === 'session') {
      return jobsOfSession(fe, node.name).map((job) => ({ kind: 'job', folderIndex: node.folderIndex, session: node.name, jobId: job.id }));
    }
    return [];
  }

  getParent(node: SessionsNode): SessionsNode | undefined {
    if (node.kind === 'job') return { kind: 'session', folderIndex: node.folderIndex, name: node.session };
    if (node.kind === 'session' && this.host.current.length > 1) return { kind: 'folder', folderIndex: node.folderIndex };
    return undefined;
  }

  async getTreeItem(node: SessionsNode): Promise<vscode.TreeItem> {
    const fe = this.host.byFolderIndex(node.folderIndex);
    if (node.kind === 'folder' || !fe) {
      const item = new vscode.TreeItem(fe?.folder.name ?? '?', vscode.TreeItemCollapsibleState.Expanded);
      item.id = `folder:${node.folderIndex}`;
      item.iconPath = vscode.ThemeIcon.Folder;
      return item;
    }
    if (node.kind === 'job') {
      const job = fe.engine.job(node.jobId);
      return job ? jobTreeItem(job, 'session-job', node.folderIndex) : new vscode.TreeItem(node.jobId);
    }
    const row = (await this.rowsOf(fe)).find((r) => r.name === node.name);
    return row ? sessionItem(fe, row) : new vscode.TreeItem(node.name);
  }

  /** The registry rows of a folder, read once per refresh. */
  rowsOf(fe: FolderEngine): Promise<SessionRow[]> {
    let rows = this.rows.get(fe.folder.index);
    if (!rows) {
      rows = fe.engine.listSessions().catch(() => []);
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
  const mine = fe.engine.listJobs().filter((j) => j.target?.kind === 'local' && j.target.name === name);
  const open = mine.filter(isOpen);
  return [...open, ...mine.filter((j) => !isOpen(j))].slice(0, Math.max(RECENT_JOBS, open.length));
}

function sessionItem(fe: FolderEngine, row: SessionRow): vscode.TreeItem {
  const jobs = jobsOfSession(fe, row.name);
  // The registry may still name a job another process has just ended (it releases the session a moment later).
  const held = row.current_job ? fe.engine.job(row.current_job) : undefined;
  const current = held && isOpen(held) ? held : undefined;
  const blocked = current && isBlocked(current);
  const attention = row.status === 'running' ? fe.engine.attentionOf(row.name) : undefined;
  const look = blocked || attention ? { icon: 'bell-dot', color: 'list.warningForeground' } : STATUS_LOOK[row.status];
  const item = new vscode.TreeItem(row.name, jobs.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
  item.id = `session:${fe.folder.index}:${row.name}`;
  item.iconPath = new vscode.ThemeIcon(look.icon, look.color ? new vscode.ThemeColor(look.color) : undefined);
  item.description = `${row.agent} · ${row.role} · ${attention ? 'needs attention' : blocked ? 'needs permission' : current ? 'working' : row.status}`;
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
