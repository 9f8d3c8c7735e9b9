import type { PathStatuses } from './nameStatus';

/** One side's changes against the base, as the rule below reads them (worked out once per checkout). */
export interface ChangedSide {
  paths: PathStatuses;
  /** Whether a path is deleted. */
  deletes: boolean;
  /** Every folder a changed path is in (`a`, `a/b` for `a/b/c.ts`). */
  folders: ReadonlySet<string>;
}

export function changedSide(paths: PathStatuses): ChangedSide {
  const folders = new Set<string>();
  let deletes = false;
  for (const [p, status] of paths) {
    if (status === 'D') deletes = true;
    for (let cut = p.indexOf('/'); cut >= 0; cut = p.indexOf('/', cut + 1)) folders.add(p.slice(0, cut));
  }
  return { paths, deletes, folders };
}

/**
 * Whether git's merge of two snapshot commits X and Y is clean without asking git, given one
 * merge-base m of their HEADs that is also the base both sides' changes are counted from (so `x`
 * and `y` are exactly what X and Y change against m), and MAM's own files the same on both sides
 * as in m (the changes leave them out). Then the merge is clean when:
 * - no path is changed on both sides: each path merges by taking the one side that changed it,
 *   without reading its content (no content merge, no merge driver, no attribute is consulted);
 * - no side deletes a path: without a deletion there is no rename for git to detect (a rename
 *   pairs a path deleted on one side with one added on that side; merges detect no copies and
 *   break no file), so no rename conflict and no directory rename moving the other side's files;
 * - no path one side changes is a folder above a path the other changes: the only other way two
 *   sides' changes collide (a file added where the other side adds a folder of that name; the
 *   other ways to put a file where a folder was, or the reverse, delete a path).
 * Anything else is merged by git.
 */
export function mergeCannotConflict(x: ChangedSide, y: ChangedSide): boolean {
  if (x.deletes || y.deletes) return false;
  const [small, large] = x.paths.size <= y.paths.size ? [x, y] : [y, x];
  for (const p of small.paths.keys()) if (large.paths.has(p)) return false;
  // A side's changes sit in few folders: asked of the other side's paths, not the reverse.
  for (const [side, other] of [[x, y], [y, x]] as const) {
    for (const folder of other.folders) if (side.paths.has(folder)) return false;
  }
  return true;
}
