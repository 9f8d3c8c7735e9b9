import * as vscode from 'vscode';
import type { JobRecord } from '../core/jobs/jobSchema';
import type { WorkspaceCore } from './workspaceCore';

const STATE_ICON: Record<JobRecord['state'], [string, string | undefined]> = {
  registered: ['circle-outline', undefined],
  dispatched: ['arrow-right', undefined],
  started: ['sync~spin', 'charts.blue'],
  completed: ['pass', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  timeout: ['watch', 'testing.iconFailed'],
  cancelled: ['circle-slash', 'disabledForeground'],
};

/** The Jobs view: every job record, newest first. */
export class JobsTreeProvider implements vscode.TreeDataProvider<JobRecord> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly cores: () => readonly WorkspaceCore[]) {}

  refresh(): void {
    this.changed.fire();
  }

  getChildren(element?: JobRecord): JobRecord[] {
    if (element) return [];
    return this.cores()
      .flatMap((c) => c.controlPlane.jobs.list().jobs)
      .sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
  }

  getTreeItem(job: JobRecord): vscode.TreeItem {
    const item = new vscode.TreeItem(job.id, vscode.TreeItemCollapsibleState.None);
    const [icon, color] = STATE_ICON[job.state];
    item.id = `job:${job.id}`;
    item.description = `${job.session} · ${job.state}${job.reason ? ` (${job.reason})` : ''}`;
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    item.tooltip = job.detail ?? undefined;
    item.contextValue = `mam.job.${job.state}`;
    return item;
  }
}
