import * as vscode from 'vscode';
import type { JobRecord } from '../core/jobs/jobSchema';
import type { EngineHost } from './engineHost';
import { isBlocked, jobTreeItem } from './jobItems';
import { DisposableBase } from './lifecycle';

/** The groups of the Jobs view, in order. */
const GROUPS = [
  { key: 'attention', label: 'Needs attention', icon: 'bell-dot', match: (j: JobRecord) => isBlocked(j) },
  { key: 'running', label: 'Running', icon: 'sync', match: (j: JobRecord) => ['registered', 'dispatched', 'started'].includes(j.state) && !isBlocked(j) },
  { key: 'failed', label: 'Failed and timed out', icon: 'error', match: (j: JobRecord) => j.state === 'failed' || j.state === 'timeout' },
  { key: 'completed', label: 'Completed', icon: 'pass', match: (j: JobRecord) => j.state === 'completed' },
  { key: 'cancelled', label: 'Cancelled', icon: 'circle-slash', match: (j: JobRecord) => j.state === 'cancelled' },
] as const;

export type JobsNode = { kind: 'group'; group: (typeof GROUPS)[number]['key'] } | { kind: 'job'; folderIndex: number; jobId: string; group: (typeof GROUPS)[number]['key'] };

/**
 * The Jobs view: every job of every folder, grouped by state, newest first, with elapsed time.
 * It renders the engines' in-memory job lists and refreshes on their change events.
 */
export class JobsTreeProvider extends DisposableBase implements vscode.TreeDataProvider<JobsNode> {
  private readonly changed = this._register(new vscode.EventEmitter<JobsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly host: EngineHost) {
    super();
    this._register(host.onDidChange(() => this.changed.fire(undefined)));
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  /** Every job with its folder, newest first. */
  allJobs(): Array<{ folderIndex: number; job: JobRecord }> {
    return this.host.current
      .flatMap((fe) => fe.engine.listJobs().map((job) => ({ folderIndex: fe.folder.index, job })))
      .sort((a, b) => (a.job.created_at < b.job.created_at ? 1 : a.job.created_at > b.job.created_at ? -1 : 0));
  }

  async getChildren(node?: JobsNode): Promise<JobsNode[]> {
    await this.host.ready();
    const all = this.allJobs();
    if (!node) return GROUPS.filter((g) => all.some((e) => g.match(e.job))).map((g) => ({ kind: 'group', group: g.key }));
    if (node.kind !== 'group') return [];
    const group = GROUPS.find((g) => g.key === node.group)!;
    return all.filter((e) => group.match(e.job)).map((e) => ({ kind: 'job', folderIndex: e.folderIndex, jobId: e.job.id, group: node.group }));
  }

  getParent(node: JobsNode): JobsNode | undefined {
    return node.kind === 'job' ? { kind: 'group', group: node.group } : undefined;
  }

  getTreeItem(node: JobsNode): vscode.TreeItem {
    if (node.kind === 'group') {
      const group = GROUPS.find((g) => g.key === node.group)!;
      const count = this.allJobs().filter((e) => group.match(e.job)).length;
      const item = new vscode.TreeItem(group.label, node.group === 'completed' || node.group === 'cancelled' ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${node.group}`;
      item.description = String(count);
      item.iconPath = new vscode.ThemeIcon(group.icon);
      return item;
    }
    const job = this.host.byFolderIndex(node.folderIndex)?.engine.job(node.jobId);
    if (!job) return new vscode.TreeItem(node.jobId);
    const item = jobTreeItem(job, 'job', node.folderIndex);
    if (this.host.current.length > 1) item.description = `${item.description as string} · ${this.host.byFolderIndex(node.folderIndex)!.folder.name}`;
    return item;
  }
}
