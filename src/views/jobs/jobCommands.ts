import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import { isTerminal, type JobRecord } from '../../core/store/jobSchema';
import { Commands } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { windowOrigin, type Notifier } from '../window/notifications';
import { progressMessage, untilEnd } from './followJob';
import { isOpen } from './jobItems';
import { jobLogUri } from './jobLogDocument';
import { runSteps } from '../shared/multiStep';
import { folderFor, pickJob, reportErrors, sessionItems, sessionOf, type FolderRef, type JobRef, type SessionItem, type SessionRef } from '../shared/picks';

/** Jobs: delegate, cancel, show the log, open the brief, verify. */
export function registerJobCommands(host: EngineHost, notifier: Notifier): vscode.Disposable[] {
  // Ends the following of delegated jobs when the window closes (their progress notifications go with it).
  const closing = new vscode.EventEmitter<void>();
  return [
    { dispose: () => (closing.fire(), closing.dispose()) },
    vscode.commands.registerCommand(Commands.delegateJob, (ref?: SessionRef | FolderRef) => reportErrors('delegating the job', () => delegate(host, notifier, closing.event, ref))),

    vscode.commands.registerCommand(Commands.cancelJob, (ref?: JobRef) =>
      reportErrors('cancelling the job', async () => {
        const picked = await pickJob(host, ref, isOpen, 'Cancel Job');
        if (!picked) return;
        const { changed, job } = await picked.fe.engine.core.jobService.cancel(picked.job.id);
        if (!changed) void vscode.window.showInformationMessage(`MAM: ${host.where(picked.fe.folder.index)}${job.id} had already ended (${job.state}).`);
      }),
    ),

    vscode.commands.registerCommand(Commands.showJobLog, (ref?: JobRef) =>
      reportErrors('opening the job log', async () => {
        const picked = await pickJob(host, ref, () => true, 'Show Job Log');
        if (!picked) return;
        const doc = await vscode.workspace.openTextDocument(jobLogUri(picked.fe.folder.index, picked.job.id));
        await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: Boolean(ref) });
      }),
    ),

    vscode.commands.registerCommand(Commands.showPaneText, (ref?: JobRef) =>
      reportErrors("opening the job's pane output", async () => {
        const picked = await pickJob(host, ref, (j) => j.target?.kind === 'local' && !isOpen(j), 'Show Pane Output');
        if (!picked) return;
        const file = picked.fe.engine.core.jobService.paneTextFile(picked.job.id);
        if (!file) {
          void vscode.window.showInformationMessage(`MAM: ${host.where(picked.fe.folder.index)}no pane output was kept for ${picked.job.id}: ${isOpen(picked.job) ? 'it is kept when the job ends' : 'its pane was gone when it ended'}.`);
          return;
        }
        await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true, preserveFocus: Boolean(ref) });
      }),
    ),

    vscode.commands.registerCommand(Commands.openBrief, (ref?: JobRef) =>
      reportErrors('opening the brief', async () => {
        const picked = await pickJob(host, ref, (j) => Boolean(j.brief), 'Open Job Brief');
        if (!picked?.job.brief) return;
        await vscode.window.showTextDocument(vscode.Uri.file(picked.job.brief), { preview: true });
      }),
    ),

    vscode.commands.registerCommand(Commands.verifyJob, (ref?: JobRef) =>
      reportErrors('verifying the job', async () => {
        const picked = await pickJob(host, ref, () => true, 'Verify Job');
        if (!picked) return;
        const command = await vscode.window.showInputBox({
          title: `Verify ${picked.job.id}`,
          prompt: 'A command to check the job’s work, e.g. npm test (split into words, not run by a shell; it gets MAM_JOB_ID and MAM_JOB_REPORT).',
          value: typeof picked.job.verify === 'object' && picked.job.verify ? (picked.job.verify as { command: string[] }).command.join(' ') : 'npm test',
          validateInput: (v) => (v.trim() ? undefined : 'Give a command.'),
        });
        if (command === undefined) return;
        const where = host.where(picked.fe.folder.index);
        const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${where}running ${command}…` }, () => picked.fe.engine.core.jobService.verify(picked.job.id, command));
        const message = `MAM: ${where}${command} ${result.passed ? 'passed' : `failed (exit ${result.exit_code})`} for ${picked.job.id}.`;
        if (result.passed) void vscode.window.showInformationMessage(message);
        else void vscode.window.showErrorMessage(message, { detail: result.output_tail });
      }),
    ),
  ];
}

/** Delegate Job: the session (unless a row named it; its folder first, unless a row named that), where the task comes from, the task. */
async function delegate(host: EngineHost, notifier: Notifier, closing: vscode.Event<void>, ref: SessionRef | FolderRef | undefined): Promise<void> {
  const named = await sessionOf(host, ref);
  if (!named && ref && 'name' in ref) return; // a row of a session that is gone
  const fe = named ? undefined : await folderFor(host, ref, 'Delegate Job');
  if (!named && !fe) return;
  const sessions = fe ? await sessionItems(host, fe, (r) => r.status === 'running', 'Delegate Job') : [];
  if (!named && sessions.length === 0) return;
  const selection = vscode.window.activeTextEditor?.document.getText(vscode.window.activeTextEditor.selection) ?? '';
  const sources = [
    { label: '$(edit) Type the task', value: 'input' as const },
    ...(selection.trim() ? [{ label: '$(selection) Use the editor selection', description: `${selection.length} characters`, value: 'selection' as const }] : []),
    { label: '$(file) Use a file…', description: 'any language, any length', value: 'file' as const },
  ];
  const chosen: { session?: SessionItem; source?: (typeof sources)[number]; prompt?: string } = {};
  const target = () => named ?? chosen.session!;
  const done = await runSteps(named ? `Delegate Job to ${named.row.name}` : 'Delegate Job', [
    {
      when: () => !named,
      run: async (input) => void (chosen.session = await input.pick({ placeholder: 'The session to do it (running sessions)', items: sessions, active: chosen.session, matchOnDescription: true })),
    },
    { run: async (input) => void (chosen.source = await input.pick({ placeholder: `Where the task for ${target().row.name} comes from`, items: sources, active: chosen.source })) },
    {
      when: () => !chosen.source || chosen.source.value === 'input',
      run: async (input) =>
        void (chosen.prompt = await input.input({
          placeholder: `The task for ${target().row.name}`,
          prompt: 'The agent gets a short line pointing at a brief holding this task and the reporting commands.',
          value: chosen.prompt,
          validate: (v) => (v.trim() ? undefined : 'Describe the task.'),
        })),
    },
  ]);
  if (!done) return;
  const picked = target();
  let request: { prompt: string } | { briefFile: string };
  if (chosen.source!.value === 'input') request = { prompt: chosen.prompt! };
  else if (chosen.source!.value === 'selection') request = { prompt: selection };
  else {
    const files = await vscode.window.showOpenDialog({ canSelectMany: false, title: 'The task file', openLabel: 'Delegate', defaultUri: picked.fe.folder.uri });
    if (!files?.[0]) return;
    request = { briefFile: files[0].fsPath };
  }
  // One notification from delivery to the job's end, then one message with the outcome (the Notifier's policy).
  await deliverAndFollow(host, notifier, closing, picked.fe, { session: picked.row.name, ...request });
}

/**
 * Delivers the job as this window's (its origin says so, and so the Notifier leaves its end to
 * this command) under a progress notification that stays until the job ends: its message follows
 * the job, Cancel cancels it; then the Notifier says how it ended. Resolves with the job as soon as
 * it is delivered (or refused): the command returns while the notification goes on following it.
 */
function deliverAndFollow(host: EngineHost, notifier: Notifier, closing: vscode.Event<void>, fe: FolderEngine, request: { session: string } & ({ prompt: string } | { briefFile: string })): Promise<JobRecord> {
  const folderIndex = fe.folder.index;
  const who = printable(request.session);
  const title = `MAM: ${host.where(folderIndex)}${who}`;
  return new Promise<JobRecord>((delivered, refused) => {
    void vscode.window
      .withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, token) => {
        progress.report({ message: 'delivering the job…' });
        let job: JobRecord;
        try {
          await fe.engine.start();
          job = (await fe.engine.core.jobService.submit({ ...request, origin: windowOrigin() })).job;
        } catch (err) {
          refused(err);
          return undefined;
        }
        notifier.following(job, title);
        delivered(job);
        // Ended before submit returned: never delivered (the session was busy, gone, or did not take it).
        if (isTerminal(job.state)) return { end: job, delivered: job.state === 'completed' };
        const cancel = token.onCancellationRequested(() => void host.byFolderIndex(folderIndex)?.engine.core.jobService.cancel(job.id).catch(() => undefined));
        try {
          const end = await untilEnd(host, folderIndex, job, (now) => progress.report({ message: progressMessage(now) }), closing);
          return end && { end, delivered: true };
        } finally {
          cancel.dispose();
        }
      })
      .then((outcome) => outcome && notifier.commandEnded(folderIndex, outcome.end, { delivered: outcome.delivered, who }), refused);
  });
}
