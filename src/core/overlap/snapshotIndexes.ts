import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Disposable } from '../base/disposable';
import { git, stageWorktree } from '../loop/snapshot';
import type { CheckoutLocation } from './checkouts';

/** What a file's stat says about whether it was rewritten: `''` when it does not exist. */
function stamp(file: string): string {
  const s = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
  return s ? `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : '';
}

interface Kept {
  index: string;
  /** The checkout's own index and the repository's info/exclude as they were when `index` was seeded. */
  seed: string;
  /** `index` as it was right after `tree` was written from it. */
  written: string;
  tree: string;
}

/** Folders of checkers still alive, removed when the process exits if nobody disposed them. */
const live = new Set<string>();
process.once('exit', () => {
  for (const dir of live) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * The snapshot trees of checkouts looked at again and again (loop/snapshot.ts's tree, seeded from
 * the checkout's index), through one temporary index per checkout kept between looks in a private
 * folder, removed on dispose. A look runs `git add --all` on the kept index: git lstat()s each file
 * and rewrites the index only when something changed. When it did not, and neither the checkout's
 * own index nor the repository's info/exclude changed, the tree is the last look's and `write-tree`
 * is skipped. Otherwise the index is seeded again from the checkout's own, exactly as a one-off
 * snapshot is, so the kept index never drifts from it (a file added while untracked and ignored
 * since, a file the user unstaged).
 */
export class SnapshotIndexes implements Disposable {
  private dir: string | undefined;
  private disposed = false;
  private readonly kept = new Map<string, Kept>();

  async tree(location: CheckoutLocation): Promise<string> {
    const seedIndex = path.join(location.gitDir, 'index');
    const seed = `${stamp(seedIndex)} ${stamp(path.join(location.commonDir, 'info', 'exclude'))}`;
    const kept = this.kept.get(location.toplevel);
    if (kept !== undefined && kept.seed === seed) {
      const unchanged = await stageWorktree(location.toplevel, kept.index).then(() => stamp(kept.index) === kept.written, () => false);
      if (unchanged) return kept.tree;
    }
    const index = kept?.index ?? path.join(this.folder(), `${createHash('sha256').update(location.toplevel).digest('hex').slice(0, 16)}.index`);
    this.kept.delete(location.toplevel);
    await stageWorktree(location.toplevel, index, { seedIndex, fresh: true });
    const tree = (await git(location.toplevel, ['write-tree'], { GIT_INDEX_FILE: index })).trim();
    this.kept.set(location.toplevel, { index, seed, written: stamp(index), tree });
    return tree;
  }

  /** Forgets (and deletes the index of) every checkout not in `checkouts`. */
  retain(checkouts: ReadonlySet<string>): void {
    for (const [top, kept] of this.kept) {
      if (checkouts.has(top)) continue;
      fs.rmSync(kept.index, { force: true });
      this.kept.delete(top);
    }
  }

  dispose(): void {
    this.disposed = true;
    this.kept.clear();
    if (this.dir === undefined) return;
    fs.rmSync(this.dir, { recursive: true, force: true });
    live.delete(this.dir);
    this.dir = undefined;
  }

  private folder(): string {
    if (this.disposed) throw new Error('the overlap checker was disposed of');
    if (this.dir === undefined) {
      this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-overlap-'));
      live.add(this.dir);
    }
    return this.dir;
  }
}
