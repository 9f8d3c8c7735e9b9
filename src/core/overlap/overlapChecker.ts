import * as os from 'node:os';
import { isoOn, systemClock, type Clock } from '../base/clock';
import type { Disposable } from '../base/disposable';
import type { Event } from '../base/emitter';
import { printable } from '../base/ids';
import type { SessionRow } from '../store/sessionSchema';
import { ChangeReader } from './checkoutChanges';
import { CheckoutWatches } from './checkoutWatches';
import { CheckoutLocator, repositoryHeads, type CheckoutLocation, type RepositoryHeads } from './checkouts';
import { readLookMemo, writeLookMemo, type LookMemo } from './lookMemo';
import { MergePredictor } from './mergePrediction';
import { carryOutcomes, skipCleanMerges, type MergeShortcuts } from './mergeShortcuts';
import type { PathStatuses } from './nameStatus';
import { statusesOf } from './rawDiff';
import type { SnapshotLook } from './snapshotIndexes';
import type { CheckoutChanges, OverlapFile, OverlapPair, OverlapReport, SkippedSession } from './overlapReport';

export interface OverlapCheckerOptions {
  /** How many checkouts are read at once (default: two more than the cores, at least 4). */
  concurrency?: number;
  /** What a report's `computed_at` is stamped with (the watcher's clock; default the system's). */
  clock?: Clock;
  /**
   * Watch the checkouts compared (a watch per folder, checkoutWatches.ts), so that a look asks git
   * only about the checkouts where something moved since the last one: for a checker kept for many
   * looks. Without it (a one-shot `mam conflicts`), each look reads every checkout.
   */
  watch?: boolean | { maxFolders?: number; fullEveryMs?: number };
  /**
   * One look only (`mam conflicts`, the MCP tool): what the next process's look can use is left in
   * the repository's git folders — each checkout's snapshot index (snapshotIndexes.ts) and the
   * merges and line ranges found (lookMemo.ts) — so that a look after one change asks git about
   * that change; the first look ever reads everything.
   */
  oneShot?: boolean;
}

/** What the last look read: the checkouts git was asked about, and the repositories whose HEADs it listed. */
export interface LookWork {
  read: string[];
  listed: string[];
}

/**
 * Computes the overlap report for the live sessions of a registry. Checkouts of one repository
 * (same common git folder) are compared pairwise; a repository with one checkout in use has no
 * pair and costs nothing. Each look costs per checkout one `git add --all` into a temporary index
 * the checker keeps (snapshotIndexes.ts) — with `watch`, only per checkout whose watch saw
 * something move — per repository one `git worktree list` (with `watch`, only when a HEAD may have
 * moved), and, only for what changed since the last look, a `write-tree`, a diff, a snapshot
 * commit, line ranges and one batched `git merge-tree`. When one checkout's tree moved, what moved is diffed against its last
 * tree: line ranges of files that did not move are kept, and a pair's merge is not asked again when
 * git's answer cannot have changed (mergeCarry.ts). Keep one checker for repeated looks, and
 * dispose of it: that deletes its temporary indexes. Looks asked for at once run one after the other.
 */
export class OverlapChecker implements Disposable {
  private readonly locator = new CheckoutLocator();
  private readonly changes: ChangeReader;
  private readonly merges = new MergePredictor();
  private readonly concurrency: number;
  private readonly oneShot: boolean;
  private readonly clock: Clock;
  private readonly watches: CheckoutWatches | undefined;
  /** Something a watched checker watches moved: a look now would read it (never fires without `watch`). */
  readonly onDidMove: Event<void>;
  /** What the last look read (tests and the benchmark show that a look read only what moved). */
  lastWork: LookWork = { read: [], listed: [] };
  /** How many merges the last look asked git for (the others were known, carried, or could not conflict). */
  lastMerges = 0;

