import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Disposable } from '../base/disposable';
import { gitExec } from '../base/git';
import { git } from '../loop/snapshot';
import { networkFsTypeOf } from '../store/mounts';
import type { CheckoutLocation } from './checkouts';
import { FolderWatches, inode, type FolderEvent } from './folderWatches';

/** `git check-ignore`'s exit status when none of the paths it was given is ignored. */
const CHECK_IGNORE_NONE = 1;
/** Beyond this many folders moved since the last look, git looks at the whole tree. */
const MAX_FOLDERS_NAMED = 64;

/** What a look learns from a checkout's watch: whether anything moved, and when known, only in which folders (relative; '' the top). */
export interface TreeMoves {
  moved: boolean;
  folders?: string[];
}

/**
 * Watches one checkout's working tree, a watch per folder (folderWatches.ts), so that a look can
 * tell whether anything in it moved since the last look without asking git. Left out: `.git`,
 * MAM's own `.mam/` and `.mam.env` at the top (the snapshot leaves them out too), and the folders
 * git ignores as a whole (nothing tracked inside: `node_modules/`, `build/`), whose files cannot
 * enter the snapshot. Symlinks are not followed: git keeps the link, not what it points to.
 *
 * The folder list is walked again (a rescan) when a folder appears or goes, when a `.gitignore`
 * moves (what is ignored may have changed), or when asked (the repository's info/exclude moved, a
 * flood). A checkout that cannot be watched is read on every look: on a network filesystem
 * (another host's writes raise no event here), with a repository inside it (a submodule moves
 * without a file of this tree moving), with more than `maxFolders` folders, or when the OS has no
 * watch left.
 */
export class TreeWatch implements Disposable {
  private readonly watches: FolderWatches;
  private readonly top: string;
  /** Something moved since the last `take` (true at first: nothing is known). */
  private dirty = true;
  /** The folders (relative, '' the top) in which something moved since the last `take`, or 'all' when that is not known. */
  private changed: Set<string> | 'all' = 'all';
  private rescanNeeded = true;
  private ignored = new Set<string>();
  private why: string | undefined;
  private disposed = false;

  constructor(location: CheckoutLocation, private readonly onMoved: () => void, private readonly maxFolders: number) {
    this.top = location.toplevel;
    this.watches = new FolderWatches((e) => this.onEvent(e), () => this.mark(true));
    const network = networkFsTypeOf(this.top);
    if (network !== undefined) this.why = `it is on a network filesystem (${network})`;
  }

  /** Why the checkout is read on every look, when it is not watched. */
  get unwatched(): string | undefined {
    return this.why;
  }

  /** How many folders are watched. */
  get folders(): number {
    return this.watches.size;
  }

  /**
   * At the start of a look, before git reads the checkout: brings the watches up to date, then says
   * whether the checkout must be read, and forgets it — a change from now on marks it again, so a
   * file written while git reads is read by the next look.
   */
  async take(): Promise<TreeMoves> {
    for (let i = 0; i < 3 && this.rescanNeeded && !this.disposed && this.why === undefined; i++) await this.rescan();
    // Folders kept appearing while they were walked: read now, and walk again at the next look.
    if (this.rescanNeeded && this.why === undefined) queueMicrotask(() => this.onMoved());
    if (this.why !== undefined || this.rescanNeeded) return { moved: true };
    const moved = this.dirty;
    const changed = this.changed;
    this.dirty = false;
    this.changed = new Set();
    return moved && changed !== 'all' && changed.size > 0 ? { moved, folders: [...changed].sort() } : { moved };
  }

  /**
   * Marks the checkout moved: in `folder` (absolute) when that is all that is known to have moved,
   * else anywhere (and its folders to be walked again with `rescan`): the owner's signal (a flood,
   * its git folder, a full look) or an event.
   */
  mark(rescan: boolean, folder?: string): void {
    if (rescan) this.rescanNeeded = true;
    if (rescan || folder === undefined) this.changed = 'all';
    else if (this.changed !== 'all') {
      this.changed.add(path.relative(this.top, folder));
      if (this.changed.size > MAX_FOLDERS_NAMED) this.changed = 'all';
    }
    if (this.dirty) return;
    this.dirty = true;
    this.onMoved();
  }

