import * as vscode from 'vscode';
import { isOpen, needsPermission, type JobRecord } from '../../core/store/jobSchema';
import { Views } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { runnerOf } from '../plans/planText';
import { markdownText } from '../shared/markdown';
import { DisposableBase } from '../../core/base/disposable';

export interface StatusCounts {
  /** Open jobs that are not waiting for the user, a person's tasks aside. */
  running: number;
  /** Tasks of running plans under way (a worktree, sessions, a review loop, the merge queue), whose plan has a live runner. */
  planTasks: number;
  /** Open tasks assigned to a person (`human:NAME`). */
  assigned: number;
  /** Open jobs whose agent asked for permission. */
  blocked: number;
  /** Running sessions that show a screen only a person can answer. */
  attention: number;
  /** Jobs that failed or timed out since the user last looked at the Jobs view. */
  failed: number;
}

/** Where the time the user last looked at the Jobs view is kept, so a reload does not raise old failures again. */
const SEEN_KEY = 'mam.statusBar.failuresSeenUntil';

/**
 * One labelled status-bar item, `$(hubot) 2 running · 1 plan task · 1 needs you · 1 failed`, hidden when there
 * is nothing to say. Its background is the warning colour only while something needs the user: a
 * job waiting for permission, a session needing attention, or a failure not looked at yet — one
 * that ended after the Jobs view was last visible (showing the view, e.g. by clicking the item,
 * acknowledges it). A click opens the Jobs view.
 */
export class JobStatusBar extends DisposableBase {
  readonly item: vscode.StatusBarItem;
  /** Whether the item is shown (the API has no getter; the tests read this). */
  visible = false;
  private seenUntil: number;
  private jobsView: vscode.TreeView<unknown> | undefined;
  /** Running sessions needing attention, by folder index. */
  private attention = new Map<number, number>();
  /** Running plan tasks, by folder index: read when a folder's plans change, not on every job event. */
  private planTasks = new Map<number, number>();
  private reading: Promise<void> | undefined;
  private readAgain = false;

  constructor(
    private readonly host: EngineHost,
    private readonly memento?: vscode.Memento,
  ) {
    super();
    // `hubot`: a robot for a team of agents; it looks like none of VS Code's own counters (sync, errors, bell).
    this.item = this._register(vscode.window.createStatusBarItem('mam.jobs', vscode.StatusBarAlignment.Left, 50));
    this.item.name = 'Multi-Agent Mux';
    // `<view>.focus` is the command VS Code makes for every view.
    this.item.command = { command: `${Views.jobs}.focus`, title: 'Open the Jobs view' };
    this.seenUntil = memento?.get<number>(SEEN_KEY) ?? Date.now();
    this._register(host.onDidChange(() => {
      this.update();
      this.readAttention();
    }));
    // The counts come from each folder's jobs; the sessions needing attention from its sessions.
    this._register(host.forEachFolder((fe) => {
      this.readPlans(fe);
      return [
        fe.jobs.onDidChangeJob(() => this.update()),
        fe.engine.core.plans.onDidChange(() => {
          this.readPlans(fe);
          this.update();
        }),
        fe.engine.core.sessions.onDidChange(() => {
          this.update();
          this.readAttention();
        }),
      ];
    }));
    this.update();
  }

  /** Failures count as seen while the Jobs view shows, and up to when it was last hidden. */
  watchJobsView(view: vscode.TreeView<unknown>): void {
    this.jobsView = view;
    this._register(view.onDidChangeVisibility(() => {
      this.markSeen();
      this.update();
    }));
    if (view.visible) this.markSeen();
    this.update();
  }

  /** The counts of every folder together: what the item says. */
  counts(): StatusCounts {
    const total: StatusCounts = { running: 0, planTasks: 0, assigned: 0, blocked: 0, attention: 0, failed: 0 };
    for (const fe of this.host.current) {
      const c = this.countsOf(fe);
      for (const key of Object.keys(total) as Array<keyof StatusCounts>) total[key] += c[key];
    }
    return total;
  }

  /** One folder's counts: what its column of the tooltip says in a multi-root window. */
  countsOf(fe: FolderEngine): StatusCounts {
    const counts: StatusCounts = { running: 0, planTasks: this.planTasks.get(fe.folder.index) ?? 0, assigned: 0, blocked: 0, attention: this.attention.get(fe.folder.index) ?? 0, failed: 0 };
    const looking = this.jobsView?.visible ?? false;
    for (const job of fe.engine.core.jobs.index.list()) {
      if (needsPermission(job)) counts.blocked++;
      else if (isOpen(job.state) && job.target?.kind === 'human') counts.assigned++;
      else if (isOpen(job.state)) counts.running++;
      else if (!looking && failedSince(job, this.seenUntil)) counts.failed++;
    }
    return counts;
  }