  constructor(options: OverlapCheckerOptions = {}) {
    // Two more than the cores: starting a git blocks this process until the new one runs (Node
    // forks, then waits for the exec), so between two gits of a checkout the next is late by as
    // much; with two more in flight the cores stay busy meanwhile (measured: docs/benchmarks.md).
    this.concurrency = Math.max(1, options.concurrency ?? Math.max(2, os.cpus().length) + 2);
    this.clock = options.clock ?? systemClock;
    this.oneShot = options.oneShot === true;
    this.changes = new ChangeReader({ persist: this.oneShot });
    const watch = options.watch === true ? {} : options.watch || undefined;
    this.watches = watch && new CheckoutWatches({ clock: this.clock, ...watch });
    this.onDidMove = this.watches?.onDidMove ?? (() => ({ dispose() {} }));
  }

  private queue: Promise<unknown> = Promise.resolve();

  check(rows: readonly SessionRow[]): Promise<OverlapReport> {
    const look = this.queue.then(() => this.look(rows));
    this.queue = look.catch(() => undefined);
    return look;
  }

  dispose(): void {
    this.watches?.dispose();
    this.changes.dispose();
  }

  private async look(rows: readonly SessionRow[]): Promise<OverlapReport> {
    this.snapshotCommits.clear();
    this.moved.clear();
    this.lastWork = { read: [], listed: [] };
    const mergesBefore = this.merges.asked;
    const located = await this.locator.locate(rows);
    this.watches?.beginLook();
    const skipped: SkippedSession[] = [...located.skipped];
    const checkouts: CheckoutChanges[] = [];
    const pairs: OverlapPair[] = [];
    const compared = new Map<string, { signature: string; pairs: OverlapPair[] }>();
    for (const [commonDir, byTop] of located.repositories) {
      if (byTop.size < 2) continue;
      if (this.oneShot) this.recall(readLookMemo(commonDir));
      const found = await this.readRepository(commonDir, [...byTop.values()], skipped);
      checkouts.push(...found);
      // The same checkouts in the same state as at the last look (nothing moved): the same pairs.
      const signature = found.map((c) => [c.checkout, c.sessions.join(','), c.head, c.base, c.tree].join('\0')).sort().join('\n');
      const last = this.compared.get(commonDir);
      const same = last?.signature === signature && !last.pairs.some((p) => p.merge_error !== undefined);
      compared.set(commonDir, same ? last : { signature, pairs: await this.comparePairs(found) });
      pairs.push(...compared.get(commonDir)!.pairs);
      if (this.oneShot) writeLookMemo(commonDir, this.memoOf(found));
    }
    const unchanged = compared.size === this.compared.size && [...compared].every(([dir, c]) => this.compared.get(dir) === c);
    this.compared = compared;
    // What no checkout uses any more is forgotten (nothing to forget when nothing changed, or after the one look).
    if (!unchanged && !this.oneShot) {
      this.changes.retain(checkouts);
      this.merges.retain(new Set(this.snapshotCommits.values()));
    }
    this.watches?.retain(new Set(checkouts.map((c) => c.checkout)));
    for (const commonDir of this.heads.keys()) if (!located.repositories.has(commonDir)) this.heads.delete(commonDir);
    this.lastMerges = this.merges.asked - mergesBefore;
    this.lastWork.read.sort(cmp);
    this.lastWork.listed.sort(cmp);
    this.last = new Map(checkouts.map((c) => [c.checkout, { head: c.head, base: c.base, tree: c.tree, commit: this.snapshotCommits.get(c.checkout) }]));
    checkouts.sort((x, y) => cmp(x.checkout, y.checkout));
    pairs.sort((x, y) => cmp(x.a.checkout, y.a.checkout) || cmp(x.b.checkout, y.b.checkout));
    skipped.sort((x, y) => cmp(x.session, y.session));
    return { computed_at: isoOn(this.clock), checkouts, pairs, skipped };
  }

