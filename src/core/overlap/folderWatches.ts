import * as fs from 'node:fs';
import type { Disposable } from '../base/disposable';
import { noteWatchEvent } from './watchFlood';

/** One event in a watched folder: `name` is the entry it concerns (null when the OS gave none). */
export interface FolderEvent {
  folder: string;
  type: 'rename' | 'change';
  name: string | null;
}

/**
 * A set of folder watches, each one inotify watch on one folder (not recursive): it reports
 * entries created, deleted, renamed, written or whose metadata changed, directly in that folder.
 * Node's own `recursive: true` on Linux (Node 20) puts a watch on every file as well as every folder,
 * reads the whole tree synchronously first and cannot leave a folder out; a folder at a time keeps
 * watches to the folders that matter (docs/overlap.md, "Watching").
 *
 * A watch follows the folder's inode, not its path: each remembers the inode it was put on, so a
 * folder deleted and made again under the same name is seen as a new one (`watches` is false).
 * Watches do not keep the process alive.
 */
export class FolderWatches implements Disposable {
  private readonly open = new Map<string, { watcher: fs.FSWatcher; ino: number }>();

  constructor(
    private readonly onEvent: (event: FolderEvent) => void,
    /** A watch failed after it was set (the folder went away under it, mostly): it is closed. */
    private readonly onBroken: (folder: string) => void,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** Whether `folder` is watched, and the watch is on the folder now at that path. */
  watches(folder: string): boolean {
    const w = this.open.get(folder);
    return w !== undefined && w.ino === inode(folder);
  }

  /** Whether a watch is open under that path (on whichever folder it was put). */
  has(folder: string): boolean {
    return this.open.has(folder);
  }

  folders(): string[] {
    return [...this.open.keys()];
  }

  /**
   * Watches `folder` (again, if the folder at that path is another than the watched one). Throws
   * when the OS refuses (the folder is gone, or no watch is left: ENOSPC, EMFILE).
   */
  add(folder: string): void {
    if (this.watches(folder)) return;
    this.remove(folder);
    const before = inode(folder);
    const watcher = fs.watch(folder, { persistent: false, encoding: 'utf8' }, (type, name) => {
      noteWatchEvent();
      this.onEvent({ folder, type: type === 'change' ? 'change' : 'rename', name: name ?? null });
    });
    watcher.on('error', () => {
      this.remove(folder);
      this.onBroken(folder);
    });
    // Replaced between the stat and the watch: which one is watched is unknown.
    if (before === undefined || inode(folder) !== before) {
      watcher.close();
      throw Object.assign(new Error(`the folder ${folder} changed while a watch was put on it`), { code: 'ECHANGED' });
    }
    this.open.set(folder, { watcher, ino: before });
  }

  remove(folder: string): void {
    this.open.get(folder)?.watcher.close();
    this.open.delete(folder);
  }

  dispose(): void {
    for (const { watcher } of this.open.values()) watcher.close();
    this.open.clear();
  }
}

/** The folder's inode (not following a symlink), or undefined when there is no folder there. */
export function inode(folder: string): number | undefined {
  const st = fs.lstatSync(folder, { throwIfNoEntry: false });
  return st?.isDirectory() ? st.ino : undefined;
}
