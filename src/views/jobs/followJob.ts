import type * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import { jobTitle } from '../../core/jobs/title';
import { isTerminal, needsPermission, type JobRecord } from '../../core/store/jobSchema';
import type { EngineHost } from '../host/engineHost';

/**
 * Resolves with the job once it has ended, or with undefined when `closing` fires first (the
 * window closes); `onChange` hears every change before. The job is followed across engine rebuilds
 * (settings, trust): each new engine of its folder is asked for it again.
 */
export function untilEnd(host: EngineHost, folderIndex: number, job: JobRecord, onChange: (job: JobRecord) => void, closing: vscode.Event<void>): Promise<JobRecord | undefined> {
  return new Promise((resolve) => {
    const subscriptions: vscode.Disposable[] = [];
    let stopped = false;
    const stop = (end: JobRecord | undefined): void => {
      if (stopped) return;
      stopped = true;
      subscriptions.splice(0).forEach((s) => s.dispose());
      resolve(end);
    };
    const seen = (now: JobRecord | undefined): void => {
      if (!now || stopped) return;
      if (isTerminal(now.state)) stop(now);
      else onChange(now);
    };
    subscriptions.push(
      closing(() => stop(undefined)),
      host.forEachFolder((fe) => {
        if (fe.folder.index !== folderIndex) return undefined;
        seen(fe.jobs.job(job.id) ?? job);
        return fe.jobs.onDidChangeJob(({ job: now }) => now.id === job.id && seen(now));
      }),
    );
    // It may have ended while the subscriptions were made.
    if (stopped) subscriptions.splice(0).forEach((s) => s.dispose());
  });
}

/** The line of a followed job's progress notification while it is open. */
export function progressMessage(job: JobRecord): string {
  const what = job.title ? `“${printable(jobTitle(job), 80)}”` : job.id;
  if (needsPermission(job)) return `${what} waits for permission`;
  return `${what} ${job.state === 'started' ? 'running' : 'delivered, waiting for the agent to start'}`;
}
