import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import type { JobRecord } from '../../core/store/jobSchema';
import { jobTitle } from '../../core/jobs/title';
import type { SessionRow } from '../../core/store/sessionSchema';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { isOpen } from '../jobs/jobItems';

/**
 * A command's subject: a tree node when run from a view, else what the user picks. Every node of
 * the trees carries its folder's index, so a command run from a row never asks which folder.
 */
export interface FolderRef {
  folderIndex: number;
}
export interface SessionRef extends FolderRef {
  name: string;
}
export interface JobRef extends FolderRef {
  jobId: string;
}

/** The folder a command argument (a tree row, or a script's `{ folderIndex }`) names, if any. */
export function folderOfRef(host: EngineHost, ref: unknown): FolderEngine | undefined {
  return namesFolder(ref) ? host.byFolderIndex(ref.folderIndex) : undefined;
}

/** Whether a command argument names a folder at all (then it never asks, even when the folder is gone). */
function namesFolder(ref: unknown): ref is FolderRef {
  return Boolean(ref) && typeof ref === 'object' && typeof (ref as Partial<FolderRef>).folderIndex === 'number';
}

/**
 * The folders a command may act on: those that use MAM (hold `.mam/`); when none does yet, every
 * folder of the window (the first Create Session or Initialize makes the control plane).
 */
function candidates(engines: readonly FolderEngine[], host: EngineHost): readonly FolderEngine[] {
  const used = host.mamFolders;
  return used.length > 0 ? used : engines;
}

type FolderItem = vscode.QuickPickItem & { fes: FolderEngine[] };

function folderItem(fe: FolderEngine): FolderItem {
  // As VS Code's own folder pick shows a folder: its name, with where it is.
  return { label: `$(root-folder) ${fe.folder.name}`, description: fe.folder.uri.fsPath, fes: [fe] };
}

const PLACEHOLDER = 'In which workspace folder?';

/**
 * Which folder a command acts on: the only one that uses MAM, or, when more than one does, the
 * one the user picks (the active editor's folder first, so Enter takes it). `title` is the
 * command's; `everyFolder` offers every folder of the window, for what brings MAM to a folder
 * (Initialize Workspace). Undefined: no folder is open, or the user closed the pick.
 */
export async function pickFolder(host: EngineHost, title = 'Which folder?', options: { everyFolder?: boolean } = {}): Promise<FolderEngine | undefined> {
  const engines = await host.ready();
  if (engines.length === 0) {
    void vscode.window.showWarningMessage('MAM: open a folder first.');
    return undefined;
  }
  const among = options.everyFolder ? engines : candidates(engines, host);
  if (among.length === 1) return among[0];
  const preferred = host.engineFor(vscode.window.activeTextEditor?.document.uri);
  const ordered = preferred && among.includes(preferred) ? [preferred, ...among.filter((fe) => fe !== preferred)] : [...among];
  const pick = await vscode.window.showQuickPick(ordered.map(folderItem), { title, placeHolder: PLACEHOLDER, matchOnDescription: true });
  return pick?.fes[0];
}

/** The folder a row names, or the one the user picks. */
export async function folderFor(host: EngineHost, ref: unknown, title: string, options: { everyFolder?: boolean } = {}): Promise<FolderEngine | undefined> {
  return namesFolder(ref) ? folderOfRef(host, ref) : pickFolder(host, title, options);
}

/**
 * For a command that can act on every folder at once (stop all sessions, the monitor, the
 * broker, doctor): the folder a row names; else, when more than one folder it applies to
 * (`keep`) uses MAM, the user's pick, "All folders" first; else the only one. Empty: nothing to
 * act on, or the pick was closed.
 */
export async function pickFolders(host: EngineHost, ref: unknown, title: string, keep: (fe: FolderEngine) => boolean = () => true): Promise<FolderEngine[]> {
  if (namesFolder(ref)) {
    const fe = folderOfRef(host, ref);
    return fe ? [fe] : [];
  }
  const engines = await host.ready();
  const among = candidates(engines, host).filter(keep);
  if (among.length <= 1) return [...among];
  const all: FolderItem = { label: '$(root-folder-opened) All folders', description: among.map((fe) => fe.folder.name).join(', '), fes: [...among] };
  const pick = await vscode.window.showQuickPick([all, ...among.map(folderItem)], { title, placeHolder: PLACEHOLDER, matchOnDescription: true });
  return pick?.fes ?? [];
}

export type SessionItem = vscode.QuickPickItem & { fe: FolderEngine; row: SessionRow };

/** The session a tree row names, if it (still) exists. */
export async function sessionOf(host: EngineHost, ref: unknown): Promise<{ fe: FolderEngine; row: SessionRow } | undefined> {
  if (!ref || typeof ref !== 'object' || !('name' in ref)) return undefined;
  const fe = folderOfRef(host, ref);
  const row = fe ? (await fe.engine.core.controlPlane.sessions.list()).find((r) => r.name === (ref as SessionRef).name) : undefined;
  return fe && row ? { fe, row } : undefined;
}

/** Quick-pick items for the sessions of `fe` that `filter` keeps; none: says so, naming what for (and the folder, when there are several). */
export async function sessionItems(host: EngineHost, fe: FolderEngine, filter: (row: SessionRow) => boolean, what: string): Promise<SessionItem[]> {
  const items = (await fe.engine.core.controlPlane.sessions.list()).filter(filter).map((row): SessionItem => ({ label: row.name, description: `${row.agent} · ${row.role} · ${row.status}`, detail: row.cwd, fe, row }));
  if (items.length === 0) void vscode.window.showInformationMessage(`MAM: ${host.where(fe.folder.index)}no session to ${what.toLowerCase()}.`);
  return items;
}

/** The session a row names; else the folder (the row's, or picked) and then one of its sessions. */
export async function pickSession(host: EngineHost, ref: unknown, filter: (row: SessionRow) => boolean, title: string): Promise<{ fe: FolderEngine; row: SessionRow } | undefined> {
  const named = await sessionOf(host, ref);
  if (named) return named;
  if (ref && typeof ref === 'object' && 'name' in ref) return undefined; // a row of a session that is gone
  const fe = await folderFor(host, ref, title);
  if (!fe) return undefined;
  const items = await sessionItems(host, fe, filter, title);
  if (items.length === 0) return undefined;
  return vscode.window.showQuickPick(items, { title, placeHolder: 'Pick a session (type to filter by name, agent or role)', matchOnDescription: true });
}

/** The job a row names; else the folder (the row's, or picked) and then one of its jobs. */
export async function pickJob(host: EngineHost, ref: unknown, filter: (job: JobRecord) => boolean, title: string): Promise<{ fe: FolderEngine; job: JobRecord } | undefined> {
  if (ref && typeof ref === 'object' && 'jobId' in ref) {
    const fe = folderOfRef(host, ref);
    const job = fe?.engine.core.jobs.index.get((ref as JobRef).jobId);
    return fe && job ? { fe, job } : undefined;
  }
  const fe = await folderFor(host, ref, title);
  if (!fe) return undefined;
  const items = fe.engine.core.jobs.index
    .list()
    .filter(filter)
    .slice(0, 200)
    .map((job) => ({ label: printable(jobTitle(job), 120), description: `${job.session} · ${job.state}${isOpen(job) ? '' : job.reason ? ` (${job.reason})` : ''}`, detail: job.id, fe, job }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`MAM: ${host.where(fe.folder.index)}no job to ${title.toLowerCase()}.`);
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
