import * as vscode from 'vscode';
import { newJobId, printable } from '../../core/base/ids';
import { isTerminal, needsPermission, type JobRecord } from '../../core/store/jobSchema';
import { jobTitle, loopTitle } from '../../core/jobs/title';
import { Commands, Views } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { DisposableBase } from '../../core/base/disposable';
import { sharedServers } from '../sessions/sharedServers';

export type NoticeKind = 'progress' | 'permission' | 'failed' | 'completed' | 'loop' | 'lost' | 'conflict' | 'shared';

/** What Delegate Job hands over: the engine's request without the job ID (the Notifier picks it). */
export type DelegateRequest = Omit<Parameters<FolderEngine['engine']['delegate']>[0], 'jobId'>;

/**
 * The notification policy: a toast only for what needs the user, and for the end of what the user
 * started.
 *
 * - Always, from any job wherever it runs: an agent asking for permission (Attach, Show Log);
 *   sessions whose terminal server went away (Resume All).
 * - A job delegated from this window (Delegate Job): one progress notification from delivery to its
 *   end (Cancel cancels the job), then one message with the outcome — never "delivered" and then
 *   "completed".
 * - A review loop that ended, wherever it ran (this window, `mam loop`, an agent): one message.
 * - Two sessions' checkouts that newly would conflict: one warning per conflict (Show Sessions);
 *   one that lasts is not told again, one that ends and comes back is.
 * - Any other job (the CLI's, an agent's) that failed or timed out, unless it is part of a review
 *   loop or of a parent job: their end tells it. Completions of jobs the user did not start here,
 *   and cancellations, are not news.
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
  /** Jobs delegated from this window and still followed, by folder and ID: their own notification tells their end. */
  private readonly delegated = new Set<string>();
  /** Jobs whose end the command that started them tells (jobToldByCaller), by folder and ID: one per onboarding, never forgotten. */
  private readonly toldElsewhere = new Set<string>();
  /** Permission requests told, by folder, job and the event's seq: each once, whichever way it was heard. */
  private readonly asked = new Set<string>();
  /** Multiplexer servers told to be shared by several folders, each sharing once per window. */
  private readonly sharing = new Set<string>();
  /** Ends the waits of followed jobs when the window closes (their progress notifications go with it). */
  private readonly stopFollowing = new Set<() => void>();

  constructor(private readonly host: EngineHost) {
    super();
    this._register({ dispose: () => [...this.stopFollowing].forEach((stop) => stop()) });
    this._register(host.onDidChangeLoop(({ folder, loopId }) => this.loopChanged(folder.index, loopId)));
    // After settings changed (mam.tmuxServer) the engines are rebuilt: look again.
    this._register(host.onDidReset(() => this.tellSharedServers()));
    this._register(host.onDidLoseSessions(({ folder, names }) => {
      const message = `MAM: ${host.where(folder.index)}${names.length === 1 ? `${names[0]} has` : `${names.length} sessions (${names.join(', ')}) have`} stopped: ${names.length === 1 ? 'its' : 'their'} terminal server went away.`;
      this.shown.push({ kind: 'lost', message });
      void vscode.window.showWarningMessage(message, 'Resume All').then((a) => a && vscode.commands.executeCommand(Commands.resumeAllSessions, { folderIndex: folder.index }));
    }));
    this._register(host.onNewConflict(({ folder, pair }) => {
      const who = (s: { sessions: string[] }): string => s.sessions.map((n) => printable(n, 60)).join(', ');
      const files = pair.files.filter((f) => f.conflict);
      const where = files.length === 1 ? printable(files[0]!.path, 120) : `${files.length || pair.files.length} files`;
      const message = `MAM: ${host.where(folder.index)}${who(pair.a)} and ${who(pair.b)} would conflict in ${where}.`;
      this.shown.push({ kind: 'conflict', message });
      void vscode.window.showWarningMessage(message, 'Show Sessions').then((a) => a && vscode.commands.executeCommand(`${Views.sessions}.focus`));
    }));
    // A permission request is heard here when this window applies the event, or from the job's file
    // when another process (the CLI that waits on the job, the job warden) applied it: told once either way.
    this._register(host.onDidApplyEvent(({ folder, job, payload, late }) => {
      if (!late && payload.event === 'permission_required') this.tellPermission(folder.index, job, payload.seq, payload.detail);
    }));
    this._register(host.onDidChangeJob(({ folder, change }) => {
      const { job, previous } = change;
      if (previous !== null && needsPermission(job)) this.tellPermission(folder.index, job, job.seq, job.detail);
      // A job first seen already ended (previous null) is backlog found on disk, not news.
      if (previous === null || isTerminal(previous)) return;
      if (!isTerminal(job.state) || job.state === 'completed' || job.state === 'cancelled') return;
      if (this.delegated.has(`${folder.index}/${job.id}`) || this.toldElsewhere.has(`${folder.index}/${job.id}`) || this.isPartOfAnother(folder.index, job)) return;
      this.tellEnd(folder.index, job);
    }));
  }

  /**
   * Delegate Job from this window: delivers the job under a progress notification that stays until
   * the job ends (its message follows the job; Cancel cancels it), then shows one message with the
   * outcome. Resolves with the job as soon as it is delivered (or refused): the command returns
   * while the notification goes on following the job.
   */
  delegate(fe: FolderEngine, request: DelegateRequest): Promise<JobRecord> {
    const folderIndex = fe.folder.index;
    // The ID is known before the job exists, so no change of it can arrive unrecognised.
    const jobId = newJobId();
    const key = `${folderIndex}/${jobId}`;
    this.delegated.add(key);
    const who = printable(request.session);
    this.shown.push({ kind: 'progress', jobId, message: `MAM: ${this.host.where(folderIndex)}${who}` });
    return new Promise<JobRecord>((delivered, refused) => {
      void vscode.window
        .withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${this.host.where(folderIndex)}${who}`, cancellable: true }, async (progress, token) => {
          progress.report({ message: 'delivering the job…' });
          let job: JobRecord;
          try {
            await fe.engine.start();
            job = (await fe.engine.delegate({ ...request, jobId })).job;
          } catch (err) {
            refused(err);
            return undefined;
          }
          delivered(job);
          // Ended before delegate() returned: never delivered (the session was busy, gone, or did not take it).
          if (isTerminal(job.state)) return { end: job, undelivered: job.state !== 'completed' };
          const cancel = token.onCancellationRequested(() => void this.host.byFolderIndex(folderIndex)?.engine.cancelJob(jobId).catch(() => undefined));
          try {
            const end = await this.untilEnd(folderIndex, job, (now) => progress.report({ message: progressMessage(now) }));
            return end && { end, undelivered: false };
          } finally {
            cancel.dispose();
          }
        })
        .then(
          (outcome) => {
            this.delegated.delete(key);
            if (outcome?.undelivered) this.tellNotDelivered(folderIndex, outcome.end, who);
            else if (outcome) this.tellEnd(folderIndex, outcome.end);
          },
          () => this.delegated.delete(key),
        );
    });
  }

  /**
   * A job ID for a command that follows a job of its own and tells its end itself (Create
   * Session's onboarding): no other message tells the end of the job given this ID. Kept for good:
   * the job's last change may reach this window after the command heard of it.
   */
  jobToldByCaller(folderIndex: number): string {
    const jobId = newJobId();
    this.toldElsewhere.add(`${folderIndex}/${jobId}`);
    return jobId;
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

  /** Resolves with the job once it has ended (or undefined when the window closes first); `onChange` hears every change before. */
  private untilEnd(folderIndex: number, job: JobRecord, onChange: (job: JobRecord) => void): Promise<JobRecord | undefined> {
    return new Promise((resolve) => {
      const subscriptions: vscode.Disposable[] = [];
      let stopped = false;
      const stop = (end: JobRecord | undefined): void => {
        if (stopped) return;
        stopped = true;
        subscriptions.forEach((s) => s.dispose());
        this.stopFollowing.delete(finish);
        resolve(end);
      };
      const finish = (): void => stop(undefined);
      const seen = (now: JobRecord | undefined): void => {
        if (!now || stopped) return;
        if (isTerminal(now.state)) stop(now);
        else onChange(now);
      };
      this.stopFollowing.add(finish);
      subscriptions.push(
        this.host.onDidChangeJob(({ folder, change }) => folder.index === folderIndex && change.job.id === job.id && seen(change.job)),
        // After the engines are rebuilt (settings, trust), the job is read again from disk.
        this.host.onDidChange(() => seen(this.host.byFolderIndex(folderIndex)?.engine.job(job.id))),
      );
      seen(this.host.byFolderIndex(folderIndex)?.engine.job(job.id) ?? job);
    });
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

  /** A review loop's jobs and a parent job's children: the loop's or the parent's end tells how they went. */
  private isPartOfAnother(folderIndex: number, job: JobRecord): boolean {
    if (job.parent_job) return true;
    // The loop writes each job's ID into its steps before submitting it.
    const engine = this.host.byFolderIndex(folderIndex)?.engine;
    return engine?.listLoops().some((loop) => loop.steps.some((s) => s.job_id === job.id)) ?? false;
  }

  private loopChanged(folderIndex: number, loopId: string): void {
    const loop = this.host.byFolderIndex(folderIndex)?.engine.loop(loopId);
    const key = `${folderIndex}/${loopId}`;
    // Ended while this window was open (its last save is its end), and not cancelled by the user.
    if (!loop || loop.status === 'running' || loop.status === 'cancelled' || Date.parse(loop.updated_at) < this.since || this.announced.has(key)) return;
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

/** The delegation notification's line while the job is open. */
function progressMessage(job: JobRecord): string {
  const what = job.title ? `“${printable(jobTitle(job), 80)}”` : job.id;
  if (needsPermission(job)) return `${what} waits for permission`;
  return `${what} ${job.state === 'started' ? 'running' : 'delivered, waiting for the agent to start'}`;
}
