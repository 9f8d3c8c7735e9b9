import * as vscode from 'vscode';
import { printable } from '../core/base/ids';
import type { JobRecord } from '../core/store/jobSchema';
import { jobTitle } from '../core/jobs/title';
import type { SessionRow } from '../core/store/sessionSchema';
import type { EngineHost, FolderEngine } from './engineHost';
import { isOpen } from './jobItems';

/** A command's subject: a tree node when run from a view, else what the user picks. */
export interface SessionRef {
  folderIndex: number;
  name: string;
}
export interface JobRef {
  folderIndex: number;
  jobId: string;
}

export async function pickFolder(host: EngineHost): Promise<FolderEngine | undefined> {
  const engines = await host.ready();
  if (engines.length === 0) {
    void vscode.window.showWarningMessage('MAM: open a folder first.');
    return undefined;
  }
  if (engines.length === 1) return engines[0];
  const active = vscode.window.activeTextEditor?.document.uri;
  const preferred = host.engineFor(active);
  // The active editor's folder first, so Enter takes it.
  const ordered = preferred ? [preferred, ...engines.filter((fe) => fe !== preferred)] : engines;
  const pick = await vscode.window.showQuickPick(
    ordered.map((fe) => ({ label: fe.folder.name, description: fe.folder.uri.fsPath, fe })),
    { title: 'Which workspace folder?', placeHolder: 'Pick a workspace folder' },
  );
  return pick?.fe;
}

export type SessionItem = vscode.QuickPickItem & { fe: FolderEngine; row: SessionRow };

/** The session a tree row names, if it (still) exists. */
export async function sessionOf(host: EngineHost, ref: SessionRef | undefined): Promise<{ fe: FolderEngine; row: SessionRow } | undefined> {
  if (!ref || typeof ref !== 'object' || !('name' in ref)) return undefined;
  const fe = host.byFolderIndex(ref.folderIndex);
  const row = fe ? (await fe.engine.listSessions()).find((r) => r.name === ref.name) : undefined;
  return fe && row ? { fe, row } : undefined;
}

/** Quick-pick items for the sessions `filter` keeps, in every folder; none: says so, naming what for. */
export async function sessionItems(host: EngineHost, filter: (row: SessionRow) => boolean, what: string): Promise<SessionItem[]> {
  const engines = await host.ready();
  const items: SessionItem[] = [];
  for (const fe of engines) {
    for (const row of (await fe.engine.listSessions()).filter(filter)) {
      items.push({ label: row.name, description: `${row.agent} · ${row.role} · ${row.status}`, detail: engines.length > 1 ? fe.folder.name : row.cwd, fe, row });
    }
  }
  if (items.length === 0) void vscode.window.showInformationMessage(`MAM: no session to ${what.toLowerCase()}.`);
  return items;
}

export async function pickSession(host: EngineHost, ref: SessionRef | undefined, filter: (row: SessionRow) => boolean, title: string): Promise<{ fe: FolderEngine; row: SessionRow } | undefined> {
  const named = await sessionOf(host, ref);
  if (named) return named;
  const items = await sessionItems(host, filter, title);
  if (items.length === 0) return undefined;
  return vscode.window.showQuickPick(items, { title, placeHolder: 'Pick a session (type to filter by name, agent or role)', matchOnDescription: true });
}

export async function pickJob(host: EngineHost, ref: JobRef | undefined, filter: (job: JobRecord) => boolean, title: string): Promise<{ fe: FolderEngine; job: JobRecord } | undefined> {
  if (ref && typeof ref === 'object' && 'jobId' in ref) {
    const fe = host.byFolderIndex(ref.folderIndex);
    const job = fe?.engine.job(ref.jobId);
    if (fe && job) return { fe, job };
  }
  const engines = await host.ready();
  const items = engines.flatMap((fe) =>
    fe.engine
      .listJobs()
      .filter(filter)
      .slice(0, 200)
      .map((job) => ({ label: printable(jobTitle(job), 120), description: `${job.session} · ${job.state}${isOpen(job) ? '' : job.reason ? ` (${job.reason})` : ''}`, detail: job.id, fe, job })),
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`MAM: no job to ${title.toLowerCase()}.`);
    return undefined;
  }
  return vscode.window.showQuickPick(items, { title, placeHolder: 'Pick a job (type to filter by title, session, state or ID)', matchOnDescription: true, matchOnDetail: true });
}

/** Runs a command body and shows its failure as one error message instead of throwing. */
export async function reportErrors(what: string, body: () => Promise<unknown>): Promise<void> {
  try {
    await body();
  } catch (err) {
    void vscode.window.showErrorMessage(`MAM: ${what} failed: ${(err as Error).message}`);
  }
}
