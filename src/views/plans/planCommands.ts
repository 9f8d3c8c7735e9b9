import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import type { PlanState } from '../../core/plan/planState';
import { Commands } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import type { ReportPanels } from '../loops/reportPanel';
import { runSteps } from '../shared/multiStep';
import { folderFor, reportErrors, type FolderRef } from '../shared/picks';
import { PlanIds } from './planIds';
import { planDescription, runnerOf, runnerText } from './planText';

/** What Run Plan… accepts when called with arguments (scripts, tests): the plan file, relative to the folder or absolute. */
export interface RunPlanArgs {
  folderIndex?: number;
  file: string;
}

/** What Draft Plan… accepts when called with arguments: the goal, the planner session, the file to write. */
export interface DraftPlanArgs {
  folderIndex?: number;
  goal: string;
  planner: string;
  out: string;
}

interface PlanRef extends FolderRef {
  planId: string;
}

/** Plans in VS Code: run one from a file, draft one, resume, cancel, its run log, its page. */
export function registerPlanCommands(host: EngineHost, reports: ReportPanels): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(PlanIds.run, (args?: RunPlanArgs | FolderRef) => reportErrors('running the plan', () => runPlan(host, reports, args))),
    vscode.commands.registerCommand(PlanIds.draft, (args?: DraftPlanArgs | FolderRef) => reportErrors('drafting the plan', () => draftPlan(host, args))),
    vscode.commands.registerCommand(PlanIds.open, (ref?: PlanRef | FolderRef) =>
      reportErrors('opening the plan', async () => {
        const picked = await planOf(host, ref, 'Open Plan');
        if (picked) reports.showPlan(picked.folderIndex, picked.planId);
      }),
    ),
    vscode.commands.registerCommand(PlanIds.resume, (ref?: PlanRef | FolderRef) => reportErrors('resuming the plan', () => resumePlan(host, reports, ref))),
    vscode.commands.registerCommand(PlanIds.cancel, (ref?: PlanRef | FolderRef) => reportErrors('cancelling the plan', () => cancelPlan(host, ref))),
    vscode.commands.registerCommand(PlanIds.showLog, (ref?: PlanRef | FolderRef) =>
      reportErrors('opening the plan log', async () => {
        const picked = await planOf(host, ref, 'Show Plan Log');
        const fe = picked && host.byFolderIndex(picked.folderIndex);
        const plan = picked && fe?.engine.core.plans.get(picked.planId);
        if (!fe || !plan) return;
        const log = fe.engine.core.plans.runLog(plan.id);
        if (!fs.existsSync(log)) {
          void vscode.window.showInformationMessage(`MAM: ${host.where(fe.folder.index)}the plan “${planTitle(plan)}” has no run log: it was run by \`mam plan run\` in a terminal, which showed its steps there.`);
          return;
        }
        // A real file in an ordinary editor: search, copy, follow it as it grows.
        await vscode.window.showTextDocument(vscode.Uri.file(log), { preview: true });
      }),
    ),
  ];
}

async function runPlan(host: EngineHost, reports: ReportPanels, args: RunPlanArgs | FolderRef | undefined): Promise<void> {
  const fe = await folderFor(host, args, 'Run Plan');
  if (!fe) return;
  const file = args && 'file' in args ? args.file : await pickPlanFile(fe);
  if (!file) return;
  // Checked and stored here (a bad plan is refused with its one line, and nothing is made), then run by a process of its own.
  const plan = await fe.engine.core.plans.run(file);
  // The Plans view (collapsed until plans are used) shows it, and its page opens in the editor.
  await vscode.commands.executeCommand(`${PlanIds.view}.focus`);
  reports.showPlan(fe.folder.index, plan.id);
}

/**
 * The plan file to run: the YAML files of the folder (the active editor's first, so Enter takes it),
 * and Browse… for one elsewhere. A quick pick rather than the file dialog alone: plans live in the
 * repository, and a pick lists them by name without a trip through folders.
 */
