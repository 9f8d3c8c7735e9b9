import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import type { LoopState } from '../../core/loop/loopState';
import { Commands } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { runSteps } from '../shared/multiStep';
import { folderFor, reportErrors, type FolderRef } from '../shared/picks';
import type { ReportPanels } from './reportPanel';
import { openRoundChanges, openSnapshotDiff } from './snapshotDocuments';

/** What Run Review Loop / Review Only accept when called with arguments (scripts, tests). */
export interface LoopArgs {
  folderIndex?: number;
  creator: string;
  reviewers?: string[];
  allReviewers?: boolean;
  planner?: string;
  task: string;
  /** Review this checkout instead of the folder (e.g. an issue worktree). */
  worktree?: string;
}

interface LoopRef {
  folderIndex: number;
  loopId: string;
}

/** The review loop in VS Code: run it, review only, open its report and its changes. */
export function registerLoopCommands(host: EngineHost, reports: ReportPanels): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(Commands.runLoop, (args?: LoopArgs | FolderRef) => reportErrors('the review loop', () => runLoop(host, reports, false, args))),
    vscode.commands.registerCommand(Commands.reviewOnly, (args?: LoopArgs | FolderRef) => reportErrors('the review', () => runLoop(host, reports, true, args))),

    vscode.commands.registerCommand(Commands.openReport, (ref?: LoopRef | FolderRef) =>
      reportErrors('opening the report', async () => {
        const picked = await loopOf(host, ref, 'Open Review Report');
        if (picked) reports.show(picked.folderIndex, picked.loopId);
      }),
    ),

    vscode.commands.registerCommand(Commands.openChanges, (ref?: (LoopRef & { round?: number }) | FolderRef) =>
      reportErrors('opening the changes', async () => {
        const picked = await loopOf(host, ref, 'Open Changes');
        if (picked) await openRoundChanges(host, picked.folderIndex, picked.loopId, roundOf(ref), 'base');
      }),
    ),

    vscode.commands.registerCommand(Commands.openChangesSinceLastRound, (ref?: (LoopRef & { round?: number }) | FolderRef) =>
      reportErrors('opening the changes', async () => {
        const picked = await loopOf(host, ref, 'Open Changes Since Last Round');
        if (picked) await openRoundChanges(host, picked.folderIndex, picked.loopId, roundOf(ref), 'previous');
      }),
    ),

    vscode.commands.registerCommand(Commands.openSnapshotDiff, (ref: LoopRef & { round: number; path: string }) =>
      reportErrors('opening the diff', () => openSnapshotDiff(host, ref.folderIndex, ref.loopId, ref.round, ref.path)),
    ),

    vscode.commands.registerCommand(Commands.resumeLoop, (ref?: LoopRef | FolderRef) => reportErrors('resuming the loop', () => resumeLoop(host, reports, ref))),

    vscode.commands.registerCommand(Commands.cancelLoop, (ref?: LoopRef | FolderRef) =>
      reportErrors('cancelling the loop', async () => {
        const picked = await loopOf(host, ref, 'Cancel Loop', (l) => l.status === 'running');
        const fe = picked && host.byFolderIndex(picked.folderIndex);
        const loop = picked && fe?.engine.core.loops.get(picked.loopId);
        if (!fe || !loop) return;
        if (loop.status !== 'running') return void vscode.window.showInformationMessage(`MAM: ${host.where(fe.folder.index)}the loop “${loopTitle(loop)}” had already ended (${loop.status}).`);
        const yes = 'Cancel Loop';
        const answer = await vscode.window.showWarningMessage(
          `Cancel the review loop “${loopTitle(loop)}”?`,
          { modal: true, detail: 'Its open jobs are cancelled (each agent finishes its current turn), and the loop cannot be resumed.' },
          yes,
        );
        if (answer !== yes) return;
        await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${host.where(fe.folder.index)}cancelling the loop…` }, () => fe.engine.core.loops.cancel(loop.id));
      }),
    ),
  ];
}

/** Follows a loop this window runs: a cancellable progress notification, and the report opened beside. */
async function followLoop(fe: FolderEngine, reports: ReportPanels, title: string, knownId: string | undefined, run: (onProgress: (message: string) => void) => Promise<unknown>): Promise<void> {
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, token) => {
    let loopId = knownId;
    let cancelled = false;
    const cancel = () => void (loopId && fe.engine.core.loops.cancel(loopId).catch((err: unknown) => vscode.window.showErrorMessage(`MAM: cancelling the loop failed: ${(err as Error).message}`)));
    if (loopId) reports.show(fe.folder.index, loopId);
    const sub = fe.engine.core.loops.onDidChange(({ loop }) => {
      if (loopId) return;
      loopId = loop.id;
      reports.show(fe.folder.index, loop.id);
      if (cancelled) cancel();
    });
    // Cancelling cancels the loop (and its open jobs) as Cancel Loop does.
    token.onCancellationRequested(() => {
      cancelled = true;
      cancel();
    });
    try {
      await run((message) => progress.report({ message }));
    } finally {
      sub.dispose();
    }
  });
  // The Notifier announces how it ended, as it does for loops run anywhere else.
}

async function runLoop(host: EngineHost, reports: ReportPanels, reviewOnly: boolean, args: LoopArgs | FolderRef | undefined): Promise<void> {
  const fe = await folderFor(host, args, reviewOnly ? 'Review Only' : 'Run Review Loop');
  if (!fe) return;
  // Called with a loop's arguments (a script, a test), or from the palette or a folder's row: then asked.
  const request = args && 'task' in args ? args : await askLoop(fe, reviewOnly);
  if (!request) return;
  const where = host.where(fe.folder.index);
  await followLoop(fe, reports, reviewOnly ? `MAM: ${where}review` : `MAM: ${where}review loop`, undefined, (onProgress) =>
    fe.engine.core.loops.run({ task: request.task, creator: request.creator, reviewOnly, ...(request.reviewers?.length ? { reviewers: request.reviewers } : {}), ...(request.allReviewers ? { allReviewers: true } : {}), ...(request.planner ? { planner: request.planner } : {}), ...(request.worktree ? { worktree: request.worktree } : {}) }, onProgress),
  );
}

/** Resume Loop: a loop whose run stopped midway (its process died) continues here; a live one is left alone. */
async function resumeLoop(host: EngineHost, reports: ReportPanels, ref: LoopRef | FolderRef | undefined): Promise<void> {
  const picked = await loopOf(host, ref, 'Resume Loop', (l) => l.status === 'running' && !liveRunner(l));
  const fe = picked && host.byFolderIndex(picked.folderIndex);
  const loop = picked && fe?.engine.core.loops.get(picked.loopId);
  if (!fe || !loop) return;
  const where = host.where(fe.folder.index);
  if (loop.status !== 'running') return void vscode.window.showInformationMessage(`MAM: ${where}the loop “${loopTitle(loop)}” has ended (${loop.status}); nothing to resume.`);
  const runner = liveRunner(loop);
  if (runner) return void vscode.window.showInformationMessage(`MAM: ${where}the loop “${loopTitle(loop)}” is running in ${runner}; nothing to resume.`);
  await followLoop(fe, reports, `MAM: ${where}review loop`, loop.id, (onProgress) => fe.engine.core.loops.resume(loop.id, onProgress));
}

/** The loop's title (its task's first line, for loops recorded before titles), printable and short, for messages. */
function loopTitle(loop: LoopState): string {
  return printable(loop.title ?? loop.task.split('\n')[0]!.trim(), 60);
}

/** Who runs a loop: a live process (this window's included) or another host; undefined when its run has stopped midway. */
function liveRunner(loop: LoopState): string | undefined {
  const owner = loop.owner;
  if (loop.status !== 'running' || !owner) return undefined;
  if (owner.host !== os.hostname()) return `a process on ${printable(owner.host, 40)}`;
  if (owner.pid === process.pid) return 'this window';
  try {
    process.kill(owner.pid, 0);
    return `process ${owner.pid}`;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? `process ${owner.pid}` : undefined;
  }
}

/** Creator, reviewers (or all of them), planner (when there is one), and the task, the selection by default. */
async function askLoop(fe: FolderEngine, reviewOnly: boolean): Promise<LoopArgs | undefined> {
  const running = (await fe.engine.core.controlPlane.sessions.list()).filter((s) => s.status === 'running');
  if (running.length === 0) {
    void vscode.window.showWarningMessage('MAM: no running session. Create a creator and reviewers first.', 'Create Session').then((a) => a && vscode.commands.executeCommand(Commands.createSession));
    return undefined;
  }
  const sessionItem = (s: (typeof running)[number]) => ({ label: s.name, description: `${s.agent} · ${s.role}` });
  const creators = running.map(sessionItem);
  const chosen: { creator?: (typeof creators)[number]; reviewers?: Array<vscode.QuickPickItem & { all: boolean }>; planner?: vscode.QuickPickItem; task?: string } = {};
  const others = () => running.filter((s) => s.name !== chosen.creator?.label);
  const planners = () => others().filter((s) => s.role === 'planner');
  const ALL = '$(organization) All reviewers';
  const NO_PLANNER = 'No planner';
  const selection = vscode.window.activeTextEditor?.document.getText(vscode.window.activeTextEditor.selection) ?? '';
  const done = await runSteps(reviewOnly ? 'Review Only' : 'Run Review Loop', [
    {
      run: async (input) => {
        const creator = await input.pick({ placeholder: `The creator: ${reviewOnly ? 'fixes what reviewers find' : 'implements and fixes'}`, items: creators, active: chosen.creator ?? creators.find((c) => c.description.endsWith('· creator')), matchOnDescription: true });
        if (creator !== chosen.creator) chosen.reviewers = undefined;
        chosen.creator = creator;
      },
    },
    {
      run: async (input) => {
        const before = new Set(chosen.reviewers?.map((r) => r.label));
        const items = [
          { label: ALL, description: 'every running reviewer session but the creator', all: true, picked: before.has(ALL) },
          ...others().map((s) => ({ ...sessionItem(s), all: false, picked: chosen.reviewers ? before.has(s.name) : s.role === 'reviewer' })),
        ];
        chosen.reviewers = await input.pickMany({ placeholder: 'The reviewers (none: the creator reviews its own work)', items, matchOnDescription: true });
      },
    },
    {
      when: () => !reviewOnly && planners().length > 0,
      run: async (input) => {
        const items = [{ label: NO_PLANNER }, ...planners().map((s) => ({ label: s.name, description: s.agent }))];
        chosen.planner = await input.pick({ placeholder: 'A planner to write a plan first?', items, active: items.find((i) => i.label === chosen.planner?.label) });
      },
    },
    {
      run: async (input) =>
        void (chosen.task = await input.input({
          placeholder: reviewOnly ? 'What should the reviewers check?' : 'The task, e.g. Add input validation to the signup form',
          prompt: selection.trim() && chosen.task === undefined ? 'From the editor selection; edit it as you like.' : undefined,
          value: chosen.task ?? (selection.trim() ? selection : undefined),
          validate: (v) => (v.trim() ? undefined : 'Describe the task.'),
        })),
    },
  ]);
  if (!done) return undefined;
  const picked = chosen.reviewers!;
  const all = picked.some((p) => p.all);
  const planner = !reviewOnly && chosen.planner && chosen.planner.label !== NO_PLANNER && planners().length > 0 ? chosen.planner.label : undefined;
  return { creator: chosen.creator!.label, task: chosen.task!, ...(all ? { allReviewers: true } : { reviewers: picked.filter((p) => !p.all).map((p) => p.label) }), ...(planner ? { planner } : {}) };
}

/**
 * The loop a row names; else the folder (a folder row's, or picked) and then one of its loops
 * that `filter` keeps (a command that acts on any loop takes the only one without asking).
 */
async function loopOf(host: EngineHost, ref: LoopRef | FolderRef | undefined, title: string, filter?: (loop: LoopState) => boolean): Promise<LoopRef | undefined> {
  if (ref && 'loopId' in ref) return ref;
  const fe = await folderFor(host, ref, title);
  if (!fe) return undefined;
  const loops = fe.engine.core.loops.list().filter(filter ?? (() => true));
  const where = host.where(fe.folder.index);
  if (loops.length === 0) {
    void vscode.window.showInformationMessage(filter ? `MAM: ${where}no loop to ${title.toLowerCase()}.` : `MAM: ${where}no review loop yet.`);
    return undefined;
  }
  if (loops.length === 1 && !filter) return { folderIndex: fe.folder.index, loopId: loops[0]!.id };
  const pick = await vscode.window.showQuickPick(
    loops.map((l) => ({ label: loopTitle(l), description: `${l.status} · ${l.rounds.length} round${l.rounds.length === 1 ? '' : 's'}`, detail: l.id, ref: { folderIndex: fe.folder.index, loopId: l.id } })),
    { title, placeHolder: 'Pick a review loop (newest first)', matchOnDetail: true },
  );
  return pick?.ref;
}

/** The round a row (a round or its changed files) names; a loop's row or none: the latest. */
function roundOf(ref: unknown): number | undefined {
  const round = ref && typeof ref === 'object' ? (ref as { round?: unknown }).round : undefined;
  return typeof round === 'number' ? round : undefined;
}

/** MAM: Run Demo — the demo in this workspace, while the trees, the status bar and the report fill in. */
export function registerDemoCommand(host: EngineHost, reports: ReportPanels, extensionUri: vscode.Uri): vscode.Disposable {
  return vscode.commands.registerCommand(Commands.runDemo, (ref?: FolderRef) =>
    reportErrors('the demo', async () => {
      const fe = await folderFor(host, ref, 'Run Demo');
      if (!fe) return;
      const repoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-demo-repo-'));
      await vscode.commands.executeCommand('mam.sessions.focus');
      const summary = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'MAM demo', cancellable: true }, async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        let shown = false;
        const sub = fe.engine.core.loops.onDidChange(({ loop }) => {
          if (!shown) {
            shown = true;
            reports.show(fe.folder.index, loop.id);
          }
        });
        try {
          return await fe.engine.runDemo(repoDir, vscode.Uri.joinPath(extensionUri, 'dist').fsPath, (line) => progress.report({ message: line.replace(/^\s*[\d.]+s\s+\S+\s+/, '') }), abort.signal);
        } finally {
          sub.dispose();
        }
      });
      const attach = 'Attach to the Creator';
      void vscode.window
        .showInformationMessage(
          `MAM demo ${summary.passed ? 'passed' : 'ended'}: the job ${summary.job.state}, the loop ${summary.loop.status} in ${Math.round(summary.durationMs / 1000)} s. The demo sessions keep running in ${summary.repoDir}; stop them from the Sessions view.`,
          'Open Report',
          attach,
        )
        .then((answer) => {
          if (answer === 'Open Report') reports.show(fe.folder.index, summary.loop.id);
          const creator = summary.sessions.find((s) => s.role === 'creator');
          if (answer === attach && creator) void vscode.commands.executeCommand(Commands.attachSession, { folderIndex: fe.folder.index, name: creator.name });
        });
    }),
  );
}