  /** What an earlier one-look checker found at this repository (lookMemo.ts): known, not asked again. */
  private recall(memo: LookMemo): void {
    // (Keys are two object IDs: lookMemo.ts reads nothing else.)
    for (const [pair, conflicts] of Object.entries(memo.merges)) {
      const [x = '', y = ''] = pair.split(' ');
      this.merges.carry([x, y], { conflicts });
    }
    for (const [key, byFile] of Object.entries(memo.ranges)) {
      const [base = '', tree = ''] = key.split(' ');
      this.changes.recallRanges(base, tree, byFile);
    }
  }

  /** What this look found at a repository that the next one-look checker can use: its merges and line ranges. */
  private memoOf(checkouts: readonly CheckoutChanges[]): LookMemo {
    const memo: LookMemo = { merges: {}, ranges: {} };
    // In comparePairs' order: by checkout.
    const commits = [...checkouts].sort((x, y) => cmp(x.checkout, y.checkout)).flatMap((c) => this.snapshotCommits.get(c.checkout) ?? []);
    for (const [i, x] of commits.entries()) {
      for (const y of commits.slice(i + 1)) {
        const outcome = this.merges.known([x, y]);
        if (outcome !== undefined && 'conflicts' in outcome) memo.merges[`${x} ${y}`] = outcome.conflicts;
      }
    }
    for (const c of checkouts) {
      const ranges = this.changes.knownRanges(c.base, c.tree);
      if (Object.keys(ranges).length > 0) memo.ranges[`${c.base} ${c.tree}`] = ranges;
    }
    return memo;
  }

  /** Snapshot commits of this look, by checkout. */
  private readonly snapshotCommits = new Map<string, string>();
  /** Each checkout as the last look found it. */
  private last = new Map<string, { head: string; base: string; tree: string; commit: string | undefined }>();
  /** This look's checkouts whose tree moved on the same HEAD and base since the last look: the paths that moved. */
  private readonly moved = new Map<string, PathStatuses>();
  /** Each repository's pairs at the last look, and the state of its checkouts they were computed from. */
  private compared = new Map<string, { signature: string; pairs: OverlapPair[] }>();
  /** Each repository's HEADs as last listed (kept while watched: listed again when a watch says they may have moved). */
  private readonly heads = new Map<string, RepositoryHeads>();

  /** The repository's HEADs: listed again unless its watch says nothing moved and every checkout is in the last listing. */
  private async headsOf(commonDir: string, anyCheckout: string, tops: readonly string[]): Promise<RepositoryHeads> {
    const known = this.heads.get(commonDir);
    // Asked first, whatever is known: the answer is forgotten, so a move while git lists is the next look's.
    const moved = this.watches?.headsMoved(commonDir) ?? true;
    if (!moved && known && tops.every((t) => known.checkouts.has(t))) return known;
    this.lastWork.listed.push(commonDir);
    try {
      const heads = await repositoryHeads(anyCheckout, commonDir);
      this.heads.set(commonDir, heads);
      return heads;
    } catch (err) {
      this.heads.delete(commonDir);
      throw err;
    }
  }

  /** The checkout's snapshot tree: the last look's when its watch says nothing in it moved since. */
  private async snapshotOf(location: CheckoutLocation): Promise<SnapshotLook> {
    const before = this.last.get(location.toplevel);
    // Asked right before git reads: a change made while it reads marks the checkout for the next look.
    const moves = (await this.watches?.checkoutMoved(location)) ?? { moved: true };
    if (!moves.moved && before) return { tree: before.tree };
    this.lastWork.read.push(location.toplevel);
    try {
      return await this.changes.snapshot(location, moves.folders);
    } catch (err) {
      this.watches?.markCheckout(location.toplevel);
      throw err;
    }
  }

