import { printable } from '../core/base/ids';
import * as vscode from 'vscode';
import type { JobRecord } from '../core/jobs/jobSchema';

/** How a job's state looks wherever a job is shown. */
const STATE_LOOK: Record<string, { icon: string; color?: string; label: string }> = {
  registered: { icon: 'circle-large-outline', label: 'registered' },
  dispatched: { icon: 'send', color: 'charts.blue', label: 'delivered' },
  started: { icon: 'sync~spin', color: 'charts.blue', label: 'running' },
  blocked: { icon: 'bell-dot', color: 'list.warningForeground', label: 'needs permission' },
  completed: { icon: 'pass-filled', color: 'testing.iconPassed', label: 'completed' },
  failed: { icon: 'error', color: 'testing.iconFailed', label: 'failed' },
  timeout: { icon: 'watch', color: 'testing.iconFailed', label: 'timed out' },
  cancelled: { icon: 'circle-slash', color: 'disabledForeground', label: 'cancelled' },
};

const OPEN = new Set(['registered', 'dispatched', 'started']);

/** A job waits for a human when the last thing its agent said was `permission_required`. */
export function isBlocked(job: JobRecord): boolean {
  return OPEN.has(job.state) && job.last_event === 'permission_required';
}

export function isOpen(job: JobRecord): boolean {
  return OPEN.has(job.state);
}

/** "3s", "4m", "2h 5m": elapsed for an open job, the whole run for a finished one. */
export function elapsed(job: JobRecord, now = Date.now()): string {
  const from = Date.parse(job.dispatched_at ?? job.created_at);
  const to = job.finished_at ? Date.parse(job.finished_at) : now;
  const s = Math.max(0, Math.round((to - from) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** A job as a tree row; `idPrefix` keeps ids unique per tree (a job shows in both trees). */
export function jobTreeItem(job: JobRecord, idPrefix: string, folderIndex: number): vscode.TreeItem {
  const lookKey = isBlocked(job) ? 'blocked' : job.state;
  const look = STATE_LOOK[lookKey] ?? STATE_LOOK.registered!;
  const item = new vscode.TreeItem(job.title ? printable(job.title, 200) : job.id, vscode.TreeItemCollapsibleState.None);
  item.id = `${idPrefix}:${folderIndex}:${job.id}`;
  item.iconPath = new vscode.ThemeIcon(look.icon, look.color ? new vscode.ThemeColor(look.color) : undefined);
  item.description = `${look.label}${job.reason && !isOpen(job) ? ` (${job.reason})` : ''} · ${elapsed(job)} · ${job.session}`;
  const md = new vscode.MarkdownString(undefined, true);
  md.appendMarkdown(`**${escape(job.title || job.id)}**\n\n`);
  md.appendMarkdown(`$(${look.icon}) ${look.label}${job.reason ? ` — \`${job.reason}\`` : ''}\n\n`);
  md.appendMarkdown(`- job: \`${job.id}\`\n- session: \`${escape(job.session)}\`\n- type: ${job.type}${job.role ? `, role ${escape(job.role)}` : ''}\n`);
  md.appendMarkdown(`- created: ${job.created_at}\n${job.finished_at ? `- finished: ${job.finished_at}\n` : ''}`);
  if (job.detail) md.appendMarkdown(`\n${escape(job.detail)}\n`);
  if (job.late_events?.length) md.appendMarkdown(`\n_Late: ${job.late_events.map((l) => `${l.event} (seq ${l.seq})`).join(', ')} arrived after the job ended._\n`);
  item.tooltip = md;
  item.contextValue = `mam.job.${job.state}${isBlocked(job) ? '.blocked' : ''}${job.target?.kind === 'human' ? '.person' : ''}`;
  // A person's task waiting for them to start it reads as assigned, with a person icon.
  if (job.target?.kind === 'human' && job.state === 'dispatched') {
    item.iconPath = new vscode.ThemeIcon('person', new vscode.ThemeColor('charts.blue'));
    item.description = `assigned · ${elapsed(job)} · ${job.target.name}`;
  }
  item.command = { command: 'mam.showJobLog', title: 'Show Job Log', arguments: [{ folderIndex, jobId: job.id }] };
  return item;
}

/** Agent text is shown as text: control characters shown, never obeyed; markdown's special characters escaped. */
export function escape(text: string): string {
  return printable(text, 4000).replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}
