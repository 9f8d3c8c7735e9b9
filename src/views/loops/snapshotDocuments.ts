import * as path from 'node:path';
import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import { isPinned } from '../../core/loop/snapshot';
import type { EngineHost } from '../host/engineHost';
import { UriSchemes } from '../shared/uriSchemes';

export interface SnapshotRef {
  folderIndex: number;
  loopId: string;
  /** A commit or tree of the loop's checkout. */
  rev: string;
  path: string;
}

/** `mam-snapshot:/<path>?folder=0&loop=l-…&rev=<sha>`: a file as it was in a reviewed snapshot. */
export function snapshotUri(ref: SnapshotRef): vscode.Uri {
  const query = new URLSearchParams({ folder: String(ref.folderIndex), loop: ref.loopId, rev: ref.rev }).toString();
  return vscode.Uri.from({ scheme: UriSchemes.snapshot, path: `/${ref.path}`, query });
}

/**
 * Read-only file contents at the base and at the reviewed tree of a loop round, so `vscode.diff`
 * can show exactly what the reviewers saw (after vscode-pull-request-github's review URIs).
 */
export class SnapshotContentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly host: EngineHost) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const q = new URLSearchParams(uri.query);
    const fe = this.host.byFolderIndex(Number(q.get('folder')));
    const loop = fe?.engine.core.loops.get(q.get('loop') ?? '');
    const rev = q.get('rev') ?? '';
    if (!fe || !loop || !/^[0-9a-f]{7,64}$/.test(rev)) return '';
    return (await fe.engine.fileAt(loop.checkout, rev, uri.path.replace(/^\//, ''))) ?? '';
  }
}

/** What Open Changes says for a round that pinned no snapshot (a `mam job submit --type loop` job's). */
export const NO_SNAPSHOT = 'MAM: this loop reviewed what the worker reported; it has no snapshot of changes to show.';

/**
 * Opens a round's changed files together in VS Code's multi-file diff editor (`vscode.changes`):
 * base ↔ round N, or round N−1 ↔ round N (`since: 'previous'`). Both sides are read-only
 * snapshots; a file added or deleted has no original or no modified side, and shows as such.
 * `round` defaults to the latest.
 */
export async function openRoundChanges(host: EngineHost, folderIndex: number, loopId: string, round: number | undefined, since: 'base' | 'previous'): Promise<void> {
  const fe = host.byFolderIndex(folderIndex);
  const loop = fe?.engine.core.loops.get(loopId);
  const r = round === undefined ? loop?.rounds.at(-1) : loop?.rounds.find((x) => x.n === round);
  if (!fe || !loop || !r) throw new Error(round === undefined ? 'that loop has no review round yet' : `loop ${loopId} has no round ${round}`);
  if (!isPinned(r.identity)) return void vscode.window.showInformationMessage(NO_SNAPSHOT);
  // VS Code adds the count: "Make the start stronger: Base ↔ Round 2 (3 files)".
  const name = printable(loop.title ?? loop.task.split('\n')[0]!.trim(), 30);
  let from = r.identity.base;
  let title = `${name}: Base ↔ Round ${r.n}`;
  if (since === 'previous') {
    const previous = loop.rounds.find((x) => x.n === r.n - 1);
    if (!previous) return void vscode.window.showInformationMessage(`MAM: round ${r.n} is the loop's first; Open Changes shows it against the base.`);
    if (previous.identity.tree === r.identity.tree) return void vscode.window.showInformationMessage(`MAM: nothing changed between round ${previous.n} and round ${r.n}: both reviewed the same snapshot.`);
    from = previous.identity.tree;
    title = `${name}: Round ${previous.n} ↔ Round ${r.n}`;
  }
  const files = await fe.engine.changedFiles({ base: from, head: r.identity.head, tree: r.identity.tree }, loop.checkout);
  if (files.length === 0) return void vscode.window.showInformationMessage(since === 'base' ? `MAM: round ${r.n} changed no file.` : `MAM: no file changed between round ${r.n - 1} and round ${r.n}.`);
  const side = (rev: string, file: string) => snapshotUri({ folderIndex, loopId, rev, path: file });
  const resources = files.map((f) => [
    // The row's name in the editor: the file in the loop's checkout (its label and icon, as Git's changes show).
    vscode.Uri.file(path.join(loop.checkout, f.path)),
    f.status === 'A' ? undefined : side(from, f.from ?? f.path),
    f.status === 'D' ? undefined : side(r.identity.tree, f.path),
  ]);
  await vscode.commands.executeCommand('vscode.changes', title, resources);
}

/** Opens base ↔ reviewed tree for one file of a round. */
export async function openSnapshotDiff(host: EngineHost, folderIndex: number, loopId: string, round: number, file: string): Promise<void> {
  const loop = host.byFolderIndex(folderIndex)?.engine.core.loops.get(loopId);
  const r = loop?.rounds.find((x) => x.n === round);
  if (!loop || !r) throw new Error(`loop ${loopId} has no round ${round}`);
  if (!isPinned(r.identity)) return void vscode.window.showInformationMessage(NO_SNAPSHOT);
  const left = snapshotUri({ folderIndex, loopId, rev: r.identity.base, path: file });
  const right = snapshotUri({ folderIndex, loopId, rev: r.identity.tree, path: file });
  await vscode.commands.executeCommand('vscode.diff', left, right, `${file} (base ↔ round ${round})`, { preview: true });
}