  /** Tries to watch again a checkout that could not be (a full look). */
  retry(): void {
    if (this.why !== undefined && !this.why.startsWith('it is on a network filesystem')) this.why = undefined;
    this.mark(true);
  }

  dispose(): void {
    this.disposed = true;
    this.watches.dispose();
  }

  private onEvent({ folder, type, name }: FolderEvent): void {
    if (folder === this.top && (name === '.git' || name === '.mam' || name === '.mam.env')) return;
    this.mark(name === '.gitignore' || (type === 'rename' && this.foldersChanged(folder, name)), folder);
  }

  /** Whether an entry created, deleted or renamed in `folder` changes which folders are to be watched. */
  private foldersChanged(folder: string, name: string | null): boolean {
    if (!this.watches.watches(folder)) return true; // the watched folder itself went, or was replaced
    if (name === null || name.includes('\uFFFD')) return true;
    const child = path.join(folder, name);
    if (this.ignored.has(path.relative(this.top, child))) return false;
    return inode(child) !== undefined ? !this.watches.watches(child) : this.watches.has(child);
  }

  /** Walks the folders again: watches the new ones (each before it is read), closes the ones gone or now ignored. */
  private async rescan(): Promise<void> {
    this.rescanNeeded = false;
    // What happened in a folder before its watch was there is read by this look, wherever it is.
    this.dirty = true;
    this.changed = 'all';
    try {
      this.ignored = await ignoredFolders(this.top);
    } catch (err) {
      return this.unwatch(`git could not list its ignored folders (${err instanceof Error ? err.message : String(err)})`);
    }
    const seen = new Set<string>();
    const queue = [''];
    while (queue.length > 0 && !this.disposed) {
      const rel = queue.shift()!;
      const folder = rel === '' ? this.top : path.join(this.top, rel);
      try {
        this.watches.add(folder);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ECHANGED') {
          this.rescanNeeded = true; // gone or replaced while walked: its parent's event said so, or will
          continue;
        }
        return this.unwatch(`no folder watch could be added (${code ?? String(err)})`);
      }
      seen.add(folder);
      if (seen.size > this.maxFolders) return this.unwatch(`it has more than ${this.maxFolders} folders`);
      let entries: fs.Dirent[];
      try {
        entries = await fs.promises.readdir(folder, { withFileTypes: true });
      } catch {
        continue; // gone meanwhile: the event on its parent marks a rescan
      }
      for (const e of entries) {
        if (e.name === '.git') {
          if (rel !== '') return this.unwatch(`a repository is inside it (${rel})`);
          continue;
        }
        if (!e.isDirectory() || (rel === '' && e.name === '.mam')) continue;
        if (e.name.includes('\uFFFD')) return this.unwatch('a folder name in it is not UTF-8');
        const child = rel === '' ? e.name : `${rel}/${e.name}`;
        if (!this.ignored.has(child)) queue.push(child);
      }
    }
    for (const f of this.watches.folders()) if (!seen.has(f)) this.watches.remove(f);
  }

  private unwatch(why: string): void {
    this.why = why;
    this.watches.dispose();
  }
}

/**
 * The folders git ignores as a whole, relative to the top. `ls-files --directory` names the
 * candidates (an untracked folder of only ignored files among them, which is not ignored itself),
 * `check-ignore` keeps those an ignore rule really matches. A folder holding a tracked file is
 * never one (ls-files reads the checkout's index).
 */
async function ignoredFolders(top: string): Promise<Set<string>> {
  const listed = await git(top, ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']);
  const candidates = listed.split('\0').filter((p) => p.endsWith('/'));
  if (candidates.length === 0) return new Set();
  const r = await gitExec(top, ['check-ignore', '-z', '--stdin'], { input: `${candidates.join('\0')}\0` });
  if (r.exitCode !== 0 && r.exitCode !== CHECK_IGNORE_NONE) throw new Error(`git check-ignore failed: ${r.stderr.trim().split('\n')[0]}`);
  return new Set(r.stdout.split('\0').filter((p) => p !== '').map((p) => p.replace(/\/$/, '')));
}
