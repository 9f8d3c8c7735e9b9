import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Commands } from './commandIds';
import type { EngineHost, FolderEngine } from './engineHost';
import { pickFolder, reportErrors } from './picks';
import type { ReportPanels } from './reportPanel';
import { openSnapshotDiff } from './snapshotDocuments';

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
    vscode.commands.registerCommand(Commands.runLoop, (args?: LoopArgs) => reportErrors('the review loop', () => runLoop(host, reports, false, args))),
    vscode.commands.registerCommand(Commands.reviewOnly, (args?: LoopArgs) => reportErrors('the review', () => runLoop(host, reports, true, args))),

    vscode.commands.registerCommand(Commands.openReport, (ref?: LoopRef) =>
      reportErrors('opening the report', async () => {
        const picked = ref ?? (await pickLoop(host));
        if (picked) reports.show(picked.folderIndex, picked.loopId);
      }),
    ),

    vscode.commands.registerCommand(Commands.openChanges, (ref?: LoopRef & { round?: number }) =>
      reportErrors('opening the changes', async () => {
        const picked = ref ?? (await pickLoop(host));
        if (!picked) return;
        const fe = host.byFolderIndex(picked.folderIndex);
        const loop = fe?.engine.loop(picked.loopId);
        const round = ref?.round !== undefined ? loop?.rounds.find((r) => r.n === ref.round) : loop?.rounds.at(-1);
        if (!fe || !loop || !round) throw new Error('that loop has no review round yet');
        const files = await fe.engine.changedFiles(round.identity, loop.checkout);
        if (files.length === 0) return void vscode.window.showInformationMessage(`MAM: round ${round.n} changed no file.`);
        // One diff tab per changed file (bounded; the Loops view lists them all).
        for (const file of files.slice(0, 12)) await openSnapshotDiff(host, picked.folderIndex, picked.loopId, round.n, file.path);
        if (files.length > 12) void vscode.window.showInformationMessage(`MAM: opened 12 of ${files.length} changed files; the Loops view lists the rest.`);
      }),
    ),

    vscode.commands.registerCommand(Commands.openSnapshotDiff, (ref: LoopRef & { round: number; path: string }) =>
      reportErrors('opening the diff', () => openSnapshotDiff(host, ref.folderIndex, ref.loopId, ref.round, ref.path)),
    ),
  ];
}

async function runLoop(host: EngineHost, reports: ReportPanels, reviewOnly: boolean, args: LoopArgs | undefined): Promise<void> {
  const fe = args?.folderIndex !== undefined ? host.byFolderIndex(args.folderIndex) : await pickFolder(host);
  if (!fe) return;
  const request = args ?? (await askLoop(fe, reviewOnly));
  if (!request) return;
  const title = reviewOnly ? 'MAM: review' : 'MAM: review loop';
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, token) => {
    let loopId: string | undefined;
    const sub = fe.engine.onDidChangeLoop(({ loop }) => {
      if (!loopId) {
        loopId = loop.id;
        reports.show(fe.folder.index, loop.id);
      }
    });
    // Cancelling cancels the loop's open jobs; the loop then ends on the step that was waiting.
    token.onCancellationRequested(() => {
      const loop = loopId ? fe.engine.loop(loopId) : undefined;
      for (const step of loop?.steps ?? []) {
        const job = fe.engine.job(step.job_id);
        if (job && ['registered', 'dispatched', 'started'].includes(job.state)) void fe.engine.cancelJob(job.id);
      }
    });
    try {
      return await fe.engine.runLoop({ task: request.task, creator: request.creator, reviewOnly, ...(request.reviewers?.length ? { reviewers: request.reviewers } : {}), ...(request.allReviewers ? { allReviewers: true } : {}), ...(request.planner ? { planner: request.planner } : {}), ...(request.worktree ? { worktree: request.worktree } : {}) }, (message) => progress.report({ message }));
    } finally {
      sub.dispose();
    }
  });
  // The Notifier announces how it ended, as it does for loops run anywhere else.
}

