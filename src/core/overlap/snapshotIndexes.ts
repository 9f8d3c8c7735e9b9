import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Disposable } from '../base/disposable';
import { gitExec } from '../base/git';
import { git, MAM_OWN_FILES, stageWorktree } from '../loop/snapshot';
import type { CheckoutLocation } from './checkouts';
import { parseRaw, type RawDiff } from './rawDiff';

/** What a file's stat says about whether it was rewritten: `''` when it does not exist. */
function stamp(file: string): string {
  const s = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
  return s ? `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : '';
}

interface Kept {
  index: string;
  /** The checkout's own index and the repository's info/exclude and info/attributes as they were when `index` was seeded. */
  seed: string;
  /** `index` as it was right after `tree` was written from it. */
  written: string;
  tree: string;
  /** Paths the seed tracks although an ignore rule matches them, and whether each was there at the last look. */
  ignoredTracked: Map<string, boolean>;
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
 * the checkout's index), through one temporary index per checkout kept between looks in a private
 * folder, removed on dispose. A look runs `git add --all` on the kept index: git lstat()s each file
 * and rewrites the index only when something changed. When it did not, the tree is the last look's;
 * when it did, `write-tree` gives the new one and a diff of the two trees says what moved.
 *
 * The kept index must give the tree a one-off snapshot would (the checkout's index copied, then
 * `git add --all`). The two can only part where ignore rules or attributes are involved, so the
 * index is seeded again from the checkout's own, exactly as a one-off snapshot is, when:
 * - the checkout's own index, or the repository's info/exclude or info/attributes, changed;
 * - a `.gitignore` or `.gitattributes` moved (a file the kept index took in while untracked may be
 *   ignored now; a file unchanged since the last look may be read differently);
 * - a file the checkout's index tracks although it is ignored came back after being deleted (the
 *   kept index dropped it, and `git add --all` does not take in an ignored file again).
 * Not seen: ignore rules and attributes from files git ignores, and from the user's own config
 * (core.excludesFile, core.attributesFile) changed while the checker runs.
 */
export class SnapshotIndexes implements Disposable {
  private dir: string | undefined;
  private disposed = false;
  private readonly kept = new Map<string, Kept>();

  /** `keep: false` (one look only): no index is kept for a next look, so what keeping needs is not read. */
  constructor(private readonly options: { keep?: boolean } = {}) {}

  /** `folders` (relative to the top, '' the top itself): nothing moved outside them since the last look (a watch said so): git looks only there. */
  async look(location: CheckoutLocation, folders?: readonly string[]): Promise<SnapshotLook> {
    const seedIndex = path.join(location.gitDir, 'index');
    const info = path.join(location.commonDir, 'info');
    const seed = [seedIndex, path.join(info, 'exclude'), path.join(info, 'attributes')].map(stamp).join(' ');
    const kept = this.kept.get(location.toplevel);
    if (kept !== undefined && kept.seed === seed && !cameBack(location.toplevel, kept.ignoredTracked)) {
      const brought = await this.bringForward(location.toplevel, kept, folders).catch(() => undefined);
      if (brought !== undefined) return brought;
    }
    const index = kept?.index ?? path.join(this.folder(), `${createHash('sha256').update(location.toplevel).digest('hex').slice(0, 16)}.index`);
    this.kept.delete(location.toplevel);
    const ignoredTracked = this.options.keep === false ? undefined : await listIgnoredTracked(location.toplevel, seedIndex);
    await stageWorktree(location.toplevel, index, { seedIndex, fresh: true });
    const tree = (await git(location.toplevel, ['write-tree'], { GIT_INDEX_FILE: index })).trim();
    // Without the seed's list (one look only, no index yet, or one git cannot read), the next look seeds again.
    if (ignoredTracked !== undefined) this.kept.set(location.toplevel, { index, seed, written: stamp(index), tree, ignoredTracked });
    return { tree };
  }

  /** The kept index brought to the working tree; undefined when it must be seeded again. */
  private async bringForward(checkout: string, kept: Kept, folders?: readonly string[]): Promise<SnapshotLook | undefined> {
    // Only where something moved, when that is known: `git add --all -- FOLDER` looks at every
    // entry under it and every untracked file in it, and an index entry outside cannot have
    // changed. A folder git matches nothing in (only ignored files) fails the add: then everywhere.
    const only = folders?.length ? await gitExec(checkout, ['add', '--all', '--', ...folders.map((f) => (f === '' ? '.' : `:(literal)${f}`)), ...MAM_OWN_FILES], { env: { GIT_INDEX_FILE: kept.index } }) : undefined;
    if (only?.exitCode !== 0) await stageWorktree(checkout, kept.index);
    if (stamp(kept.index) === kept.written) return { tree: kept.tree };
    const tree = (await git(checkout, ['write-tree'], { GIT_INDEX_FILE: kept.index })).trim();
    const diff = parseRaw(await git(checkout, ['diff-tree', '-r', '-z', '--no-renames', kept.tree, tree]));
    if ([...diff.keys()].some((p) => RULES.has(path.posix.basename(p)))) return undefined;
    const from = kept.tree;
    Object.assign(kept, { written: stamp(kept.index), tree });
    return { tree, moved: { from, diff } };
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
 * The paths `seedIndex` tracks that an ignore rule matches, each with whether it is there now; or
 * undefined when there is no such index or git cannot read it. Read only: `ls-files` writes nothing.
 */
async function listIgnoredTracked(checkout: string, seedIndex: string): Promise<Map<string, boolean> | undefined> {
  if (!fs.existsSync(seedIndex)) return undefined;
  const out = await git(checkout, ['ls-files', '-z', '--cached', '--ignored', '--exclude-standard', '--', '.', ...MAM_OWN_FILES], { GIT_INDEX_FILE: seedIndex }).catch(() => undefined);
  if (out === undefined) return undefined;
  return new Map(out.split('\0').filter((p) => p !== '').map((p) => [p, isThere(checkout, p)]));
}

/** Whether one of those paths is there again after it was gone at the last look; records what is there now. */
function cameBack(checkout: string, ignoredTracked: Map<string, boolean>): boolean {
  let back = false;
  for (const [p, was] of ignoredTracked) {
    const is = isThere(checkout, p);
    if (is && !was) back = true;
    ignoredTracked.set(p, is);
  }
  return back;
}

/** Whether the path is in the working tree (a dangling symlink is). */
function isThere(checkout: string, file: string): boolean {
  return fs.lstatSync(path.join(checkout, file), { throwIfNoEntry: false }) !== undefined;
}