async function pickPlanFile(fe: FolderEngine): Promise<string | undefined> {
  const found = await vscode.workspace.findFiles(new vscode.RelativePattern(fe.folder, '**/*.{yaml,yml}'), '{**/node_modules/**,**/.git/**,**/.mam/**}', 500);
  const active = vscode.window.activeTextEditor?.document.uri.fsPath;
  const files = found.map((u) => u.fsPath).sort((a, b) => Number(b === active) - Number(a === active) || a.localeCompare(b));
  const browse = { label: '$(folder-opened) Browse…', description: 'a plan file elsewhere', file: undefined };
  const items = [
    ...files.map((file) => {
      const rel = path.relative(fe.folder.uri.fsPath, file);
      return { label: `$(file) ${printable(path.basename(file), 120)}`, description: path.dirname(rel) === '.' ? undefined : printable(path.dirname(rel), 200), file };
    }),
    browse,
  ];
  const picked = files.length > 0 ? await vscode.window.showQuickPick(items, { title: 'Run Plan', placeHolder: 'The plan file to run (YAML: its tasks, who creates and reviews each, what each needs)', matchOnDescription: true }) : browse;
  if (!picked) return undefined;
  if (picked.file) return picked.file;
  const chosen = await vscode.window.showOpenDialog({ title: 'Run Plan', defaultUri: fe.folder.uri, canSelectMany: false, canSelectFolders: false, filters: { 'Plan files': ['yaml', 'yml'] }, openLabel: 'Run Plan' });
  return chosen?.[0]?.fsPath;
}

/** Draft Plan…: the goal, the planner session, the file to write; the planner's job under a progress notification; the plan opened for reading. */
async function draftPlan(host: EngineHost, args: DraftPlanArgs | FolderRef | undefined): Promise<void> {
  const fe = await folderFor(host, args, 'Draft Plan');
  if (!fe) return;
  const request = args && 'goal' in args ? args : await askDraft(fe);
  if (!request) return;
  const where = host.where(fe.folder.index);
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `MAM: ${where}${printable(request.planner, 64)} is drafting a plan…` },
    () => fe.engine.core.plans.draft({ goal: request.goal, planner: request.planner, out: request.out }),
  );
  await vscode.window.showTextDocument(vscode.Uri.file(result.file), { preview: false });
  const run = 'Run Plan';
  void vscode.window
    .showInformationMessage(`MAM: ${where}${printable(path.basename(result.file), 80)} holds a plan of ${result.tasks} task${result.tasks === 1 ? '' : 's'}. Read it, edit it as you like, then run it.`, run)
    .then((answer) => answer === run && vscode.commands.executeCommand(PlanIds.run, { folderIndex: fe.folder.index, file: result.file }));
}

async function askDraft(fe: FolderEngine): Promise<DraftPlanArgs | undefined> {
  const running = (await fe.engine.core.controlPlane.sessions.list()).filter((s) => s.status === 'running');
  if (running.length === 0) {
    void vscode.window.showWarningMessage('MAM: no running session to draft the plan. Create a planner session first.', 'Create Session').then((a) => a && vscode.commands.executeCommand(Commands.createSession));
    return undefined;
  }
  // Planners first: the role says who is meant to write plans.
  const sessions = [...running].sort((a, b) => Number(b.role === 'planner') - Number(a.role === 'planner') || a.name.localeCompare(b.name));
  const items = sessions.map((s) => ({ label: s.name, description: `${s.agent} · ${s.role}` }));
  const root = fe.folder.uri.fsPath;
  const chosen: { goal?: string; planner?: (typeof items)[number]; out?: string } = {};
  const done = await runSteps('Draft Plan', [
    {
      run: async (input) =>
        void (chosen.goal = await input.input({
          placeholder: 'The goal, e.g. Email validation for signup',
          prompt: 'What the plan is for: the planner splits it into tasks that need each other.',
          value: chosen.goal,
          validate: (v) => (v.trim() ? undefined : 'Say what the plan is for.'),
        })),
    },
    { run: async (input) => void (chosen.planner = await input.pick({ placeholder: 'The session that drafts the plan', items, active: chosen.planner, matchOnDescription: true })) },
    {
      run: async (input) =>
        void (chosen.out = await input.input({
          placeholder: 'The file to write, in the folder',
          prompt: 'Never written over an existing file.',
          value: chosen.out ?? freeName(root),
          validate: (v) => outProblem(root, v),
        })),
    },
  ]);
  if (!done) return undefined;
  return { goal: chosen.goal!.trim(), planner: chosen.planner!.label, out: chosen.out!.trim() };
}

/** `plan.yaml`, or `plan-2.yaml`… when that exists. */
function freeName(root: string): string {
  for (let n = 1; ; n++) {
    const name = n === 1 ? 'plan.yaml' : `plan-${n}.yaml`;
    if (!fs.existsSync(path.join(root, name))) return name;
  }
}

