import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import { isTerminal, needsPermission, type JobOrigin, type JobRecord } from '../../core/store/jobSchema';
import { jobTitle, loopTitle } from '../../core/jobs/title';
import type { LoopState } from '../../core/loop/loopState';
import { Commands, Views } from '../host/commandIds';
import type { EngineHost } from '../host/engineHost';
import { DisposableBase } from '../../core/base/disposable';
import { sharedServers } from '../sessions/sharedServers';
import { notifierTellsEnd } from './noticePolicy';

export type NoticeKind = 'progress' | 'permission' | 'failed' | 'completed' | 'loop' | 'lost' | 'conflict' | 'shared';

/** The origin this window's commands give the jobs they submit: a person's command, in this window. */
export function windowOrigin(): JobOrigin & { by: string } {
  return { kind: 'person', by: `vscode:${vscode.env.sessionId}` };
}

/**
 * The notification policy: a toast only for what needs the user, and for the end of what the user
 * started. It decides what to tell from what it hears and from where each job came from (its
 * `origin`); it makes no job and runs no work.
 *
 * - Always, from any job wherever it runs: an agent asking for permission (Attach, Show Log);
 *   sessions whose terminal server went away (Resume All).
 * - A job this window's Delegate Job gave a session (origin: a person, this window): that command
 *   follows it with one progress notification from delivery to its end, then asks here for one
 *   message with the outcome (`commandEnded`) — never "delivered" and then "completed".
 * - A review loop that ended, wherever it ran (this window, `mam loop`, an agent): one message.
 * - Two sessions' checkouts that newly would conflict: one warning per conflict (Show Sessions);
 *   one that lasts is not told again, one that ends and comes back is.
 * - Any other job (the CLI's, an agent's, another window's, a remote submitter's, a task assigned
 *   to a person) that failed or timed out; not a job of a review loop, the merge queue, an
 *   onboarding or a parent job: their loop, queue, caller or parent tells how they went. Records
 *   written before jobs kept their origin: not one a loop's steps or a parent names. Completions of
 *   jobs the user did not start here, and cancellations, are not news.
 * - `mam.notifications.completions` off: no message for a delegated job that completed or a loop
 *   that passed; failures, timeouts and permission requests still show.
 *
 * Only changes seen live here are announced, never the backlog a window finds when it opens.
 */
export class Notifier extends DisposableBase {
  /** What was shown, newest last (the extension-host tests read it). */
  readonly shown: Array<{ kind: NoticeKind; jobId?: string; loopId?: string; message: string }> = [];
  /** When this window started listening: a loop that ended before is backlog, not news. */
  private readonly since = Date.now();
  /** Loops announced, by folder and ID: each once, however many times its file changes after. */
  private readonly announced = new Set<string>();
  /** Permission requests told, by folder, job and the event's seq: each once, whichever way it was heard. */
  private readonly asked = new Set<string>();
  /** Multiplexer servers told to be shared by several folders, each sharing once per window. */
  private readonly sharing = new Set<string>();
  /** This window, as the origin of the jobs its commands submit. */
  private readonly windowBy = windowOrigin().by;

