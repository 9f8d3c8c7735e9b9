import type { Disposable } from '../base/disposable';
import { gitExec } from '../base/git';
import { git } from '../loop/snapshot';
import type { CheckoutLocation } from './checkouts';
import { parseLineRanges } from './lineRanges';
import type { LineRange } from './overlapReport';
import type { PathStatuses } from './nameStatus';
import { composeRaw, parseRaw, splitStdinDiffs, statusesOf, type RawChange, type RawDiff } from './rawDiff';
import { SnapshotIndexes, type SnapshotLook } from './snapshotIndexes';

const DIFF_TREE = ['diff-tree', '--stdin', '--always', '-r', '-z', '--no-renames'] as const;
// --full-index: each patch's `index` line names whole object IDs, so git does not read every
// loose-object folder to find the shortest unique ones (no line of it is read here).
const PATCH = ['diff-tree', '--stdin', '--always', '-r', '-p', '-U0', '--full-index', '--no-ext-diff', '--no-textconv', '--no-color', '--no-renames'] as const;

/**
 * Checkouts' changes against their bases, with what does not change between two looks remembered
 * (merge-bases by HEAD, diffs and line ranges by base and tree). Nothing in a checkout changes: the
 * tree is written through a temporary index of its own (snapshotIndexes.ts). What git is asked, it
 * is asked for every checkout of a repository at once — one `rev-parse` for the merge-bases, one
 * `diff-tree --stdin` for the diffs, one for the line ranges — and a diff that follows from the
 * last look's and what moved since is composed without git (rawDiff.ts).
 */
export class ChangeReader implements Disposable {
  private readonly bases = new Map<string, string>();
  private readonly baseTrees = new Map<string, string>();
  private readonly mergeBaseLists = new Map<string, string[]>();
  private readonly diffs = new Map<string, RawDiff>();
  /** The diffs (by `base tree`) in which MAM's own files differ: left out of the diff, but the trees' merge has them. */
  private readonly ownDiffer = new Set<string>();
  private readonly ranges = new Map<string, LineRange[]>();
  private readonly indexes: SnapshotIndexes;

  /** `persist`: one look only, the snapshot indexes kept on disk for the next process (snapshotIndexes.ts). */
  constructor(options: { persist?: boolean } = {}) {
    this.indexes = new SnapshotIndexes(options);
  }

  /**
   * The tree of the checkout's working tree as it stands (loop/snapshot.ts's, seeded from its
   * index), and what moved since the last look; `folders`: nothing moved outside these since then.
   */
  snapshot(location: CheckoutLocation, folders?: readonly string[]): Promise<SnapshotLook> {
    return this.indexes.look(location, folders);
  }

  /**
   * The merge-base of each HEAD and the main line (the HEAD itself when they share no history, or
   * when there is no main line): one `git rev-parse H...M …` for those not known (it names every
   * merge-base; after criss-cross merges there are several, and `git merge-base` picks one).
   */
  async basesOf(checkout: string, heads: readonly string[], mainline: string | undefined): Promise<string[]> {
    if (mainline === undefined) return [...heads];
    const key = (head: string): string => `${head} ${mainline}`;
    const todo = [...new Set(heads.filter((h) => h !== mainline && !this.bases.has(key(h))))];
    // The same git names every merge-base of two HEADs not known yet (mergeBasesOf's): with them a
    // merge that cannot conflict is known without merging (mergeSkip.ts).
    const distinct = [...new Set(heads)].sort();
    const headPairs = distinct.flatMap((x, i) => distinct.slice(i + 1).map((y) => [x, y] as const)).filter((p) => !this.mergeBaseLists.has(pairKey(p)));
    // And the main line's tree, for the diffs against the bases: most often it is the base.
    const found = await this.symmetric(checkout, [...todo.map((h) => [h, mainline] as const), ...headPairs], this.baseTrees.has(mainline) ? undefined : mainline);
    if (found) for (const [i, pair] of headPairs.entries()) this.mergeBaseLists.set(pairKey(pair), found[todo.length + i]!);
    for (const [i, head] of todo.entries()) {
      const all = found?.[i];
      if (all?.length === 1) this.bases.set(key(head), all[0]!);
      else if (all?.length === 0) this.bases.set(key(head), head);
      else this.bases.set(key(head), (await git(checkout, ['merge-base', head, mainline]).catch(() => head)).trim() || head);
    }
    return heads.map((h) => (h === mainline ? h : this.bases.get(key(h))!));
  }

