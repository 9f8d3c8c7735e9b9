import type { Disposable } from '../base/disposable';
import { git, MAM_OWN_FILES } from '../loop/snapshot';
import type { CheckoutLocation } from './checkouts';
import { parseLineRanges } from './lineRanges';
import type { LineRange } from './overlapReport';
import { parseNameStatus, type PathStatuses } from './nameStatus';
import { SnapshotIndexes, type SnapshotLook } from './snapshotIndexes';

const DIFF = ['diff', '--no-ext-diff', '--no-textconv', '--no-color', '--no-renames'] as const;

/**
 * A checkout's changes against its base, with what does not change between two looks remembered
 * (merge-bases by HEAD, file lists and line ranges by base and tree). Nothing in the checkout
 * changes: the tree is written through a temporary index of its own (snapshotIndexes.ts).
 */
export class ChangeReader implements Disposable {
  private readonly bases = new Map<string, string>();
  private readonly mergeBaseLists = new Map<string, string[]>();
  private readonly fileLists = new Map<string, Map<string, string>>();
  private readonly ranges = new Map<string, LineRange[]>();
  private readonly indexes = new SnapshotIndexes();

  /** The tree of the checkout's working tree as it stands (loop/snapshot.ts's, seeded from its index), and what moved since the last look. */
  snapshot(location: CheckoutLocation): Promise<SnapshotLook> {
    return this.indexes.look(location);
  }

  /** The merge-base of `head` and the main line (`head` itself when they share no history). */
  async base(checkout: string, head: string, mainline: string | undefined): Promise<string> {
    if (mainline === undefined || mainline === head) return head;
    const key = `${head} ${mainline}`;
    let base = this.bases.get(key);
    if (base === undefined) {
      base = (await git(checkout, ['merge-base', head, mainline]).catch(() => head)).trim() || head;
      this.bases.set(key, base);
    }
    return base;
  }

  /** The paths that differ between base and tree, MAM's own files left out. */
  async files(checkout: string, base: string, tree: string): Promise<string[]> {
    return [...(await this.statuses(checkout, base, tree)).keys()];
  }

  /** The same paths with their status letters (M, A, D, T; renames are not looked for). */
  async statuses(checkout: string, base: string, tree: string): Promise<PathStatuses> {
    const key = `${base} ${tree}`;
    let statuses = this.fileLists.get(key);
    if (statuses === undefined) {
      statuses = parseNameStatus(await git(checkout, [...DIFF, '--name-status', '-z', base, tree, '--', '.', ...MAM_OWN_FILES]));
      this.fileLists.set(key, statuses);
    }
    return statuses;
  }

  /** Every merge-base of two commits (`git merge-base --all`; more than one after criss-cross merges). */
  async mergeBases(checkout: string, x: string, y: string): Promise<readonly string[]> {
    const key = `${x} ${y}`;
    let bases = this.mergeBaseLists.get(key);
    if (bases === undefined) {
      bases = (await git(checkout, ['merge-base', '--all', x, y]).catch(() => '')).split('\n').filter((l) => l !== '');
      this.mergeBaseLists.set(key, bases);
    }
    return bases;
  }

  /** Line ranges of files that did not move between two trees on one base are the same: known for `to` too. */
  carryRanges(base: string, from: string, to: string, moved: PathStatuses): void {
    const prefix = `${base} ${from} `;
    for (const [k, ranges] of [...this.ranges]) {
      if (!k.startsWith(prefix)) continue;
      const file = k.slice(prefix.length);
      if (!moved.has(file)) this.ranges.set(`${base} ${to} ${file}`, ranges);
    }
  }

  /** Base-side line ranges of `files` (each one changed between base and tree): one `git diff -U0` for those not known yet. */
  async lineRanges(checkout: string, base: string, tree: string, files: readonly string[]): Promise<Map<string, LineRange[]>> {
    const key = (f: string): string => `${base} ${tree} ${f}`;
    const missing = files.filter((f) => !this.ranges.has(key(f)));
    if (missing.length > 0) {
      const literal = missing.map((f) => `:(literal)${f}`);
      const parsed = parseLineRanges(await git(checkout, [...DIFF, '-U0', base, tree, '--', ...literal]));
      for (const f of missing) this.ranges.set(key(f), parsed.get(f) ?? []);
    }
    return new Map(files.map((f) => [f, this.ranges.get(key(f))!]));
  }

  /** Forgets what no current checkout uses, so a long-running watcher's memory stays bounded. */
  retain(live: ReadonlyArray<{ checkout: string; head: string; base: string; tree: string }>): void {
    this.indexes.retain(new Set(live.map((c) => c.checkout)));
    const heads = new Set(live.map((c) => c.head));
    const pairs = new Set(live.map((c) => `${c.base} ${c.tree}`));
    for (const k of this.bases.keys()) if (!heads.has(k.split(' ')[0]!)) this.bases.delete(k);
    for (const k of this.mergeBaseLists.keys()) if (!k.split(' ').every((h) => heads.has(h))) this.mergeBaseLists.delete(k);
    for (const k of this.fileLists.keys()) if (!pairs.has(k)) this.fileLists.delete(k);
    for (const k of this.ranges.keys()) if (!pairs.has(k.split(' ').slice(0, 2).join(' '))) this.ranges.delete(k);
  }

  /** Deletes the temporary indexes. */
  dispose(): void {
    this.indexes.dispose();
  }
}
