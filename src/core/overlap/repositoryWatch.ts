import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Disposable } from '../base/disposable';
import { FolderWatches, type FolderEvent } from './folderWatches';

/**
 * Watches what of a repository's git folders tells that a HEAD moved or a checkout's index
 * changed, without the object store: the common git folder itself (HEAD and index of the primary
 * checkout, packed-refs), `refs/heads/` and its folders (and `reftable/`), `worktrees/` (a worktree
 * added or removed), `info/` (exclude, attributes), and the own git folder of each checkout
 * compared (its HEAD and index). The objects MAM's own looks write (blobs, trees, snapshot
 * commits) go under `objects/`, which is not watched: a look does not set off the next.
 *
 * What an event means:
 * - in a checkout's own git folder: that checkout is read again (its index or HEAD changed), and
 *   the HEADs are listed again (a commit, a checkout, a rebase, a reset);
 * - under refs/heads/, packed-refs, worktrees/: the HEADs are listed again (a branch moved: a commit
 *   in another worktree, a rebase finishing; a worktree added or removed);
 * - in info/: every checkout of the repository is read again and its folders walked again
 *   (info/exclude decides what is ignored).
 */
export class RepositoryWatch implements Disposable {
  private readonly watches: FolderWatches;
  private headsMoved = true;
  private rescanNeeded = true;
  private why: string | undefined;
  /** Each compared checkout's own git folder, and what marks that checkout. */
  private readonly checkouts = new Map<string, () => void>();

  constructor(
    readonly commonDir: string,
    private readonly onMoved: () => void,
    /** info/ moved: every checkout of the repository is to be read, and walked, again. */
    private readonly onRules: () => void,
  ) {
    this.watches = new FolderWatches((e) => this.onEvent(e), () => this.markHeads(true));
  }

  /** Why the repository's git folders are not watched (then every look lists HEADs and reads every checkout). */
  get unwatched(): string | undefined {
    return this.why;
  }

  /** Watches `gitDir` too (a checkout's own git folder); `mark` is called when it moves. */
  addCheckout(gitDir: string, mark: () => void): void {
    if (this.checkouts.has(gitDir)) return;
    this.checkouts.set(gitDir, mark);
    // Now, not at the next rescan: the checkout is read right after this, and its index may change then.
    if (this.why !== undefined) return;
    try {
      this.watches.add(gitDir);
    } catch {
      this.rescanNeeded = true;
      mark();
    }
  }

  removeCheckout(gitDir: string): void {
    if (!this.checkouts.delete(gitDir)) return;
    if (gitDir !== this.commonDir) this.watches.remove(gitDir);
  }

  get size(): number {
    return this.checkouts.size;
  }

  /** Whether the HEADs may have moved since the last call; forgets it (a move from now on marks it again). */
  takeHeads(): boolean {
    if (this.rescanNeeded && this.why === undefined) this.rescan();
    if (this.why !== undefined) return true;
    const moved = this.headsMoved;
    this.headsMoved = false;
    return moved;
  }

  markHeads(rescan = false): void {
    if (rescan) this.rescanNeeded = true;
    if (this.headsMoved) return;
    this.headsMoved = true;
    this.onMoved();
  }

  /** Tries again to watch a repository that could not be (a full look). */
  retry(): void {
    this.why = undefined;
    this.markHeads(true);
  }

  dispose(): void {
    this.watches.dispose();
    this.checkouts.clear();
  }

  private onEvent({ folder, type }: FolderEvent): void {
    const info = path.join(this.commonDir, 'info');
    if (folder === info) {
      this.onRules();
      return;
    }
    // A folder made or removed under refs/heads/ (a branch named a/b), or info/, worktrees/ themselves.
    const rescan = type === 'rename' && !folder.startsWith(path.join(this.commonDir, 'worktrees') + path.sep);
    this.checkouts.get(folder)?.();
    this.markHeads(rescan);
  }

  /** Puts a watch on every folder that should have one, and closes the watches of folders gone. */
  private rescan(): void {
    this.rescanNeeded = false;
    this.headsMoved = true;
    const wanted = new Set<string>([this.commonDir, ...this.checkouts.keys()]);
    for (const sub of ['worktrees', 'info']) wanted.add(path.join(this.commonDir, sub));
    // Only branches: a checkout's HEAD names one (or a commit, in HEAD itself); tags and remote
    // branches, often many more folders, move no HEAD.
    for (const tree of ['refs/heads', 'reftable']) for (const f of foldersUnder(path.join(this.commonDir, tree))) wanted.add(f);
    for (const folder of wanted) {
      try {
        this.watches.add(folder);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') continue; // no info/ or worktrees/ yet: the common folder's event tells when there is
        if (code === 'ECHANGED') {
          this.rescanNeeded = true;
          continue;
        }
        this.why = `no folder watch could be added (${code ?? String(err)})`;
        this.watches.dispose();
        return;
      }
    }
    for (const f of this.watches.folders()) if (!wanted.has(f)) this.watches.remove(f);
  }
}

/** `root` and every folder under it (refs/heads/: a few, each branch name with a slash adds one). */
function foldersUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (folder: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    out.push(folder);
    for (const e of entries) if (e.isDirectory()) walk(path.join(folder, e.name));
  };
  walk(root);
  return out;
}
