/**
 * The two ways a look of the overlap checker learns a pair's merge without asking git: merges that
 * cannot conflict (mergeSkip.ts) and outcomes that carry over from the last look (mergeCarry.ts).
 * Each records what it found in the checker's MergePredictor, which then answers it as if merged.
 */
import type { ChangeReader } from './checkoutChanges';
import { outcomeCarries } from './mergeCarry';
import { changedSide, mergeCannotConflict, type ChangedSide } from './mergeSkip';
import type { MergeOutcome, MergePredictor } from './mergePrediction';
import type { PathStatuses } from './nameStatus';
import type { CheckoutChanges } from './overlapReport';
import { statusesOf } from './rawDiff';

/** What the shortcuts read of the checker: its git reader, its merges, and its last look. */
export interface MergeShortcuts {
  changes: ChangeReader;
  merges: MergePredictor;
  /** A checkout's snapshot commit at the last look. */
  lastCommit(checkout: string): string | undefined;
  /** What moved in a checkout since the last look, where that is known. */
  moved(checkout: string): PathStatuses | undefined;
}

/**
 * Pairs that share no file and whose merge cannot conflict (mergeSkip.ts) are recorded as merged
 * cleanly, without git: in a first look most pairs of many checkouts are such. Needs the two
 * HEADs' merge-bases, which the git that found the bases named (a pair whose are not known is
 * merged).
 */
export function skipCleanMerges(ctx: MergeShortcuts, candidates: ReadonlyArray<readonly [CheckoutChanges, CheckoutChanges]>, commits: ReadonlyArray<readonly [string, string]>, shared: ReadonlyArray<readonly string[]>): void {
  const sides = new Map<CheckoutChanges, ChangedSide | undefined>();
  const sideOf = (c: CheckoutChanges): ChangedSide | undefined => {
    if (!sides.has(c)) {
      const diff = ctx.changes.ownFilesDiffer(c.base, c.tree) ? undefined : ctx.changes.knownDiff(c.base, c.tree);
      sides.set(c, diff && changedSide(statusesOf(diff)));
    }
    return sides.get(c);
  };
  for (const [i, [a, b]] of candidates.entries()) {
    if (shared[i]!.length > 0 || a.base !== b.base || ctx.merges.known(commits[i]!)) continue;
    const bases = ctx.changes.knownMergeBases(a.head, b.head);
    if (bases?.length !== 1 || bases[0] !== a.base) continue;
    const [x, y] = [sideOf(a), sideOf(b)];
    if (x && y && mergeCannotConflict(x, y)) ctx.merges.carry(commits[i]!, { conflicts: [] });
  }
}

/**
 * Where only one side of a pair moved since the last look, its merge's outcome is carried over
 * instead of merged again where mergeCarry.ts shows git's answer is the same. The merge-bases of
 * the HEADs this needs are asked all at once.
 */
export async function carryOutcomes(ctx: MergeShortcuts, candidates: ReadonlyArray<readonly [CheckoutChanges, CheckoutChanges]>, commits: ReadonlyArray<readonly [string, string]>): Promise<void> {
  const carriable: Array<{ pair: readonly [string, string]; moved: CheckoutChanges; still: CheckoutChanges; paths: PathStatuses; outcome: MergeOutcome; heads: readonly [string, string] }> = [];
  for (const [i, [a, b]] of candidates.entries()) {
    const now = commits[i]!;
    if (ctx.merges.known(now) || a.base !== b.base) continue;
    const [was, wasB] = [ctx.lastCommit(a.checkout), ctx.lastCommit(b.checkout)];
    if (was === undefined || wasB === undefined) continue;
    let moved: CheckoutChanges, still: CheckoutChanges, previous: readonly [string, string];
    if (was !== now[0] && wasB === now[1]) [moved, still, previous] = [a, b, [was, now[1]]];
    else if (was === now[0] && wasB !== now[1]) [moved, still, previous] = [b, a, [now[0], wasB]];
    else continue;
    const paths = ctx.moved(moved.checkout);
    const outcome = ctx.merges.known(previous);
    if (paths && outcome) carriable.push({ pair: now, moved, still, paths, outcome, heads: [a.head, b.head] });
  }
  if (carriable.length === 0) return;
  const bases = await ctx.changes.mergeBasesOf(carriable[0]!.moved.checkout, carriable.map((c) => c.heads));
  for (const [i, { pair, moved, still, paths, outcome }] of carriable.entries()) {
    if (bases[i]!.length !== 1 || bases[i]![0] !== moved.base) continue;
    const [own, other] = await Promise.all([ctx.changes.statuses(moved.checkout, moved.base, moved.tree), ctx.changes.statuses(still.checkout, still.base, still.tree)]);
    if (outcomeCarries(outcome, paths, own, other)) ctx.merges.carry(pair, outcome);
  }
}
