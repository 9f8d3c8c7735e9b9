import type { MergeOutcome } from './mergePrediction';
import type { PathStatuses } from './nameStatus';

/**
 * One side X of a pair changed its tree since the last look (TX → TX'), nothing else did: same
 * HEADs, the other side Y the same snapshot commit, and one merge-base m of the two HEADs that is
 * also the base both sides' changes are counted from. Then git's merge of X' and Y has the outcome
 * the merge of X and Y had when every path p that moved between TX and TX':
 * - was modified (M), neither added, deleted nor changed in type: X's added and deleted paths,
 *   all rename detection ever pairs, and their contents stay as they were;
 * - exists in m (X's own change of it against m is M, or it has none): so it is no added file
 *   whose content could make or break a rename on X's side;
 * - is untouched by Y against m, and is not among the conflicts: the three-way merge of p takes
 *   X's side cleanly, as it did, and nothing on Y's side (a rename into p, a deletion) involves it.
 * Every other path merges from the same three versions as before, with the same renames. An
 * outcome that was an error is never carried: it is asked again.
 */
export function outcomeCarries(previous: MergeOutcome, moved: PathStatuses, changedSide: PathStatuses, otherSide: PathStatuses): boolean {
  if (!('conflicts' in previous) || moved.size === 0) return false;
  const conflicts = new Set(previous.conflicts);
  for (const [p, status] of moved) {
    if (status !== 'M') return false;
    const own = changedSide.get(p);
    if (own !== undefined && own !== 'M') return false;
    if (otherSide.has(p) || conflicts.has(p)) return false;
  }
  return true;
}