/** Why the draft cannot be written to `value` (relative to the folder), if it cannot. */
function outProblem(root: string, value: string): string | undefined {
  const name = value.trim();
  if (!name) return 'Name the file to write.';
  if (!/\.ya?ml$/i.test(name)) return 'A plan file ends in .yaml or .yml.';
  const file = path.resolve(root, name);
  if (fs.existsSync(file)) return `${name} exists: name another file.`;
  if (!fs.existsSync(path.dirname(file))) return `There is no folder ${path.dirname(name)}.`;
  return undefined;
}

/** Resume Plan: a plan whose runner stopped midway (a crash, a reboot) goes on in a process of its own; a live one is left alone. */
async function resumePlan(host: EngineHost, reports: ReportPanels, ref: PlanRef | FolderRef | undefined): Promise<void> {
  const picked = await planOf(host, ref, 'Resume Plan', (p) => p.status === 'running' && runnerOf(p)?.kind !== 'live');
  const fe = picked && host.byFolderIndex(picked.folderIndex);
  const plan = picked && fe?.engine.core.plans.get(picked.planId);
  if (!fe || !plan) return;
  const where = host.where(fe.folder.index);
  if (plan.status !== 'running') return void vscode.window.showInformationMessage(`MAM: ${where}the plan “${planTitle(plan)}” has ended (${plan.status}); nothing to resume.`);
  const runner = runnerOf(plan);
  if (runner?.kind === 'live') return void vscode.window.showInformationMessage(`MAM: ${where}the plan “${planTitle(plan)}” is being run by ${runnerText(runner)}; nothing to resume.`);
  fe.engine.core.plans.resume(plan.id);
  reports.showPlan(fe.folder.index, plan.id);
}

/** Cancel Plan: asks first, as Cancel Loop does; nothing more starts, the running tasks' loops are cancelled, branches and worktrees stay. */
async function cancelPlan(host: EngineHost, ref: PlanRef | FolderRef | undefined): Promise<void> {
  const picked = await planOf(host, ref, 'Cancel Plan', (p) => p.status === 'running');
  const fe = picked && host.byFolderIndex(picked.folderIndex);
  const plan = picked && fe?.engine.core.plans.get(picked.planId);
  if (!fe || !plan) return;
  const where = host.where(fe.folder.index);
  if (plan.status !== 'running') return void vscode.window.showInformationMessage(`MAM: ${where}the plan “${planTitle(plan)}” had already ended (${plan.status}).`);
  const yes = 'Cancel Plan';
  const answer = await vscode.window.showWarningMessage(
    `Cancel the plan “${planTitle(plan)}”?`,
    { modal: true, detail: 'No task starts any more; the running tasks’ review loops are cancelled (each agent finishes its current turn). What landed stays, and so do the other tasks’ branches and worktrees.' },
    yes,
  );
  if (answer !== yes) return;
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${where}cancelling the plan…` }, () => fe.engine.core.plans.cancel(plan.id));
}

/**
 * The plan a row names; else the folder (a folder row's, or picked) and then one of its plans that
 * `filter` keeps (a command that acts on any plan takes the only one without asking).
 */
async function planOf(host: EngineHost, ref: PlanRef | FolderRef | undefined, title: string, filter?: (plan: PlanState) => boolean): Promise<PlanRef | undefined> {
  if (ref && 'planId' in ref) return ref;
  const fe = await folderFor(host, ref, title);
  if (!fe) return undefined;
  const plans = fe.engine.core.plans.listing().plans.filter(filter ?? (() => true));
  const where = host.where(fe.folder.index);
  if (plans.length === 0) {
    void vscode.window.showInformationMessage(filter ? `MAM: ${where}no plan to ${title.toLowerCase().replace(/ plan$/, '')}.` : `MAM: ${where}no plan yet.`);
    return undefined;
  }
  if (plans.length === 1 && !filter) return { folderIndex: fe.folder.index, planId: plans[0]!.id };
  const pick = await vscode.window.showQuickPick(
    plans.map((p) => ({ label: planTitle(p), description: planDescription(p, runnerOf(p)), detail: p.id, ref: { folderIndex: fe.folder.index, planId: p.id } })),
    { title, placeHolder: 'Pick a plan (newest first)', matchOnDetail: true },
  );
  return pick?.ref;
}

/** A plan's title for messages and picks: printable and short. */
function planTitle(plan: PlanState): string {
  return printable(plan.title, 60) || plan.id;
}