  /** Composes the diff `base → to` from the one `base → from` (if known) and what moved from `from` to `to`. */
  compose(base: string, from: string, to: string, moved: RawDiff): void {
    const earlier = this.diffs.get(`${base} ${from}`);
    if (earlier === undefined || this.diffs.has(`${base} ${to}`)) return;
    this.diffs.set(`${base} ${to}`, composeRaw(earlier, moved));
    // (A kept index never takes MAM's own files in: only a seeding, which diffs afresh, moves them.)
    if (this.ownDiffer.has(`${base} ${from}`) || [...moved.keys()].some(isOwnFile)) this.ownDiffer.add(`${base} ${to}`);
  }

  /** The diff `base → tree` if known (diffsOf's, MAM's own files left out). */
  knownDiff(base: string, tree: string): RawDiff | undefined {
    return this.diffs.get(`${base} ${tree}`);
  }

  /** Every merge-base of two commits if known (basesOf names those of every two HEADs). */
  knownMergeBases(x: string, y: string): readonly string[] | undefined {
    return x === y ? [x] : this.mergeBaseLists.get(pairKey([x, y]));
  }

  /** Whether MAM's own files (`.mam/`, `.mam.env`) differ between base and tree: the diff leaves them out, a merge of the trees does not. */
  ownFilesDiffer(base: string, tree: string): boolean {
    return this.ownDiffer.has(`${base} ${tree}`);
  }

  /**
   * The diff `base → tree` of each pair, MAM's own files left out: those not known, from one
   * `git diff-tree --stdin` (each pair's own `git diff-tree` when that fails, so that one bad pair
   * fails alone). A pair that cannot be diffed is an Error in its place.
   */
  async diffsOf(checkout: string, pairs: ReadonlyArray<readonly [string, string]>): Promise<Array<RawDiff | Error>> {
    const key = ([base, tree]: readonly [string, string]): string => `${base} ${tree}`;
    const todo = [...new Map(pairs.filter((p) => !this.diffs.has(key(p))).map((p) => [key(p), p])).values()];
    const failed = new Map<string, Error>();
    if (todo.length > 0) {
      const lines = await this.treePairs(checkout, todo).catch(() => undefined);
      const out = lines && (await gitExec(checkout, [...DIFF_TREE], { input: lines.map(([x, y]) => `${x} ${y}\n`).join('') }).catch(() => undefined));
      let parts: string[] | undefined;
      try {
        parts = lines && out?.exitCode === 0 ? splitStdinDiffs(out.stdout, lines) : undefined;
      } catch {
        parts = undefined;
      }
      for (const [i, pair] of todo.entries()) {
        if (parts) {
          this.keepDiff(key(pair), parseRaw(parts[i]!));
          continue;
        }
        try {
          this.keepDiff(key(pair), parseRaw(await git(checkout, ['diff-tree', '-r', '-z', '--no-renames', pair[0], pair[1]])));
        } catch (err) {
          failed.set(key(pair), err instanceof Error ? err : new Error(String(err)));
        }
      }
    }
    return pairs.map((p) => this.diffs.get(key(p)) ?? failed.get(key(p))!);
  }

  /** A diff against a base as the report has it: MAM's own files left out (and noted, for mergeSkip.ts). */
  private keepDiff(key: string, diff: Map<string, RawChange>): void {
    for (const p of [...diff.keys()].filter(isOwnFile)) {
      diff.delete(p);
      this.ownDiffer.add(key);
    }
    this.diffs.set(key, diff);
  }

  /** The paths that differ between base and tree with their status letters (M, A, D, T; renames are not looked for). */
  async statuses(checkout: string, base: string, tree: string): Promise<PathStatuses> {
    const [diff] = await this.diffsOf(checkout, [[base, tree]]);
    if (diff instanceof Error) throw diff;
    return statusesOf(diff!);
  }

