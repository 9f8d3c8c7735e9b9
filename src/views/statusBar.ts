import * as vscode from 'vscode';
import type { EngineHost } from './engineHost';
import { isBlocked, isOpen } from './jobItems';
import { DisposableBase } from './lifecycle';

export interface JobCounts {
  running: number;
  blocked: number;
  /** Failed or timed out in the last 24 hours. */
  failed: number;
}

const RECENT_MS = 24 * 3600_000;

/**
 * The status-bar job indicator: running, blocked (waiting for permission) and recently failed
 * jobs; a warning background when something needs attention; a click opens the Jobs view.
 */
export class JobStatusBar extends DisposableBase {
  readonly item: vscode.StatusBarItem;

  constructor(private readonly host: EngineHost) {
    super();
    this.item = this._register(vscode.window.createStatusBarItem('mam.jobs', vscode.StatusBarAlignment.Left, 50));
    this.item.name = 'MAM Jobs';
    this.item.command = 'mam.jobs.focus';
    this._register(host.onDidChange(() => this.update()));
    this.update();
  }

  counts(now = Date.now()): JobCounts {
    const counts: JobCounts = { running: 0, blocked: 0, failed: 0 };
    for (const { engine } of this.host.current) {
      for (const job of engine.listJobs()) {
        if (isBlocked(job)) counts.blocked++;
        else if (isOpen(job)) counts.running++;
        else if ((job.state === 'failed' || job.state === 'timeout') && now - Date.parse(job.finished_at ?? job.updated_at) < RECENT_MS) counts.failed++;
      }
    }
    return counts;
  }

  update(): void {
    if (this.host.current.length === 0) {
      this.item.hide();
      return;
    }
    const c = this.counts();
    this.item.text = `$(sync${c.running ? '~spin' : ''}) ${c.running}  $(bell) ${c.blocked}  $(error) ${c.failed}`;
    this.item.tooltip = new vscode.MarkdownString(
      `**Multi-Agent Mux jobs**\n\n- ${c.running} running\n- ${c.blocked} waiting for permission\n- ${c.failed} failed or timed out in the last 24 h\n\nClick to open the Jobs view.`,
    );
    this.item.accessibilityInformation = { label: `MAM jobs: ${c.running} running, ${c.blocked} waiting for permission, ${c.failed} failed` };
    this.item.backgroundColor = c.blocked > 0 || c.failed > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }
}