  update(): void {
    const c = this.counts();
    const needsYou = c.blocked + c.attention;
    const parts = [c.running && `${c.running} running`, c.planTasks && `${c.planTasks} plan ${c.planTasks === 1 ? 'task' : 'tasks'}`, c.assigned && `${c.assigned} assigned`, needsYou && `${needsYou} needs you`, c.failed && `${c.failed} failed`].filter(Boolean);
    if (this.host.current.length === 0 || parts.length === 0) {
      this.item.hide();
      this.visible = false;
      return;
    }
    this.item.text = `$(hubot) ${parts.join(' · ')}`;
    this.item.tooltip = this.tooltip(c);
    const spoken = [
      c.running && `${c.running} ${c.running === 1 ? 'job' : 'jobs'} running`,
      c.planTasks && `${c.planTasks} plan ${c.planTasks === 1 ? 'task' : 'tasks'} under way`,
      c.assigned && `${c.assigned} assigned to people`,
      c.blocked && `${c.blocked} waiting for permission`,
      c.attention && `${c.attention} ${c.attention === 1 ? 'session needs' : 'sessions need'} attention`,
      c.failed && `${c.failed} failed since you last opened the Jobs view`,
    ].filter(Boolean);
    this.item.accessibilityInformation = { label: `Multi-Agent Mux: ${spoken.join(', ')}. Opens the Jobs view.`, role: 'button' };
    this.item.backgroundColor = needsYou > 0 || c.failed > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
    this.visible = true;
  }

  /** The counts as a table: one column of numbers, or, when more than one folder uses MAM, one column per folder. */
  private tooltip(total: StatusCounts): vscode.MarkdownString {
    const folders = this.host.multiRoot ? this.host.mamFolders : [];
    const columns = folders.length > 0 ? folders.map((fe) => ({ name: markdownText(fe.folder.name, 40), c: this.countsOf(fe) })) : [{ name: '', c: total }];
    const md = new vscode.MarkdownString();
    md.appendMarkdown(`| Multi-Agent Mux |${columns.map((col) => (col.name ? ` ${col.name} |` : ' |')).join('')}\n|:--|${columns.map(() => '--:').join('|')}|\n`);
    const row = (label: string, key: keyof StatusCounts) => md.appendMarkdown(`| ${label} | ${columns.map((col) => col.c[key]).join(' | ')} |\n`);
    row('Jobs running', 'running');
    row('Plan tasks under way', 'planTasks');
    row('Tasks assigned to people', 'assigned');
    row('Jobs waiting for permission', 'blocked');
    row('Sessions needing attention', 'attention');
    row('Failed or timed out, not yet seen', 'failed');
    md.appendMarkdown('\nClick to open the Jobs view (failures there count as seen).');
    return md;
  }

  /** The tasks under way in a folder's running plans (a plan whose runner died counts none: nothing moves there until Resume Plan). */
  private readPlans(fe: FolderEngine): void {
    let count = 0;
    try {
      for (const plan of fe.engine.core.plans.listing().plans) {
        if (plan.status === 'running' && runnerOf(plan)?.kind !== 'stopped') count += plan.tasks.filter((t) => t.state === 'running').length;
      }
    } catch {
      // no plans folder, or one that cannot be read: the Plans view names it
    }
    if (count > 0) this.planTasks.set(fe.folder.index, count);
    else this.planTasks.delete(fe.folder.index);
  }

  private markSeen(): void {
    this.seenUntil = Date.now();
    void this.memento?.update(SEEN_KEY, this.seenUntil);
  }

  /**
   * Sessions needing attention come from the registry, read at most once at a time: changes that
   * arrive during a read ask for one more read after it, not one each.
   */
  private readAttention(): void {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = (async () => {
      const attention = new Map<number, number>();
      for (const { folder, engine } of this.host.current) {
        const rows = await engine.core.controlPlane.sessions.list().catch(() => []);
        const count = rows.filter((r) => r.status === 'running' && engine.core.sessions.lastAttention(r.name)).length;
        if (count > 0) attention.set(folder.index, count);
      }
      if ([...attention].join() !== [...this.attention].join()) {
        this.attention = attention;
        this.update();
      }
    })().finally(() => {
      this.reading = undefined;
      if (this.readAgain) {
        this.readAgain = false;
        this.readAttention();
      }
    });
  }
}

function failedSince(job: JobRecord, since: number): boolean {
  return (job.state === 'failed' || job.state === 'timeout') && Date.parse(job.finished_at ?? job.updated_at) > since;
}
