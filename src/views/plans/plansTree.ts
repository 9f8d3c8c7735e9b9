import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DisposableBase } from '../../core/base/disposable';
import { printable } from '../../core/base/ids';
import type { PlanState, TaskState } from '../../core/plan/planState';
import { Commands } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import type { ReportPanels } from '../loops/reportPanel';
import { folderItem, type FolderNode } from '../shared/folderItems';
import { codeSpan, markdownLines, markdownText } from '../shared/markdown';
import { ViewProblems } from '../shared/viewProblems';
import { registerPlanCommands } from './planCommands';
import { PlanIds } from './planIds';
import { landedText, planDescription, roundsText, runnerOf, runnerText, stateWord, taskDescription, waitingFor, type RunnerState } from './planText';

/**
 * The Plans view, whole: its tree, its commands (Run Plan…, Draft Plan…, Resume, Cancel, Show Plan
 * Log, Open Plan) and its subscriptions to each folder's plans. The extension only calls this.
 */
export function registerPlansView(host: EngineHost, reports: ReportPanels): { provider: PlansTreeProvider; disposables: vscode.Disposable[] } {
  const provider = new PlansTreeProvider(host);
  const view = vscode.window.createTreeView(PlanIds.view, { treeDataProvider: provider, showCollapseAll: true });
  // A plan whose state file cannot be read is named in the view, not hidden.
  return { provider, disposables: [provider, view, provider.problems.showIn(view), ...registerPlanCommands(host, reports)] };
}

export type PlansNode =
  | FolderNode
  | { kind: 'plan'; folderIndex: number; planId: string }
  /** `loopId`: the task's loop, once it has one (Open Review Report on its row takes it). */
  | { kind: 'task'; folderIndex: number; planId: string; taskId: string; loopId?: string };