  /**
   * Every merge-base of each pair of commits (`git merge-base --all`'s; more than one after
   * criss-cross merges): one `git rev-parse X...Y …` for the pairs not known.
   */
  async mergeBasesOf(checkout: string, pairs: ReadonlyArray<readonly [string, string]>): Promise<Array<readonly string[]>> {
    const key = pairKey;
    for (const [x, y] of pairs) if (x === y) this.mergeBaseLists.set(key([x, y]), [x]);
    const todo = [...new Map(pairs.filter((p) => !this.mergeBaseLists.has(key(p))).map((p) => [key(p), p])).values()];
    const found = await this.symmetric(checkout, todo);
    for (const [i, pair] of todo.entries()) {
      this.mergeBaseLists.set(key(pair), found?.[i] ?? (await git(checkout, ['merge-base', '--all', ...pair]).catch(() => '')).split('\n').filter((l) => l !== ''));
    }
    return pairs.map((p) => this.mergeBaseLists.get(key(p))!);
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

  /**
   * Base-side line ranges of each want's files (each changed between its base and tree): one
   * `git diff-tree --stdin -p -U0` for all those not known yet, limited to those files.
   */
  async lineRanges(checkout: string, wants: ReadonlyArray<{ base: string; tree: string; files: readonly string[] }>): Promise<Array<Map<string, LineRange[]>>> {
    const key = (base: string, tree: string, f: string): string => `${base} ${tree} ${f}`;
    const missing = wants.map((w) => w.files.filter((f) => !this.ranges.has(key(w.base, w.tree, f)))).map((files, i) => ({ ...wants[i]!, files })).filter((w) => w.files.length > 0);
    // Many files (a first look): in two gits, one per core — a patch per file is most of the cost.
    const total = missing.reduce((n, w) => n + w.files.length, 0);
    const chunks = total >= RANGES_SPLIT_AT && missing.length > 1 ? halves(missing) : [missing];
    await Promise.all(chunks.filter((c) => c.length > 0).map(async (chunk) => {
      const literal = [...new Set(chunk.flatMap((w) => w.files))].sort().map((f) => `:(literal)${f}`);
      const lines = await this.treePairs(checkout, chunk.map((w) => [w.base, w.tree] as const));
      const r = await gitExec(checkout, [...PATCH, '--', ...literal], { input: lines.map(([x, y]) => `${x} ${y}\n`).join('') });
      if (r.exitCode !== 0) throw new Error(`git diff-tree failed: ${(r.stderr || r.stdout).trim().split('\n')[0]}`);
      for (const [i, part] of splitStdinDiffs(r.stdout, lines).entries()) {
        const parsed = parseLineRanges(part);
        for (const f of chunk[i]!.files) this.ranges.set(key(chunk[i]!.base, chunk[i]!.tree, f), parsed.get(f) ?? []);
      }
    }));
    return wants.map((w) => new Map(w.files.map((f) => [f, this.ranges.get(key(w.base, w.tree, f))!])));
  }

  /** The line ranges known for `base → tree`, by file (for lookMemo.ts). */
  knownRanges(base: string, tree: string): Record<string, LineRange[]> {
    const prefix = `${base} ${tree} `;
    const out: Record<string, LineRange[]> = {};
    for (const [k, ranges] of this.ranges) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = ranges;
    return out;
  }

  /** Line ranges of `base → tree` found by an earlier look (lookMemo.ts): not asked of git again. */
  recallRanges(base: string, tree: string, byFile: Readonly<Record<string, LineRange[]>>): void {
    for (const [file, ranges] of Object.entries(byFile)) this.ranges.set(`${base} ${tree} ${file}`, ranges);
  }

  /** Forgets what no current checkout uses, so a long-running watcher's memory stays bounded. */
  retain(live: ReadonlyArray<{ checkout: string; head: string; base: string; tree: string }>): void {
    this.indexes.retain(new Set(live.map((c) => c.checkout)));
    const heads = new Set(live.map((c) => c.head));
    const bases = new Set(live.map((c) => c.base));
    const pairs = new Set(live.map((c) => `${c.base} ${c.tree}`));
    for (const k of this.bases.keys()) if (!heads.has(k.split(' ')[0]!)) this.bases.delete(k);
    for (const k of this.baseTrees.keys()) if (!bases.has(k)) this.baseTrees.delete(k);
    for (const k of this.mergeBaseLists.keys()) if (!k.split(' ').every((h) => heads.has(h))) this.mergeBaseLists.delete(k);
    for (const k of this.diffs.keys()) if (!pairs.has(k)) this.diffs.delete(k);
    for (const k of this.ownDiffer) if (!pairs.has(k)) this.ownDiffer.delete(k);
    for (const k of this.ranges.keys()) if (!pairs.has(k.split(' ').slice(0, 2).join(' '))) this.ranges.delete(k);
  }

  /** Deletes the temporary indexes. */
  dispose(): void {
    this.indexes.dispose();
  }

  /**
   * Every merge-base of each pair, from one `git rev-parse X...Y …`; undefined when git cannot say
   * (then ask each alone). With `treeOf`, the same git also names that commit's tree (remembered).
   */
  private async symmetric(checkout: string, pairs: ReadonlyArray<readonly [string, string]>, treeOf?: string): Promise<string[][] | undefined> {
    if (pairs.length === 0) return [];
    // Full object IDs only: git's check that none is also a ref name (a warning, one lookup per
    // ref folder and name) changes no answer.
    const r = await gitExec(checkout, ['-c', 'core.warnAmbiguousRefs=false', 'rev-parse', ...pairs.map(([x, y]) => `${x}...${y}`), ...(treeOf ? [`${treeOf}^{tree}`] : [])]).catch(() => undefined);
    if (r?.exitCode !== 0) return undefined;
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    const tree = treeOf ? lines.pop() : undefined;
    const found = symmetricBases(lines, pairs);
    if (found && treeOf && tree && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(tree)) this.baseTrees.set(treeOf, tree);
    return found;
  }

  /** Each `[base commit, tree]` as `[base's tree, tree]` (diff-tree --stdin takes two trees on a line): one `rev-parse` for the base trees not known. */
  private async treePairs(checkout: string, pairs: ReadonlyArray<readonly [string, string]>): Promise<Array<readonly [string, string]>> {
    const todo = [...new Set(pairs.map(([base]) => base).filter((b) => !this.baseTrees.has(b)))];
    if (todo.length > 0) {
      const trees = (await git(checkout, ['rev-parse', ...todo.map((b) => `${b}^{tree}`)])).split('\n').filter((l) => l !== '');
      if (trees.length !== todo.length) throw new Error('git rev-parse gave fewer trees than asked');
      for (const [i, b] of todo.entries()) this.baseTrees.set(b, trees[i]!);
    }
    return pairs.map(([base, tree]) => [this.baseTrees.get(base)!, tree] as const);
  }
}

/** MAM's own files, as loop/snapshot.ts's MAM_OWN_FILES names them: `.mam` and all in it, `.mam.env`, at the top. */
function isOwnFile(p: string): boolean {
  return p === '.mam' || p.startsWith('.mam/') || p === '.mam.env';
}

/** A pair of commits' key for their merge-bases (the same both ways round). */
function pairKey([x, y]: readonly [string, string]): string {
  return x < y ? `${x} ${y}` : `${y} ${x}`;
}

/** From this many files on, line ranges are asked of two gits at once. */
const RANGES_SPLIT_AT = 100;

/** `items` in two runs of about equal file counts, order kept. */
function halves<T extends { files: readonly string[] }>(items: readonly T[]): [T[], T[]] {
  const total = items.reduce((n, w) => n + w.files.length, 0);
  let seen = 0;
  let cut = 0;
  while (cut < items.length - 1 && seen + items[cut]!.files.length <= total / 2) seen += items[cut++]!.files.length;
  return [items.slice(0, Math.max(1, cut)), items.slice(Math.max(1, cut))];
}

/**
 * `git rev-parse X1...Y1 X2...Y2 …` output lines: per argument its two ends, then `^B` for each merge-base
 * (none when the two share no history). Returns each pair's merge-bases, or undefined when the
 * output does not read that way.
 */
function symmetricBases(lines: readonly string[], pairs: ReadonlyArray<readonly [string, string]>): string[][] | undefined {
  const found: string[][] = [];
  let i = 0;
  for (const [x, y] of pairs) {
    const ends = [lines[i], lines[i + 1]];
    if (!ends.includes(x) || !ends.includes(y)) return undefined;
    i += 2;
    const bases: string[] = [];
    while (i < lines.length && lines[i]!.startsWith('^')) bases.push(lines[i++]!.slice(1));
    found.push(bases);
  }
  return i === lines.length ? found : undefined;
}