  private async readRepository(commonDir: string, found: ReadonlyArray<{ location: CheckoutLocation; sessions: string[] }>, skipped: SkippedSession[]): Promise<CheckoutChanges[]> {
    const skip = (sessions: readonly string[], why: string): void => {
      for (const session of sessions) skipped.push({ session, why });
    };
    const cwd = found[0]!.location.toplevel;
    // While the snapshots are read (as many at once as there are cores): git lists the worktrees,
    // then one git finds every merge-base.
    const listed = this.headsOf(commonDir, cwd, found.map((f) => f.location.toplevel)).then(async (heads) => {
      const known = found.flatMap((f) => heads.checkouts.get(f.location.toplevel)?.head ?? []);
      const bases = await this.changes.basesOf(cwd, known, heads.mainline);
      return { heads, baseOf: new Map(known.map((h, i) => [h, bases[i]!])) };
    }).then((found) => found, (err: unknown) => ({ err }));
    const snapshots = new Map<string, { look: SnapshotLook } | { err: unknown }>();
    await forEachLimited(found, this.concurrency, async ({ location }) => {
      snapshots.set(location.toplevel, await this.snapshotOf(location).then((look) => ({ look }), (err: unknown) => ({ err })));
    });
    const listing = await listed;
    if ('err' in listing) {
      for (const { sessions } of found) skip(sessions, reason(listing.err));
      return [];
    }
    const { heads, baseOf } = listing;
    const ready: Array<{ location: CheckoutLocation; sessions: string[]; head: string; branch: string | null; look: SnapshotLook }> = [];
    for (const { location, sessions } of found) {
      const known = heads.checkouts.get(location.toplevel);
      const snapshot = snapshots.get(location.toplevel)!;
      if (!known?.head) skip(sessions, known ? 'its checkout has no commits yet' : 'git does not list its checkout as a worktree of the repository');
      else if ('err' in snapshot) skip(sessions, reason(snapshot.err));
      else ready.push({ location, sessions, head: known.head, branch: known.branch, look: snapshot.look });
    }
    if (ready.length === 0) return [];
    // Then one git for all the diffs against the bases (none for a diff that follows from the last
    // look's and what moved since).
    const bases = ready.map((r) => baseOf.get(r.head)!);
    for (const [i, { location, head, look }] of ready.entries()) {
      const before = this.last.get(location.toplevel);
      if (look.moved && before && look.moved.from === before.tree && before.head === head && before.base === bases[i]) {
        const paths = statusesOf(look.moved.diff);
        this.moved.set(location.toplevel, paths);
        this.changes.compose(bases[i]!, before.tree, look.tree, look.moved.diff);
        this.changes.carryRanges(bases[i]!, before.tree, look.tree, paths);
      }
    }
    // Checkouts read afresh (not brought forward from the last look) will be merged: their snapshot
    // commits are written while git diffs.
    const fresh = ready.filter((r) => r.look.moved === undefined && !this.moved.has(r.location.toplevel) && this.lastWork.read.includes(r.location.toplevel));
    if (fresh.length > 1) this.merges.prewrite(cwd, fresh.map((r) => this.merges.commit(r.look.tree, r.head)));
    const diffs = await this.changes.diffsOf(cwd, ready.map((r, i) => [bases[i]!, r.look.tree] as const));
    const out: CheckoutChanges[] = [];
    for (const [i, { location, sessions, head, branch, look }] of ready.entries()) {
      const diff = diffs[i]!;
      if (diff instanceof Error) {
        skip(sessions, reason(diff));
        continue;
      }
      const files = [...diff.keys()];
      // Its snapshot commit's ID (written only if a merge needs it).
      if (files.length > 0) this.snapshotCommits.set(location.toplevel, this.merges.commit(look.tree, head));
      out.push({ sessions, checkout: location.toplevel, branch, head, base: bases[i]!, tree: look.tree, files });
    }
    return out;
  }

