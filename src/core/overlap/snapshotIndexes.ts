import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Disposable } from '../base/disposable';
import { git, stageWorktree, writeFreshTree } from '../loop/snapshot';
import type { CheckoutLocation } from './checkouts';
import { indexStamp, KeptIndexFiles, MAX_REMOVED, type Kept } from './keptIndexFiles';
import { parseRaw, type RawDiff } from './rawDiff';

/** What a file's stat says about whether it was rewritten: `''` when it does not exist. */
function stamp(file: string): string {
  const s = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
  return s ? `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : '';
}

/** A checkout's snapshot tree, and when it was brought forward from the last look's, what moved since. */
export interface SnapshotLook {
  tree: string;
  moved?: { from: string; diff: RawDiff };
}

/** Files whose change changes how git reads other files (which are ignored, how content is cleaned). */
const RULES = new Set(['.gitignore', '.gitattributes']);

/** Folders of checkers still alive, removed when the process exits if nobody disposed them. */
const live = new Set<string>();
process.once('exit', () => {
  for (const dir of live) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * The snapshot trees of checkouts looked at again and again (loop/snapshot.ts's tree, seeded from
 * the checkout's index), through one index per checkout kept between looks. A look runs
 * `git add --all` on the kept index: git lstat()s each file, hashes only those whose stat data
 * changed, and rewrites the index only when something changed. When it did not, the tree is the
 * last look's; when it did, `write-tree` gives the new one (and, for a watched checker, a diff of
 * the two trees says what moved).
 *
 * Where the indexes are kept:
 * - a checker kept for many looks (the extension, `mam monitor`): in a private folder, in memory,
 *   removed on dispose;
 * - one-look checkers (`mam conflicts`, the MCP tool; `persist`): in the checkout's own git folder
 *   (`mam-overlap/index` and `state.json`: keptIndexFiles.ts), for the next process's look. Each
 *   look works on a private copy of the kept index and puts it back by a rename, so two at once never
 *   write one index; the state names the index it was written from by its inode, size and time,
 *   so a state and an index from two processes never pass for a pair. A git folder MAM cannot
 *   write to gets the one look without keeping. Removing the worktree removes its kept index.
 *
 * The kept index must give the tree a one-off snapshot would (the checkout's index copied, then
 * `git add --all`). The two can only part where ignore rules or attributes are involved, so the
 * index is seeded again from the checkout's own, exactly as a one-off snapshot is, when:
 * - the checkout's own index, or the repository's info/exclude or info/attributes, changed;
 * - a `.gitignore` or `.gitattributes` moved (a file the kept index took in while untracked may be
 *   ignored now; a file unchanged since the last look may be read differently);
 * - a path the kept index dropped since its seeding is there again (a file the checkout's index
 *   tracks although it is ignored: `git add --all` does not take an ignored file in again).
 *   `git add --verbose` names what it drops; output git prints in a form that cannot be read
 *   (a path with a line break) keeps nothing.
 * Not seen: ignore rules and attributes from files git ignores, and from the user's own config
 * (core.excludesFile, core.attributesFile) changed while the checker runs or between looks.
 */
export class SnapshotIndexes implements Disposable {
  private dir: string | undefined;
  private disposed = false;
  private readonly kept = new Map<string, Kept>();

  /** `persist`: one look per checker, the indexes kept in the checkouts' git folders for the next one. */
  constructor(private readonly options: { persist?: boolean } = {}) {}

  /** `folders` (relative to the top, '' the top itself): nothing moved outside them since the last look (a watch said so): git looks only there. */
  async look(location: CheckoutLocation, folders?: readonly string[]): Promise<SnapshotLook> {
    const seedIndex = path.join(location.gitDir, 'index');
    const info = path.join(location.commonDir, 'info');
    const seed = [seedIndex, path.join(info, 'exclude'), path.join(info, 'attributes')].map(stamp).join(' ');
    if (this.options.persist) return this.lookKept(location, seed);
    const kept = this.kept.get(location.toplevel);
    if (kept !== undefined && kept.seed === seed && !cameBack(location.toplevel, kept.removed)) {
      const brought = await bringForward(location.toplevel, kept, { folders, diff: true }).catch(() => undefined);
      if (brought !== undefined) return brought;
    }
    const index = kept?.index ?? path.join(this.folder(), `${createHash('sha256').update(location.toplevel).digest('hex').slice(0, 16)}.index`);
    this.kept.delete(location.toplevel);
    const { tree, staged } = await writeFreshTree(location.toplevel, index, { seedIndex });
    if (staged !== undefined) this.kept.set(location.toplevel, { index, seed, written: indexStamp(index), tree, removed: new Set(staged.removed) });
    return { tree };
  }

  /** A look of a one-look checker: from the index the checkout's git folder keeps, if it holds, and kept there for the next. */
  private async lookKept(location: CheckoutLocation, seed: string): Promise<SnapshotLook> {
    const store = new KeptIndexFiles(location.gitDir);
    const copy = store.privateCopy() ?? path.join(this.folder(), `${createHash('sha256').update(location.toplevel).digest('hex').slice(0, 16)}.index`);
    try {
      const stored = store.read(seed);
      if (stored !== undefined && !cameBack(location.toplevel, stored.removed) && store.copyIndex(stored.written, copy)) {
        const copied = indexStamp(copy);
        const kept: Kept = { ...stored, index: copy, written: copied };
        const brought = await bringForward(location.toplevel, kept, { diff: false }).catch(() => undefined);
        if (brought !== undefined) {
          // git rewrote the copy: it goes in place for the next look.
          if (kept.written !== copied) store.keep(kept);
          return { tree: brought.tree };
        }
      }
      const { tree, staged } = await writeFreshTree(location.toplevel, copy, { seedIndex: path.join(location.gitDir, 'index') });
      if (staged !== undefined) store.keep({ index: copy, seed, written: indexStamp(copy), tree, removed: new Set(staged.removed) });
      return { tree };
    } finally {
      fs.rmSync(copy, { force: true });
    }
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

/**
 * The kept index brought to the working tree (in `folders` only, when given); undefined when it
 * must be seeded again. `diff`: what moved since its last tree, from one `git diff-tree`.
 */
async function bringForward(checkout: string, kept: Kept, options: { folders?: readonly string[]; diff: boolean }): Promise<SnapshotLook | undefined> {
  const staged = await stageWorktree(checkout, kept.index, options.folders);
  if (staged === undefined || [...staged.added, ...staged.removed].some((p) => RULES.has(path.posix.basename(p)))) return undefined;
  for (const p of staged.removed) kept.removed.add(p);
  if (kept.removed.size > MAX_REMOVED) return undefined;
  if (indexStamp(kept.index) === kept.written) return { tree: kept.tree };
  const tree = (await git(checkout, ['write-tree'], { GIT_INDEX_FILE: kept.index })).trim();
  const from = kept.tree;
  Object.assign(kept, { written: indexStamp(kept.index), tree });
  if (!options.diff) return { tree };
  return { tree, moved: { from, diff: parseRaw(await git(checkout, ['diff-tree', '-r', '-z', '--no-renames', from, tree])) } };
}

/** Whether a path the kept index dropped is in the working tree again. */
function cameBack(checkout: string, removed: ReadonlySet<string>): boolean {
  for (const p of removed) if (isThere(checkout, p)) return true;
  return false;
}

/** Whether the path is in the working tree (a dangling symlink is). */
function isThere(checkout: string, file: string): boolean {
  return fs.lstatSync(path.join(checkout, file), { throwIfNoEntry: false }) !== undefined;
}
