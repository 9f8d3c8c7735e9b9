import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import { Commands, Views } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import type { MergeQueueNode } from './mergeQueueTree';
import { folderFor, reportErrors, type FolderRef } from '../shared/picks';

type EntryRef = { folderIndex: number; entryId: string };

/** The Merge Queue's commands: run it, show an entry's log, remove an entry, and queue a passed loop's branch. */
export function registerMergeQueueCommands(host: EngineHost): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(Commands.runMergeQueue, (ref?: FolderRef) => reportErrors('the merge queue', () => runQueue(host, ref))),
    vscode.commands.registerCommand(Commands.showMergeLog, (ref?: EntryRef | MergeQueueNode) =>
      reportErrors('opening the merge log', async () => {
        const fe = ref && host.byFolderIndex(ref.folderIndex);
        if (!fe || !ref || !('entryId' in ref)) return;
        // A real file in an ordinary editor: search, copy, follow it as it grows.
        await vscode.window.showTextDocument(vscode.Uri.file(fe.engine.mergeQueue.logFile(ref.entryId)), { preview: true });
      }),
    ),
    vscode.commands.registerCommand(Commands.removeMergeEntry, (ref?: EntryRef | MergeQueueNode) =>
      reportErrors('removing the entry', async () => {
        const fe = ref && host.byFolderIndex(ref.folderIndex);
        if (!fe || !ref || !('entryId' in ref)) return;
        const entry = fe.engine.mergeQueue.reading().entries.find((e) => e.id === ref.entryId);
        if (!entry) return;
        const answer = await vscode.window.showWarningMessage(`Remove ${printable(entry.branch, 80)} from the merge queue?`, { modal: true, detail: 'The branch and its worktree stay as they are.' }, 'Remove');
        if (answer === 'Remove') await fe.engine.mergeQueue.remove(entry.id);
      }),
    ),
    vscode.commands.registerCommand(Commands.enqueueMerge, (ref?: { folderIndex: number; loopId?: string }) => reportErrors('queueing the branch', () => enqueueLoop(host, ref))),
  ];
}

async function runQueue(host: EngineHost, ref: FolderRef | undefined): Promise<void> {
  const fe = await folderFor(host, ref, 'Run Merge Queue');
  if (!fe) return;
  const result = await vscode.window.withProgress({ location: { viewId: Views.mergeQueue }, title: 'Landing' }, () => fe.engine.mergeQueue.run());
  const waiting = result.entries.filter((e) => e.state === 'waiting');
  const landed = result.landed.map((e) => printable(e.branch, 60));
  const parts = [landed.length > 0 ? `landed ${landed.join(', ')}` : 'nothing landed', ...(waiting.length > 0 ? [`${waiting.length} waiting`] : [])];
  const message = `Merge queue${inFolder(host, fe, ' of')}: ${parts.join('; ')}.`;
  if (waiting.length > 0) void vscode.window.showWarningMessage(message);
  else void vscode.window.showInformationMessage(message);
}

/** Queues the branch of a passed loop's worktree (from the Loops view), asking for a validation command. */
async function enqueueLoop(host: EngineHost, ref: { folderIndex: number; loopId?: string } | undefined): Promise<void> {
  const fe: FolderEngine | undefined = await folderFor(host, ref, 'Add to Merge Queue');
  if (!fe) return;
  const passed = fe.engine.listLoops().filter((l) => l.status === 'passed' && !l.job);
  const loop = ref?.loopId ? fe.engine.loop(ref.loopId) : undefined;
  if (ref?.loopId && !loop) return; // a row of a loop that is gone
  const chosen = loop ?? (await pickPassedLoop(host, fe, passed));
  if (!chosen) return;
  const validate = await vscode.window.showInputBox({
    title: 'Add to Merge Queue',
    prompt: 'A command that must succeed on the rebased branch before it lands (run as a program with arguments, never by a shell). Empty: none.',
    placeHolder: 'npm test',
    ignoreFocusOut: true,
  });
  if (validate === undefined) return;
  const entry = await fe.engine.mergeQueue.enqueue({ what: chosen.checkout, ...(validate.trim() ? { validate } : {}) });
  void vscode.window.showInformationMessage(`Queued ${printable(entry.branch, 80)} into ${printable(entry.into, 60)}${inFolder(host, fe, ' in')}.`);
}

async function pickPassedLoop<T extends { id: string; task: string; checkout: string }>(host: EngineHost, fe: FolderEngine, loops: T[]): Promise<T | undefined> {
  if (loops.length === 0) {
    void vscode.window.showInformationMessage(`No review loop has passed${inFolder(host, fe, ' in') || ' here'} yet: a branch enters the merge queue after its loop passes.`);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(loops.map((l) => ({ label: printable(l.task, 80), description: printable(l.checkout, 120), loop: l })), { title: 'Add to Merge Queue', placeHolder: 'The passed loop whose branch should land' });
  return picked?.loop;
}

/** ` of api` / ` in api` when more than one folder uses MAM: which folder's queue a message is about. */
function inFolder(host: EngineHost, fe: FolderEngine, word: string): string {
  return host.multiRoot ? `${word} ${printable(fe.folder.name, 60)}` : '';
}
