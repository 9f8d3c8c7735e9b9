import * as vscode from 'vscode';
import type { EngineHost } from './engineHost';

/** The custom URI schemes of the extension, in one place. */
export const Schemes = {
  snapshot: 'mam-snapshot',
} as const;

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
  return vscode.Uri.from({ scheme: Schemes.snapshot, path: `/${ref.path}`, query });
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
    const loop = fe?.engine.loop(q.get('loop') ?? '');
    const rev = q.get('rev') ?? '';
    if (!fe || !loop || !/^[0-9a-f]{7,64}$/.test(rev)) return '';
    return (await fe.engine.fileAt(loop.checkout, rev, uri.path.replace(/^\//, ''))) ?? '';
  }
}

/** Opens base ↔ reviewed tree for one file of a round. */
export async function openSnapshotDiff(host: EngineHost, folderIndex: number, loopId: string, round: number, file: string): Promise<void> {
  const loop = host.byFolderIndex(folderIndex)?.engine.loop(loopId);
  const r = loop?.rounds.find((x) => x.n === round);
  if (!loop || !r) throw new Error(`loop ${loopId} has no round ${round}`);
  const left = snapshotUri({ folderIndex, loopId, rev: r.identity.base, path: file });
  const right = snapshotUri({ folderIndex, loopId, rev: r.identity.tree, path: file });
  await vscode.commands.executeCommand('vscode.diff', left, right, `${file} (base ↔ round ${round})`, { preview: true });
}
