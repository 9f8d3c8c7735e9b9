import * as vscode from 'vscode';
import type { JobRecord } from '../core/jobs/jobSchema';
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
  const pick = await vscode.window.showQuickPick(
    engines.map((fe) => ({ label: fe.folder.name, description: fe.folder.uri.fsPath, fe })),
    { title: 'Which workspace folder?', placeHolder: preferred?.folder.name },
  );
  return pick?.fe;
}

export async function pickSession(host: EngineHost, ref: SessionRef | undefined, filter: (row: SessionRow) => boolean, title: string): Promise<{ fe: FolderEngine; row: SessionRow } | undefined> {
  if (ref && typeof ref === 'object' && 'name' in ref) {
    const fe = host.byFolderIndex(ref.folderIndex);
    const row = fe ? (await fe.engine.listSessions()).find((r) => r.name === ref.name) : undefined;
    if (fe && row) return { fe, row };
  }
  const engines = await host.ready();
  const items: Array<vscode.QuickPickItem & { fe: FolderEngine; row: SessionRow }> = [];
  for (const fe of engines) {
    for (const row of (await fe.engine.listSessions()).filter(filter)) {
      items.push({ label: row.name, description: `${row.agent} · ${row.role} · ${row.status}`, detail: engines.length > 1 ? fe.folder.name : row.cwd, fe, row });
    }
  }
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`MAM: no session to ${title.toLowerCase()}.`);
    return undefined;
  }
  return vscode.window.showQuickPick(items, { title, matchOnDescription: true });
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
      .map((job) => ({ label: job.title || job.id, description: `${job.session} · ${job.state}${isOpen(job) ? '' : job.reason ? ` (${job.reason})` : ''}`, detail: job.id, fe, job })),
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`MAM: no job to ${title.toLowerCase()}.`);
    return undefined;
  }
  return vscode.window.showQuickPick(items, { title, matchOnDescription: true, matchOnDetail: true });
}

/** Runs a command body and shows its failure as one error message instead of throwing. */
export async function reportErrors(what: string, body: () => Promise<unknown>): Promise<void> {
  try {
    await body();
  } catch (err) {
    void vscode.window.showErrorMessage(`MAM: ${what} failed: ${(err as Error).message}`);
  }
}
