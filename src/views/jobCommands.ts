import * as vscode from 'vscode';
import { Commands } from './commandIds';
import type { EngineHost } from './engineHost';
import { isOpen } from './jobItems';
import { jobLogUri } from './jobLogDocument';
import { pickJob, pickSession, reportErrors, type JobRef, type SessionRef } from './picks';

/** Jobs: delegate, cancel, show the log, open the brief, verify. */
export function registerJobCommands(host: EngineHost): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(Commands.delegateJob, (ref?: SessionRef) => reportErrors('delegating the job', () => delegate(host, ref))),

    vscode.commands.registerCommand(Commands.cancelJob, (ref?: JobRef) =>
      reportErrors('cancelling the job', async () => {
        const picked = await pickJob(host, ref, isOpen, 'Cancel Job');
        if (!picked) return;
        const { changed, job } = await picked.fe.engine.cancelJob(picked.job.id);
        if (!changed) void vscode.window.showInformationMessage(`MAM: ${job.id} had already ended (${job.state}).`);
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
        const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: running ${command}…` }, () => picked.fe.engine.verifyJob(picked.job.id, command));
        const message = `MAM: ${command} ${result.passed ? 'passed' : `failed (exit ${result.exit_code})`} for ${picked.job.id}.`;
        if (result.passed) void vscode.window.showInformationMessage(message);
        else void vscode.window.showErrorMessage(message, { detail: result.output_tail });
      }),
    ),
  ];
}

/** Delegate Job: pick a session, take the task from an input box, the selection, or a file. */
async function delegate(host: EngineHost, ref: SessionRef | undefined): Promise<void> {
  const picked = await pickSession(host, ref, (r) => r.status === 'running', 'Delegate Job');
  if (!picked) return;
  const selection = vscode.window.activeTextEditor?.document.getText(vscode.window.activeTextEditor.selection) ?? '';
  const source = await vscode.window.showQuickPick(
    [
      { label: '$(edit) Type the task', value: 'input' as const },
      ...(selection.trim() ? [{ label: '$(selection) Use the editor selection', description: `${selection.length} characters`, value: 'selection' as const }] : []),
      { label: '$(file) Use a file…', description: 'any language, any length', value: 'file' as const },
    ],
    { title: `Delegate Job to ${picked.row.name}: the task` },
  );
  if (!source) return;
  let request: { prompt: string } | { briefFile: string };
  if (source.value === 'input') {
    const prompt = await vscode.window.showInputBox({ title: `Task for ${picked.row.name}`, prompt: 'The agent gets a short line pointing at a brief holding this task and the reporting commands.', validateInput: (v) => (v.trim() ? undefined : 'Describe the task.') });
    if (prompt === undefined) return;
    request = { prompt };
  } else if (source.value === 'selection') {
    request = { prompt: selection };
  } else {
    const files = await vscode.window.showOpenDialog({ canSelectMany: false, title: 'The task file', defaultUri: picked.fe.folder.uri });
    if (!files?.[0]) return;
    request = { briefFile: files[0].fsPath };
  }
  const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: delivering the job to ${picked.row.name}…` }, async () => {
    await picked.fe.engine.start();
    return picked.fe.engine.delegate({ session: picked.row.name, ...request });
  });
  const job = result.job;
  const folderIndex = picked.fe.folder.index;
  if (isOpen(job)) {
    void vscode.window.showInformationMessage(`MAM: job delivered to ${picked.row.name}.`, 'Show Log').then((a) => a && vscode.commands.executeCommand(Commands.showJobLog, { folderIndex, jobId: job.id }));
  } else {
    void vscode.window.showWarningMessage(`MAM: the job was not delivered: ${job.state} (${job.reason ?? '-'}).`, 'Show Log').then((a) => a && vscode.commands.executeCommand(Commands.showJobLog, { folderIndex, jobId: job.id }));
  }
}
