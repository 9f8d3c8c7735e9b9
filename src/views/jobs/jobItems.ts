import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import { isOpen as isOpenState, needsPermission, type JobRecord } from '../../core/store/jobSchema';
import { jobTitle } from '../../core/jobs/title';
import { formatUsage } from '../../core/usage/format';
import { DEFAULT_PRICES, type PriceTable } from '../../core/usage/prices';
import { codeSpan, markdownText } from '../shared/markdown';

/** How a job's state looks wherever a job is shown. */
const STATE_LOOK: Record<string, { icon: string; color?: string; label: string }> = {
  registered: { icon: 'circle-large-outline', label: 'registered' },
  dispatched: { icon: 'send', color: 'charts.blue', label: 'delivered' },
  started: { icon: 'sync~spin', color: 'charts.blue', label: 'running' },
  blocked: { icon: 'bell-dot', color: 'list.warningForeground', label: 'needs permission' },
  assigned: { icon: 'person', color: 'charts.blue', label: 'assigned' },
  completed: { icon: 'pass-filled', color: 'testing.iconPassed', label: 'completed' },
  failed: { icon: 'error', color: 'testing.iconFailed', label: 'failed' },
  timeout: { icon: 'watch', color: 'testing.iconFailed', label: 'timed out' },
  cancelled: { icon: 'circle-slash', color: 'disabledForeground', label: 'cancelled' },
};

/** The core's lifecycle, for a record: registered, delivered or running (views filter records with it). */
export function isOpen(job: Pick<JobRecord, 'state'>): boolean {
  return isOpenState(job.state);
}

/** A job waits for a human when the last thing its agent said was `permission_required`. */
export const isBlocked = needsPermission;

/** "3s", "4m 5s", "2h 5m": elapsed for an open job, the whole run for a finished one. */
export function elapsed(job: JobRecord, now = Date.now()): string {
  const from = Date.parse(job.dispatched_at ?? job.created_at);
  const to = job.finished_at ? Date.parse(job.finished_at) : now;
  const s = Math.max(0, Math.round((to - from) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function lookOf(job: JobRecord): { icon: string; color?: string; label: string } {
  // A person's task waiting for them to start it reads as assigned.
  const key = isBlocked(job) ? 'blocked' : job.target?.kind === 'human' && job.state === 'dispatched' ? 'assigned' : job.state;
  return STATE_LOOK[key] ?? STATE_LOOK.registered!;
}

/** Who does the job: the session (or runner) as the submitter named it, or the person. */
function assignee(job: JobRecord): string {
  return printable(job.target?.kind === 'human' ? job.target.name : job.session, 60);
}

/**
 * The row's description, state first so it survives a narrow sidebar: "running · 2m 3s ·
 * creator-1", "failed (agent_error) · 12s · breaker-1", "assigned · 3m 0s · dana".
 */
export function jobDescription(job: JobRecord, now = Date.now()): string {
  const look = lookOf(job);
  const reason = job.reason && !isOpen(job) ? ` (${printable(job.reason, 40)})` : '';
  return `${look.label}${reason} · ${elapsed(job, now)} · ${assignee(job)}`;
}

/** A job as a tree row; `idPrefix` keeps ids unique per tree (a job shows in both trees). */
export function jobTreeItem(job: JobRecord, idPrefix: string, folderIndex: number): vscode.TreeItem {
  const look = lookOf(job);
  const item = new vscode.TreeItem(printable(jobTitle(job), 80), vscode.TreeItemCollapsibleState.None);
  item.id = `${idPrefix}:${folderIndex}:${job.id}`;
  item.iconPath = new vscode.ThemeIcon(look.icon, look.color ? new vscode.ThemeColor(look.color) : undefined);
  item.description = jobDescription(job);
  item.tooltip = jobTooltip(job);
  item.accessibilityInformation = { label: `${jobTitle(job)}, ${jobDescription(job)}` };
  item.contextValue = `mam.job.${job.state}${isBlocked(job) ? '.blocked' : ''}${job.target?.kind === 'human' ? '.person' : ''}`;
  item.command = { command: 'mam.showJobLog', title: 'Show Job Log', arguments: [{ folderIndex, jobId: job.id }] };
  return item;
}

/** How much of a task a hover shows; the brief (Open Brief) has all of it. */
const TASK_CHARS = 1500;

/**
 * A job's hover: title, state, who, when, what its agent said last, and (when known) the task.
 * Names, IDs and reasons go in code spans, the agent's and the user's words as escaped text:
 * nothing is escaped inside a code span, so nothing shows a stray backslash.
 */
export function jobTooltip(job: JobRecord, task?: { text: string; loop?: string }, prices: PriceTable = DEFAULT_PRICES): vscode.MarkdownString {
  const look = lookOf(job);
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${markdownText(jobTitle(job), 200)}**\n\n`);
  md.appendMarkdown(`${look.label}${job.reason ? ` ${codeSpan(job.reason, 80)}` : ''} · ${elapsed(job)}\n\n`);
  md.appendMarkdown(`- job ${codeSpan(job.id)}\n`);
  md.appendMarkdown(`- ${job.target?.kind === 'human' ? 'person' : 'session'} ${codeSpan(assignee(job))}\n`);
  md.appendMarkdown(`- ${job.type}${job.role ? `, role ${codeSpan(job.role, 40)}` : ''}${job.parent_job ? `, part of ${codeSpan(job.parent_job)}` : ''}\n`);
  md.appendMarkdown(`- created ${codeSpan(job.created_at)}${job.finished_at ? `, finished ${codeSpan(job.finished_at)}` : ''}\n`);
  const tokens = formatUsage(job.usage, prices);
  if (tokens) md.appendMarkdown(`- tokens: ${markdownText(tokens, 200)}\n`);
  if (job.detail) md.appendMarkdown(`\n${lines(job.detail, 600)}\n`);
  if (job.late_events?.length) md.appendMarkdown(`\n_Arrived after the job ended:_ ${job.late_events.map((l) => `${codeSpan(l.event, 40)} (seq ${l.seq})`).join(', ')}\n`);
  if (task) {
    md.appendMarkdown('\n---\n\n');
    if (task.loop) md.appendMarkdown(`**Loop:** ${markdownText(task.loop, 200)}\n\n`);
    md.appendMarkdown(`${lines(task.text, TASK_CHARS)}\n`);
  }
  return md;
}

/** Text from outside over several lines, as escaped text: paragraphs kept, lines broken where they were. */
function lines(text: string, max: number): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return cut
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    // Leading spaces would make an indented code block, where the escapes show.
    .map((paragraph) => paragraph.split('\n').map((line) => markdownText(line.trimStart(), max + 1)).join('  \n'))
    .join('\n\n');
}
