import type { Disposable } from '../base/disposable';
import { git, MAM_OWN_FILES } from '../loop/snapshot';
import type { CheckoutLocation } from './checkouts';
import { parseLineRanges } from './lineRanges';
import type { LineRange } from './overlapReport';
import { SnapshotIndexes } from './snapshotIndexes';

const DIFF = ['diff', '--no-ext-diff', '--no-textconv', '--no-color', '--no-renames'] as const;

/**
 * A checkout's changes against its base, with what does not change between two looks remembered
 * (merge-bases by HEAD, file lists and line ranges by base and tree). Nothing in the checkout
 * changes: the tree is written through a temporary index of its own (snapshotIndexes.ts).
 */
export class ChangeReader implements Disposable {
  private readonly bases = new Map<string, string>();
  private readonly fileLists = new Map<string, string[]>();
  private readonly ranges = new Map<string, LineRange[]>();
  private readonly indexes = new SnapshotIndexes();

  /** The tree of the checkout's working tree as it stands (loop/snapshot.ts's, seeded from its index). */
  snapshot(location: CheckoutLocation): Promise<string> {
    return this.indexes.tree(location);
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
    const key = `${base} ${tree}`;
    let files = this.fileLists.get(key);
    if (files === undefined) {
      const out = await git(checkout, [...DIFF, '--name-only', '-z', base, tree, '--', '.', ...MAM_OWN_FILES]);
      files = out.split('\0').filter((f) => f !== '');
      this.fileLists.set(key, files);
    }
    return files;
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
    for (const k of this.fileLists.keys()) if (!pairs.has(k)) this.fileLists.delete(k);
    for (const k of this.ranges.keys()) if (!pairs.has(k.split(' ').slice(0, 2).join(' '))) this.ranges.delete(k);
  }

  /** Deletes the temporary indexes. */
  dispose(): void {
    this.indexes.dispose();
  }
}
