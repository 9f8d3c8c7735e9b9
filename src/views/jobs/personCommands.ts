import * as vscode from 'vscode';
import { nameProblem } from '../../core/base/ids';
import { Commands } from '../host/commandIds';
import { windowOrigin } from '../window/notifications';
import type { EngineHost } from '../host/engineHost';
import { runSteps } from '../shared/multiStep';
import { folderFor, pickJob, reportErrors, type FolderRef, type JobRef } from '../shared/picks';

/** A person as an assignee (`human:NAME`): delegate to them, and let them start and complete it here. */
export function registerPersonCommands(host: EngineHost, state: vscode.Memento): vscode.Disposable[] {
  const mine = (j: { target?: { kind: string } }) => j.target?.kind === 'human';
  return [
    vscode.commands.registerCommand(Commands.delegateToPerson, (ref?: FolderRef) =>
      reportErrors('delegating the task', async () => {
        const fe = await folderFor(host, ref, 'Delegate to a Person');
        if (!fe) return;
        const chosen: { name?: string; prompt?: string } = { name: state.get<string>('mam.person.last', '') || undefined };
        const done = await runSteps('Delegate to a Person', [
          {
            run: async (input) =>
              void (chosen.name = await input.input({ placeholder: 'Who? Their name, e.g. alice', prompt: 'As MAM shows it: letters, digits, ".", "_", "-".', value: chosen.name, validate: (v) => nameProblem(v.trim(), 'the name') })),
          },
          {
            run: async (input) =>
              void (chosen.prompt = await input.input({ placeholder: `The task for ${chosen.name!.trim()}`, prompt: 'It goes into the job’s brief; they start and complete it from the Jobs view.', value: chosen.prompt, validate: (v) => (v.trim() ? undefined : 'Describe the task.') })),
          },
        ]);
        if (!done) return;
        const [name, prompt] = [chosen.name!, chosen.prompt!];
        await state.update('mam.person.last', name.trim());
        await fe.engine.start();
        const { job } = await fe.engine.core.jobService.submit({ session: `human:${name.trim()}`, prompt, origin: windowOrigin() });
        void vscode.window.showInformationMessage(`MAM: ${host.where(fe.folder.index)}assigned to ${name.trim()}.`, 'Open Brief').then((a) => a && vscode.commands.executeCommand(Commands.openBrief, { folderIndex: fe.folder.index, jobId: job.id }));
      }),
    ),

    vscode.commands.registerCommand(Commands.startPersonJob, (ref?: JobRef) =>
      reportErrors('starting the task', async () => {
        const picked = await pickJob(host, ref, (j) => mine(j) && j.state === 'dispatched', 'Start Task');
        if (!picked) return;
        await picked.fe.engine.core.jobService.actAsPerson(picked.job.id, { event: 'started' });
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
        const job = await picked.fe.engine.core.jobService.actAsPerson(picked.job.id, { event: 'completed', detail: detail.trim() });
        void vscode.window.setStatusBarMessage(`MAM: ${host.where(picked.fe.folder.index)}${job.id} ${job.state}`, 3000);
      }),
    ),
  ];
}