/** Creator, reviewers (or all of them), planner, and the task from an input box or the selection. */
async function askLoop(fe: FolderEngine, reviewOnly: boolean): Promise<LoopArgs | undefined> {
  const running = (await fe.engine.listSessions()).filter((s) => s.status === 'running');
  if (running.length === 0) {
    void vscode.window.showWarningMessage('MAM: no running session. Create a creator and reviewers first.', 'Create Session').then((a) => a && vscode.commands.executeCommand(Commands.createSession));
    return undefined;
  }
  const creator = await vscode.window.showQuickPick(running.map((s) => ({ label: s.name, description: `${s.agent} · ${s.role}` })), { title: `${reviewOnly ? 'Review Only' : 'Run Review Loop'}: the creator (${reviewOnly ? 'fixes what reviewers find' : 'implements and fixes'})` });
  if (!creator) return undefined;
  const candidates = running.filter((s) => s.name !== creator.label);
  const ALL = '$(organization) All reviewers';
  const picked = await vscode.window.showQuickPick(
    [{ label: ALL, description: 'every running reviewer session but the creator', all: true }, ...candidates.map((s) => ({ label: s.name, description: `${s.agent} · ${s.role}`, picked: s.role === 'reviewer', all: false }))],
    { title: 'Reviewers (none: the creator reviews its own work)', canPickMany: true },
  );
  if (!picked) return undefined;
  let planner: string | undefined;
  if (!reviewOnly && candidates.some((s) => s.role === 'planner')) {
    const p = await vscode.window.showQuickPick([{ label: 'No planner' }, ...candidates.filter((s) => s.role === 'planner').map((s) => ({ label: s.name, description: s.agent }))], { title: 'A planner to write a plan first?' });
    if (!p) return undefined;
    if (p.label !== 'No planner') planner = p.label;
  }
  const selection = vscode.window.activeTextEditor?.document.getText(vscode.window.activeTextEditor.selection) ?? '';
  const task = await vscode.window.showInputBox({ title: reviewOnly ? 'What should the reviewers check?' : 'The task', value: selection.trim() ? selection : undefined, validateInput: (v) => (v.trim() ? undefined : 'Describe the task.') });
  if (!task) return undefined;
  const all = picked.some((p) => p.all);
  return { creator: creator.label, task, ...(all ? { allReviewers: true } : { reviewers: picked.filter((p) => !p.all).map((p) => p.label) }), ...(planner ? { planner } : {}) };
}

async function pickLoop(host: EngineHost): Promise<LoopRef | undefined> {
  const engines = await host.ready();
  const loops = engines.flatMap((fe) => fe.engine.listLoops().map((l) => ({ fe, l })));
  if (loops.length === 0) {
    void vscode.window.showInformationMessage('MAM: no review loop yet.');
    return undefined;
  }
  if (loops.length === 1) return { folderIndex: loops[0]!.fe.folder.index, loopId: loops[0]!.l.id };
  const pick = await vscode.window.showQuickPick(loops.map(({ fe, l }) => ({ label: l.task.split('\n')[0]!, description: `${l.status} · ${l.rounds.length} rounds`, detail: l.id, ref: { folderIndex: fe.folder.index, loopId: l.id } })), { title: 'Which loop?' });
  return pick?.ref;
}

/** MAM: Run Demo — the demo in this workspace, while the trees, the status bar and the report fill in. */
export function registerDemoCommand(host: EngineHost, reports: ReportPanels, extensionUri: vscode.Uri): vscode.Disposable {
  return vscode.commands.registerCommand(Commands.runDemo, () =>
    reportErrors('the demo', async () => {
      const fe = await pickFolder(host);
      if (!fe) return;
      const repoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-demo-repo-'));
      await vscode.commands.executeCommand('mam.sessions.focus');
      const summary = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'MAM demo', cancellable: true }, async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        let shown = false;
        const sub = fe.engine.onDidChangeLoop(({ loop }) => {
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