  /** Every pair of checkouts with changes on both sides: shared files, and the merge git predicts. */
  private async comparePairs(checkouts: readonly CheckoutChanges[]): Promise<OverlapPair[]> {
    const sorted = checkouts.filter((c) => c.files.length > 0).sort((x, y) => cmp(x.checkout, y.checkout));
    if (sorted.length < 2) return [];
    const candidates: Array<[CheckoutChanges, CheckoutChanges]> = [];
    for (let i = 0; i < sorted.length; i++) for (let j = i + 1; j < sorted.length; j++) candidates.push([sorted[i]!, sorted[j]!]);
    const commits = candidates.map(([a, b]) => [this.snapshotCommits.get(a.checkout)!, this.snapshotCommits.get(b.checkout)!] as const);
    const fileSets = new Map(sorted.map((c) => [c, new Set(c.files)]));
    const shared = candidates.map(([a, b]) => {
      const inB = fileSets.get(b)!;
      return a.files.filter((f) => inB.has(f));
    });
    const shortcuts: MergeShortcuts = { changes: this.changes, merges: this.merges, lastCommit: (c) => this.last.get(c)?.commit, moved: (c) => this.moved.get(c) };
    await carryOutcomes(shortcuts, candidates, commits);
    skipCleanMerges(shortcuts, candidates, commits, shared);
    // The merges and the line ranges of the files both sides change, at once (a conflict in a file
    // only one side changed, as a rename against an edit, asks for its own ranges afterwards).
    const sharedSides = new Map<CheckoutChanges, Set<string>>();
    for (const [i, [a, b]] of candidates.entries()) {
      if (shared[i]!.length === 0) continue;
      for (const side of [a, b]) {
        const files = sharedSides.get(side) ?? new Set<string>();
        for (const f of shared[i]!) files.add(f);
        sharedSides.set(side, files);
      }
    }
    const [outcomes] = await Promise.all([
      this.merges.predict(sorted[0]!.checkout, commits),
      this.changes.lineRanges(sorted[0]!.checkout, [...sharedSides].map(([c, files]) => ({ base: c.base, tree: c.tree, files: [...files] }))),
    ]);

    const pairs: Array<{ a: CheckoutChanges; b: CheckoutChanges; paths: string[]; conflicts: Set<string>; error?: string }> = [];
    for (const [i, [a, b]] of candidates.entries()) {
      const outcome = outcomes[i]!;
      const conflicts = new Set('conflicts' in outcome ? outcome.conflicts : []);
      if (shared[i]!.length === 0 && conflicts.size === 0) continue;
      pairs.push({ a, b, paths: [...new Set([...shared[i]!, ...conflicts])].sort(cmp), conflicts, ...('error' in outcome ? { error: outcome.error } : {}) });
    }

    // Line ranges only for files some pair holds (known by now but for conflicts in files one side alone changed).
    const wanted = new Map<CheckoutChanges, Set<string>>();
    for (const p of pairs) {
      for (const side of [p.a, p.b]) {
        const changed = new Set(side.files);
        const set = wanted.get(side) ?? new Set();
        for (const f of p.paths) if (changed.has(f)) set.add(f);
        wanted.set(side, set);
      }
    }
    const ranges = new Map<CheckoutChanges, Map<string, OverlapFile['a_lines']>>();
    const sides = [...wanted];
    const found = await this.changes.lineRanges(sorted[0]!.checkout, sides.map(([c, files]) => ({ base: c.base, tree: c.tree, files: [...files] })));
    for (const [i, [c]] of sides.entries()) ranges.set(c, found[i]!);
    return pairs.map(({ a, b, paths, conflicts, error }) => ({
      a: { sessions: a.sessions, checkout: a.checkout },
      b: { sessions: b.sessions, checkout: b.checkout },
      kind: conflicts.size > 0 ? 'conflict' : 'overlap',
      files: paths.map((path) => ({ path, a_lines: ranges.get(a)?.get(path) ?? [], b_lines: ranges.get(b)?.get(path) ?? [], conflict: conflicts.has(path) })),
      ...(error === undefined ? {} : { merge_error: printable(error) }),
    }));
  }
}

/** Runs `fn` over `items`, at most `limit` at a time. */
async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function cmp(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

function reason(err: unknown): string {
  return printable(err instanceof Error ? err.message : String(err));
}
