import { printable } from '../core/base/ids';
import * as vscode from 'vscode';
import { isTerminal } from '../core/jobs/jobSchema';
import { Commands } from './commandIds';
import type { EngineHost } from './engineHost';
import { DisposableBase } from './lifecycle';

/**
 * Tells the user what needs them: an agent asking for permission (with Attach), a job that failed
 * or timed out (with Show Log), a review loop that ended (with Open Report), wherever it ran — this
 * window, `mam loop` in a terminal, an orchestrating agent — and, unless turned off, completions.
 * Only changes seen live here are announced, never the backlog a window finds when it opens.
 */
export class Notifier extends DisposableBase {
  /** What was shown, newest last (the extension-host tests read it). */
  readonly shown: Array<{ kind: 'permission' | 'failed' | 'completed' | 'loop' | 'lost'; jobId?: string; loopId?: string; message: string }> = [];
  /** When this window started listening: a loop that ended before is backlog, not news. */
  private readonly since = Date.now();
  /** Loops announced, by folder and ID: each once, however many times its file changes after. */
  private readonly announced = new Set<string>();

  constructor(host: EngineHost) {
    super();
    this._register(host.onDidChangeLoop(({ folder, loopId }) => {
      const loop = host.byFolderIndex(folder.index)?.engine.loop(loopId);
      const key = `${folder.index}/${loopId}`;
      // Ended while this window was open (its last save is its end), and not cancelled by the user.
      if (!loop || loop.status === 'running' || loop.status === 'cancelled' || Date.parse(loop.updated_at) < this.since || this.announced.has(key)) return;
      this.announced.add(key);
      const task = `“${loop.task.split('\n')[0]}”`;
      const message =
        loop.status === 'passed'
          ? `MAM: every reviewer passed ${task} in round ${loop.rounds.at(-1)?.n}.`
          : `MAM: the review loop of ${task} ended ${loop.status}${loop.reason ? `: ${loop.reason}` : ''}.`;
      this.shown.push({ kind: 'loop', loopId, message });
      const open = (a: string | undefined) => a && vscode.commands.executeCommand(Commands.openReport, { folderIndex: folder.index, loopId });
      if (loop.status === 'passed') void vscode.window.showInformationMessage(message, 'Open Report').then(open);
      else void vscode.window.showWarningMessage(message, 'Open Report').then(open);
    }));
    this._register(host.onDidLoseSessions(({ folder, names }) => {
      const message = `MAM: ${names.length === 1 ? `${names[0]} has` : `${names.length} sessions (${names.join(', ')}) have`} stopped: ${names.length === 1 ? 'its' : 'their'} terminal server went away.`;
      this.shown.push({ kind: 'lost', message });
      void vscode.window.showWarningMessage(message, 'Resume All').then((a) => a && vscode.commands.executeCommand(Commands.resumeAllSessions, { folderIndex: folder.index }));
    }));
    this._register(host.onDidApplyEvent(({ folder, job, payload, late }) => {
      if (late || payload.event !== 'permission_required') return;
      const message = `MAM: ${job.target?.name ?? job.session} needs permission${payload.detail ? `: ${printable(payload.detail, 300)}` : ''}`;
      this.shown.push({ kind: 'permission', jobId: job.id, message });
      void vscode.window.showWarningMessage(message, 'Attach', 'Show Log').then((a) => {
        if (a === 'Attach' && job.target?.kind === 'local') void vscode.commands.executeCommand(Commands.attachSession, { folderIndex: folder.index, name: job.target.name });
        if (a === 'Show Log') void vscode.commands.executeCommand(Commands.showJobLog, { folderIndex: folder.index, jobId: job.id });
      });
    }));
    this._register(host.onDidChangeJob(({ folder, change }) => {
      const { job, previous } = change;
      if (previous === null || isTerminal(previous) || !isTerminal(job.state) || job.state === 'cancelled') return;
      const showLog = (a: string | undefined) => a && vscode.commands.executeCommand(Commands.showJobLog, { folderIndex: folder.index, jobId: job.id });
      const what = job.title ? `“${printable(job.title, 120)}”` : job.id;
      if (job.state === 'completed') {
        if (!vscode.workspace.getConfiguration('mam').get<boolean>('notifications.completions', true)) return;
        const message = `MAM: ${job.session} completed ${what}${job.detail ? `: ${printable(job.detail, 300)}` : ''}`;
        this.shown.push({ kind: 'completed', jobId: job.id, message });
        void vscode.window.showInformationMessage(message, 'Show Log').then(showLog);
        return;
      }
      const message = `MAM: ${what} on ${job.session} ${job.state === 'timeout' ? 'timed out' : 'failed'} (${job.reason ?? job.state})`;
      this.shown.push({ kind: 'failed', jobId: job.id, message });
      void vscode.window.showErrorMessage(message, 'Show Log').then(showLog);
    }));
  }
}