const PLAN_LOOK: Record<PlanState['status'], [string, string | undefined]> = {
  running: ['sync~spin', 'charts.blue'],
  landed: ['pass-filled', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  cancelled: ['circle-slash', 'disabledForeground'],
};

const TASK_LOOK: Record<TaskState['state'], [string, string | undefined]> = {
  pending: ['circle-large-outline', undefined],
  running: ['sync~spin', 'charts.blue'],
  landed: ['pass-filled', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  // A task it needs did not land: locked out, not broken itself.
  blocked: ['lock', 'list.warningForeground'],
  budget_exceeded: ['warning', 'list.warningForeground'],
  cancelled: ['circle-slash', 'disabledForeground'],
};

/**
 * The Plans view: each folder's plans, newest first (`mam plan list`), and under each its tasks in
 * the plan file's order with their state first (`mam plan status`). It reads the plans again when
 * a folder's plans say they changed (the runner is a process of its own: the host's watcher on
 * `.mam/plans/<id>/state.json` tells them) and when a loop changes (a task's round).
 */
export class PlansTreeProvider extends DisposableBase implements vscode.TreeDataProvider<PlansNode> {
  private readonly changed = this._register(new vscode.EventEmitter<PlansNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  /** Plan files that cannot be read: the view's message names them. */
  readonly problems = this._register(new ViewProblems());
  /** Each plan's tasks' needs, read once from the plan as it was run (it never changes). */
  private readonly needs = new Map<string, ReadonlyMap<string, readonly string[]>>();

  constructor(private readonly host: EngineHost) {
    super();
    this._register(host.forEachFolder((fe) => {
      watchable(fe);
      return [fe.engine.core.plans.onDidChange(() => this.refresh()), fe.engine.core.loops.onDidChange(() => this.refresh())];
    }));
    this._register(host.onDidReset(() => this.refresh()));
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  private plans(fe: FolderEngine): PlanState[] {
    return fe.engine.core.plans.listing().plans;
  }

  private plan(node: { folderIndex: number; planId: string }): { fe: FolderEngine; plan: PlanState } | undefined {
    const fe = this.host.byFolderIndex(node.folderIndex);
    const plan = fe?.engine.core.plans.get(node.planId);
    return fe && plan ? { fe, plan } : undefined;
  }

  async getChildren(node?: PlansNode): Promise<PlansNode[]> {
    await this.host.ready();
    if (!node) {
      // Only folders that use MAM; grouped by folder when there are several.
      const used = this.host.mamFolders;
      const problems: string[] = [];
      const byFolder = used.map((fe) => {
        watchable(fe); // a folder whose .mam/ appeared since
        const { plans, unreadable } = fe.engine.core.plans.listing();
        problems.push(...unreadable.map((u) => `${used.length > 1 ? `${fe.folder.name}: ` : ''}plan ${printable(u.id, 60)}: ${printable(u.problem, 300)}`));
        return plans.map((p): PlansNode => ({ kind: 'plan', folderIndex: fe.folder.index, planId: p.id }));
      });
      this.problems.update(problems);
      // No plan in any folder: nothing, so the view's welcome text shows.
      if (used.length > 1) return byFolder.some((nodes) => nodes.length > 0) ? used.map((fe) => ({ kind: 'folder', folderIndex: fe.folder.index })) : [];
      return byFolder[0] ?? [];
    }
    if (node.kind === 'folder') {
      const fe = this.host.byFolderIndex(node.folderIndex);
      return (fe ? this.plans(fe) : []).map((p) => ({ kind: 'plan', folderIndex: node.folderIndex, planId: p.id }));
    }
    if (node.kind !== 'plan') return [];
    const found = this.plan(node);
    return (found?.plan.tasks ?? []).map((t) => ({ kind: 'task', folderIndex: node.folderIndex, planId: node.planId, taskId: t.id, ...(t.loop_id ? { loopId: t.loop_id } : {}) }));
  }

  getParent(node: PlansNode): PlansNode | undefined {
    if (node.kind === 'task') return { kind: 'plan', folderIndex: node.folderIndex, planId: node.planId };
    if (node.kind === 'plan' && this.host.multiRoot) return { kind: 'folder', folderIndex: node.folderIndex };
    return undefined;
  }

  getTreeItem(node: PlansNode): vscode.TreeItem {
    if (node.kind === 'folder') {
      const fe = this.host.byFolderIndex(node.folderIndex);
      if (!fe) return new vscode.TreeItem('?');
      const plans = this.plans(fe);
      const running = plans.filter((p) => p.status === 'running').length;
      const item = folderItem(fe, plans.length === 0 ? 'no plans' : running ? `${running} running` : `${plans.length} ended`);
      if (plans.length === 0) item.collapsibleState = vscode.TreeItemCollapsibleState.None;
      return item;
    }
    const found = this.plan(node);
    if (!found) return new vscode.TreeItem(node.kind === 'plan' ? node.planId : node.taskId);
    const { fe, plan } = found;
    const ref = { folderIndex: node.folderIndex, planId: plan.id };
    if (node.kind === 'plan') {
      // Open while it runs, and when it failed (which task, and why, is what a person looks for); shut once it landed or was cancelled.
      const open = plan.status === 'running' || plan.status === 'failed';
      const item = new vscode.TreeItem(printable(plan.title, 80) || plan.id, open ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      const [icon, color] = PLAN_LOOK[plan.status];
      const runner = runnerOf(plan);
      item.id = `plan:${node.folderIndex}:${plan.id}`;
      item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
      item.description = planDescription(plan, runner);
      item.tooltip = planTooltip(plan, runner);
      item.contextValue = `mam.plan.${plan.status}${runner ? `.${runner.kind}` : ''}`;
      item.command = { command: PlanIds.open, title: 'Open Plan', arguments: [ref] };
      return item;
    }
    const task = plan.tasks.find((t) => t.id === node.taskId);
    if (!task) return new vscode.TreeItem(node.taskId);
    const needs = this.needsOf(fe, plan).get(task.id) ?? [];
    const round = task.loop_id ? (fe.engine.core.loops.get(task.loop_id)?.rounds.length ?? null) : null;
    const waiting = waitingFor(plan, needs, task);
    const [icon, color] = TASK_LOOK[task.state];
    const item = new vscode.TreeItem(printable(task.id, 64), vscode.TreeItemCollapsibleState.None);
    item.id = `plan:${node.folderIndex}:${plan.id}:${task.id}`;
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    item.description = taskDescription(task, waiting, round);
    item.tooltip = taskTooltip(fe, plan, task, needs, round);
    item.contextValue = `mam.planTask.${task.state}${task.loop_id ? '.loop' : ''}`;
    // Its loop's report once it has a loop; until then, the plan's page.
    item.command = task.loop_id
      ? { command: Commands.openReport, title: 'Open Review Report', arguments: [{ folderIndex: node.folderIndex, loopId: task.loop_id }] }
      : { command: PlanIds.open, title: 'Open Plan', arguments: [ref] };
    return item;
  }

  /** The tasks' needs, from the plan as it was run (read with the engine's plan reader once per plan). */
  needsOf(fe: FolderEngine, plan: PlanState): ReadonlyMap<string, readonly string[]> {
    const key = `${fe.folder.index}:${plan.id}`;
    let needs = this.needs.get(key);
    if (!needs) {
      try {
        needs = new Map(fe.engine.core.plans.specOf(plan).tasks.map((t) => [t.id, t.needs]));
      } catch {
        needs = new Map(); // a plan file edited by hand: its tasks are still shown, without their needs
      }
      this.needs.set(key, needs);
    }
    return needs;
  }
}

/**
 * Makes `.mam/plans/` exist in a folder that uses MAM, so that the host's file watcher already
 * watches it when a plan's own folder is made in it: VS Code's watcher does not always look into a
 * folder made inside another new one (seen in code-server 4.100: `.mam/plans/p-…/` made at once by
 * the first plan was not watched, and no change of its state file reached the view). Not in an
 * untrusted window, which writes nothing into the folder.
 */
function watchable(fe: FolderEngine): void {
  if (!vscode.workspace.isTrusted) return;
  const dir = fe.engine.core.plans.plans.dir;
  try {
    if (fs.existsSync(path.dirname(dir))) fs.mkdirSync(dir, { recursive: true });
  } catch {
    // a read-only checkout: the view still reads the plans when it is refreshed
  }
}

/** Names, paths and IDs in code spans, the plan's words as plain text. */
function planTooltip(plan: PlanState, runner: RunnerState | undefined): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${markdownText(plan.title, 200)}** — ${stateWord(plan.status)}, ${landedText(plan)}\n\n`);
  if (plan.reason) md.appendMarkdown(`${markdownText(plan.reason, 600)}\n\n`);
  md.appendMarkdown(`- plan ${codeSpan(plan.id)} into ${codeSpan(plan.into)}, at most ${plan.max_parallel} task${plan.max_parallel === 1 ? '' : 's'} at once\n`);
  if (runner) md.appendMarkdown(`- runner: ${markdownText(runnerText(runner))}\n`);
  if (plan.tokens) md.appendMarkdown(`- tokens: ${plan.tokens.toLocaleString('en-US')}\n`);
  md.appendMarkdown(`- started: ${new Date(plan.created_at).toLocaleString()}\n`);
  return md;
}

function taskTooltip(fe: FolderEngine, plan: PlanState, task: TaskState, needs: readonly string[], round: number | null): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${markdownText(task.id, 64)}** — ${markdownText(stateWord(task.state))}${task.state === 'running' && task.step ? ` (${markdownText(task.step)})` : ''}\n\n`);
  let text: string | undefined;
  try {
    text = fe.engine.core.plans.specOf(plan).tasks.find((t) => t.id === task.id)?.task;
  } catch {
    // a plan file edited by hand: no task text
  }
  if (text) md.appendMarkdown(`${markdownLines(text)}\n\n`);
  md.appendMarkdown(`- needs: ${needs.length > 0 ? needs.map((n) => codeSpan(n)).join(', ') : 'nothing'}\n`);
  const waiting = waitingFor(plan, needs, task);
  if (waiting.length > 0) md.appendMarkdown(`- waits for: ${waiting.map((n) => codeSpan(n)).join(', ')}${task.state === 'running' ? ' (predicted to conflict)' : ''}\n`);
  if (task.creator) md.appendMarkdown(`- creator ${codeSpan(task.creator)}${task.reviewers.length > 0 ? `, ${task.reviewers.length === 1 ? 'reviewer' : 'reviewers'} ${task.reviewers.map((r) => codeSpan(r)).join(', ')}` : ''}\n`);
  if (task.worktree) md.appendMarkdown(`- worktree ${codeSpan(task.worktree)}${task.branch ? `, branch ${codeSpan(task.branch)}` : ''}\n`);
  if (task.loop_id) md.appendMarkdown(`- loop ${codeSpan(task.loop_id)}${round ? `, ${roundsText(round)}` : ''} (click for its report)\n`);
  if (task.landed_commit) md.appendMarkdown(`- landed ${codeSpan(task.landed_commit)}\n`);
  if (task.tokens) md.appendMarkdown(`- tokens: ${task.tokens.toLocaleString('en-US')}\n`);
  if (task.why && task.state !== 'running') md.appendMarkdown(`\n${markdownText(task.why, 600)}\n`);
  return md;
}
