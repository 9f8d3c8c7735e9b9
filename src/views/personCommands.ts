import * as vscode from 'vscode';
import { nameProblem } from '../core/base/ids';
import { Commands } from './commandIds';
import type { EngineHost } from './engineHost';
import { pickFolder, pickJob, reportErrors, type JobRef } from './picks';

/** A person as an assignee (`human:NAME`): delegate to them, and let them start and complete it here. */
export function registerPersonCommands(host: EngineHost, state: vscode.Memento): vscode.Disposable[] {
  const mine = (j: { target?: { kind: string } }) => j.target?.kind === 'human';
  return [
    vscode.commands.registerCommand(Commands.delegateToPerson, () =>
      reportErrors('delegating the task', async () => {
        const fe = await pickFolder(host);
        if (!fe) return;
        const name = await vscode.window.showInputBox({
          title: 'Delegate to a Person (1/2): who?',
          prompt: 'Their name, as MAM shows it (letters, digits, ".", "_", "-").',
          value: state.get<string>('mam.person.last', ''),
          validateInput: (v) => nameProblem(v.trim(), 'the name'),
        });
        if (name === undefined) return;
        const prompt = await vscode.window.showInputBox({ title: `Delegate to a Person (2/2): the task for ${name.trim()}`, prompt: 'It goes into the job’s brief; they start and complete it from the Jobs view.', validateInput: (v) => (v.trim() ? undefined : 'Describe the task.') });
        if (prompt === undefined) return;
        await state.update('mam.person.last', name.trim());
        await fe.engine.start();
        const { job } = await fe.engine.delegate({ session: `human:${name.trim()}`, prompt });
        void vscode.window.showInformationMessage(`MAM: assigned to ${name.trim()}.`, 'Open Brief').then((a) => a && vscode.commands.executeCommand(Commands.openBrief, { folderIndex: fe.folder.index, jobId: job.id }));
      }),
    ),

    vscode.commands.registerCommand(Commands.startPersonJob, (ref?: JobRef) =>
      reportErrors('starting the task', async () => {
        const picked = await pickJob(host, ref, (j) => mine(j) && j.state === 'dispatched', 'Start Task');
        if (!picked) return;
        await picked.fe.engine.actAsPerson(picked.job.id, { event: 'started' });
        if (picked.job.brief) await vscode.window.showTextDocument(vscode.Uri.file(picked.job.brief), { preview: true });
      }),
    ),

    vscode.commands.registerCommand(Commands.completePersonJob, (ref?: JobRef) =>
      reportErrors('completing the task', async () => {
        const picked = await pickJob(host, ref, (j) => mine(j) && j.state === 'started', 'Complete Task');
        if (!picked) return;
        const report = picked.fe.engine.personReportFile(picked.job.id);
        if (report) {
          const choice = await vscode.window.showQuickPick(
            [
              { label: 'Hand in the report', description: vscode.workspace.asRelativePath(report), value: 'hand-in' as const },
              { label: 'Open the report to write it', value: 'open' as const },
            ],
            { title: `Complete Task: your ${picked.job.role} report`, placeHolder: picked.job.role === 'reviewer' ? 'It must end with [VERDICT: PASS] or [VERDICT: NOT PASS] on its last line.' : 'The plan, handed in as a file.' },
          );
          if (!choice) return;
          if (choice.value === 'open') return void (await vscode.window.showTextDocument(vscode.Uri.file(report)));
          await vscode.workspace.textDocuments.find((d) => d.uri.fsPath === report)?.save();
        }
        const detail = await vscode.window.showInputBox({ title: 'Complete Task: a one-line summary', validateInput: (v) => (v.trim() ? undefined : 'Say in a line what you did.') });
        if (detail === undefined) return;
        const job = await picked.fe.engine.actAsPerson(picked.job.id, { event: 'completed', detail: detail.trim() });
        void vscode.window.setStatusBarMessage(`MAM: ${job.id} ${job.state}`, 3000);
      }),
    ),
  ];
}