  constructor(private readonly host: EngineHost) {
    super();
    // After settings changed (mam.tmuxServer) the engines are rebuilt: look again.
    this._register(host.onDidReset(() => this.tellSharedServers()));
    this._register(host.forEachFolder(({ folder, engine, jobs }) => {
      const { core } = engine;
      return [
        core.loops.onDidChange(({ loop }) => this.loopChanged(folder.index, loop)),
        core.monitor.onDidTerminateSessions((names) => this.tellLost(folder.index, names)),
        core.overlaps.onNewConflict((pair) => {
          const who = (s: { sessions: string[] }): string => s.sessions.map((n) => printable(n, 60)).join(', ');
          const files = pair.files.filter((f) => f.conflict);
          const where = files.length === 1 ? printable(files[0]!.path, 120) : `${files.length || pair.files.length} files`;
          const message = `MAM: ${host.where(folder.index)}${who(pair.a)} and ${who(pair.b)} would conflict in ${where}.`;
          this.shown.push({ kind: 'conflict', message });
          void vscode.window.showWarningMessage(message, 'Show Sessions').then((a) => a && vscode.commands.executeCommand(`${Views.sessions}.focus`));
        }),
        // A permission request is heard here when this window applies the event, or from the job's file
        // when another process (the CLI that waits on the job, the job warden) applied it: told once either way.
        core.jobService.onDidApplyEvent(({ job, payload, late }) => {
          if (!late && payload.event === 'permission_required') this.tellPermission(folder.index, job, payload.seq, payload.detail);
        }),
        jobs.onDidChangeJob(({ job, previous }) => {
          if (previous !== null && needsPermission(job)) this.tellPermission(folder.index, job, job.seq, job.detail);
          // A job first seen already ended (previous null) is backlog found on disk, not news; whose end is told here: noticePolicy.ts.
          if (previous === null || isTerminal(previous)) return;
          if (!isTerminal(job.state) || job.state === 'completed' || job.state === 'cancelled') return;
          if (notifierTellsEnd(job, this.windowBy, () => this.isPartOfAnother(folder.index, job))) this.tellEnd(folder.index, job);
        }),
      ];
    }));
  }

  /** A command of this window follows `job` under its own progress notification titled `title` (recorded, not shown: the command shows it). */
  following(job: JobRecord, title: string): void {
    this.shown.push({ kind: 'progress', jobId: job.id, message: title });
  }

  /**
   * The end of a job a command of this window followed: one message with the outcome, or, when
   * it ended before it was delivered (the session was busy, gone, or did not take it), that it was not.
   */
  commandEnded(folderIndex: number, job: JobRecord, options: { delivered: boolean; who: string }): void {
    if (options.delivered) this.tellEnd(folderIndex, job);
    else this.tellNotDelivered(folderIndex, job, options.who);
  }

  /**
   * Folders of this window that would share one herdr server (a window-wide mam.herdrSession, or
   * MAM_HERDR_SESSION): one warning per sharing, since each folder's monitor would take the other
   * folders' agents for its own (sharedServers.ts; a shared tmux server is fine).
   */
  tellSharedServers(): void {
    for (const shared of sharedServers(this.host.mamFolders)) {
      const names = shared.folders.map((fe) => printable(fe.folder.name, 60));
      const key = `${shared.mux}/${shared.server}/${names.join('/')}`;
      if (this.sharing.has(key)) continue;
      this.sharing.add(key);
      const both = names.length === 2 ? `${names[0]} and ${names[1]}` : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
      const setting = 'mam.herdrSession';
      const message = `MAM: ${both} share the herdr server ${printable(shared.server, 64)} (${setting} or MAM_HERDR_SESSION): each folder's monitor would take the other's agents for its own. Leave it empty so that each folder gets its own server.`;
      this.shown.push({ kind: 'shared', message });
      void vscode.window.showWarningMessage(message, 'Open Settings').then((a) => a && vscode.commands.executeCommand('workbench.action.openSettings', setting));
    }
  }

  /** A job that ended, told once: failures and timeouts always, completions unless turned off; cancellations never. */
  private tellEnd(folderIndex: number, job: JobRecord): void {
    if (job.state === 'cancelled') return;
    const showLog = (a: string | undefined) => a && vscode.commands.executeCommand(Commands.showJobLog, { folderIndex, jobId: job.id });
    const what = job.title ? `“${printable(jobTitle(job), 120)}”` : job.id;
    const session = printable(job.session);
    if (job.state === 'completed') {
      if (!completionsWanted()) return;
      const message = `MAM: ${this.host.where(folderIndex)}${session} completed ${what}${job.detail ? `: ${printable(job.detail, 300)}` : ''}`;
      this.shown.push({ kind: 'completed', jobId: job.id, message });
      void vscode.window.showInformationMessage(message, 'Show Log').then(showLog);
      return;
    }
    const message = `MAM: ${this.host.where(folderIndex)}${what} on ${session} ${job.state === 'timeout' ? 'timed out' : 'failed'} (${printable(job.reason ?? job.state)})`;
    this.shown.push({ kind: 'failed', jobId: job.id, message });
    void vscode.window.showErrorMessage(message, 'Show Log').then(showLog);
  }

