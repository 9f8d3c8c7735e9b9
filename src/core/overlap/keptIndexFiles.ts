import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAlive } from '../base/process';
import { list, lit, obj, parse, str } from '../base/schema';
import { tempFileFor, writeFileAtomic } from '../store/atomicFile';

/** A checkout's kept snapshot index (snapshotIndexes.ts), and what says whether it still holds. */
export interface Kept {
  index: string;
  /** The checkout's own index and the repository's info/exclude and info/attributes as they were when `index` was seeded. */
  seed: string;
  /** `index` as it was right after `tree` was written from it (indexStamp). */
  written: string;
  tree: string;
  /** Paths `git add` dropped from `index` since it was seeded (gone from the working tree then). */
  removed: Set<string>;
}

/** Past this many paths dropped since a seeding, an index is not kept: the next look seeds again. */
export const MAX_REMOVED = 1000;

/**
 * An index file as git last wrote it: git writes a new file and renames it over the old, so a
 * rewrite changes the inode, and a rename (which changes the ctime) leaves all three alone.
 */
export function indexStamp(file: string): string {
  const s = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
  return s ? `${s.ino}:${s.size}:${s.mtimeNs}` : '';
}

/** What `state.json` holds: the kept index's seed, its stamp when `tree` was written from it, and the paths dropped since the seeding. */
const keptState = obj({ v: lit(1), seed: str(), written: str(), tree: str({ pattern: /^[0-9a-f]{40}([0-9a-f]{24})?$/ }), removed: list(str()) });

/** A path relative to the checkout that stays inside it. */
function isInside(p: string): boolean {
  return p !== '' && !path.isAbsolute(p) && !p.split('/').includes('..');
}

/** A checkout's kept index and its state, in its git folder (`mam-overlap/`), for the next process's look. */
export class KeptIndexFiles {
  private readonly dir: string;
  private readonly index: string;
  private readonly state: string;

  constructor(gitDir: string) {
    this.dir = path.join(gitDir, 'mam-overlap');
    this.index = path.join(this.dir, 'index');
    this.state = path.join(this.dir, 'state.json');
  }

  /** A new, empty file beside the kept index, for this process's copy; undefined when MAM cannot write there. */
  privateCopy(): string | undefined {
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      const copy = tempFileFor(this.index);
      fs.closeSync(fs.openSync(copy, 'wx'));
      return copy;
    } catch {
      return undefined;
    }
  }

  /** The state, when it says the kept index was seeded as `seed` is now; undefined when there is none, or it is unreadable. */
  read(seed: string): Omit<Kept, 'index'> | undefined {
    try {
      const state = parse(keptState, JSON.parse(fs.readFileSync(this.state, 'utf8')));
      // Written by MAM, but in a folder the repository's owner controls: paths stay inside the checkout.
      if (!state.removed.every(isInside)) return undefined;
      return state.seed === seed ? { seed, written: state.written, tree: state.tree, removed: new Set(state.removed) } : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Copies the kept index to `copy` when it is the one `written` names (read through one open
   * file: another process may rename a newer one in meanwhile), keeping its time (git's guard for
   * racily clean entries compares files' times with the index's).
   */
  copyIndex(written: string, copy: string): boolean {
    let fd: number | undefined;
    try {
      fd = fs.openSync(this.index, 'r');
      const s = fs.fstatSync(fd, { bigint: true });
      if (`${s.ino}:${s.size}:${s.mtimeNs}` !== written) return false;
      fs.writeFileSync(copy, fs.readFileSync(fd));
      const mtime = Number(s.mtimeNs / 1_000_000n);
      fs.utimesSync(copy, new Date(mtime), new Date(mtime));
      return true;
    } catch {
      return false;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }

  /** Puts `kept.index` (a private copy, beside the kept one) in place and writes its state; a failure keeps nothing. */
  keep(kept: Kept): void {
    if (kept.removed.size > MAX_REMOVED || path.dirname(kept.index) !== this.dir) return;
    try {
      fs.renameSync(kept.index, this.index);
      writeFileAtomic(this.state, JSON.stringify({ v: 1, seed: kept.seed, written: kept.written, tree: kept.tree, removed: [...kept.removed] }), { durable: false });
      removeDeadCopies(this.index);
    } catch {
      // a git folder MAM may not write to: the next look seeds again
    }
  }
}

/** Removes copies of the kept index left by processes that died before they put theirs in place. */
function removeDeadCopies(index: string): void {
  const prefix = `.${path.basename(index)}.tmp-`;
  for (const name of fs.readdirSync(path.dirname(index))) {
    const pid = Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]);
    if (name.startsWith(prefix) && pid > 0 && pid !== process.pid && !isAlive(pid)) fs.rmSync(path.join(path.dirname(index), name), { force: true });
  }
}