  private tellPermission(folderIndex: number, job: JobRecord, seq: number, detail: string | null): void {
    const key = `${folderIndex}/${job.id}/${seq}`;
    if (this.asked.has(key)) return;
    this.asked.add(key);
    const message = `MAM: ${this.host.where(folderIndex)}${printable(job.target?.name ?? job.session)} needs permission${detail ? `: ${printable(detail, 300)}` : ''}`;
    this.shown.push({ kind: 'permission', jobId: job.id, message });
    void vscode.window.showWarningMessage(message, 'Attach', 'Show Log').then((a) => {
      if (a === 'Attach' && job.target?.kind === 'local') void vscode.commands.executeCommand(Commands.attachSession, { folderIndex, name: job.target.name });
      if (a === 'Show Log') void vscode.commands.executeCommand(Commands.showJobLog, { folderIndex, jobId: job.id });
    });
  }

  private tellNotDelivered(folderIndex: number, job: JobRecord, who: string): void {
    const message = `MAM: ${this.host.where(folderIndex)}the job was not delivered to ${who}: ${job.state} (${printable(job.reason ?? '-')}).`;
    this.shown.push({ kind: 'failed', jobId: job.id, message });
    void vscode.window.showWarningMessage(message, 'Show Log').then((a) => a && vscode.commands.executeCommand(Commands.showJobLog, { folderIndex, jobId: job.id }));
  }

  /** A record from before jobs kept their origin: a review loop's job or a parent job's child (their loop's or parent's end tells how they went). */
  private isPartOfAnother(folderIndex: number, job: JobRecord): boolean {
    if (job.parent_job) return true;
    // The loop writes each job's ID into its steps before submitting it.
    const engine = this.host.byFolderIndex(folderIndex)?.engine;
    return engine?.core.loops.list().some((loop) => loop.steps.some((s) => s.job_id === job.id)) ?? false;
  }

  private tellLost(folderIndex: number, names: string[]): void {
    const message = `MAM: ${this.host.where(folderIndex)}${names.length === 1 ? `${names[0]} has` : `${names.length} sessions (${names.join(', ')}) have`} stopped: ${names.length === 1 ? 'its' : 'their'} terminal server went away.`;
    this.shown.push({ kind: 'lost', message });
    void vscode.window.showWarningMessage(message, 'Resume All').then((a) => a && vscode.commands.executeCommand(Commands.resumeAllSessions, { folderIndex }));
  }

  private loopChanged(folderIndex: number, loop: LoopState): void {
    const loopId = loop.id;
    const key = `${folderIndex}/${loopId}`;
    // Ended while this window was open (its last save is its end), and not cancelled by the user.
    if (loop.status === 'running' || loop.status === 'cancelled' || Date.parse(loop.updated_at) < this.since || this.announced.has(key)) return;
    this.announced.add(key);
    if (loop.status === 'passed' && !completionsWanted()) return;
    const task = `“${printable(loopTitle(loop), 120)}”`;
    const where = this.host.where(folderIndex);
    const message =
      loop.status === 'passed'
        ? `MAM: ${where}every reviewer passed ${task} in round ${loop.rounds.at(-1)?.n}.`
        : `MAM: ${where}the review loop of ${task} ended ${loop.status}${loop.reason ? `: ${printable(loop.reason)}` : ''}.`;
    this.shown.push({ kind: 'loop', loopId, message });
    const open = (a: string | undefined) => a && vscode.commands.executeCommand(Commands.openReport, { folderIndex, loopId });
    if (loop.status === 'passed') void vscode.window.showInformationMessage(message, 'Open Report').then(open);
    else void vscode.window.showWarningMessage(message, 'Open Report').then(open);
  }
}

function completionsWanted(): boolean {
  return vscode.workspace.getConfiguration('mam').get<boolean>('notifications.completions', true);
}
