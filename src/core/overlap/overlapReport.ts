/**
 * What `mam conflicts --json`, the monitor and the extension's views see. Field names are snake_case,
 * like the job record's, and this shape is the JSON as printed.
 */

/** Lines of the base (the old side of `git diff -U0`), first and last, inclusive. A pure insertion is `[n, n]`: the base line it follows (0: the top). */
export type LineRange = [number, number];

/** One checkout with running sessions in it, and what changed there since its base. */
export interface CheckoutChanges {
  /** The sessions whose folder is in this checkout, by name. */
  sessions: string[];
  /** The checkout's top folder (real path). */
  checkout: string;
  /** The branch checked out (`refs/heads/…` shortened), or null on a detached HEAD. */
  branch: string | null;
  head: string;
  /** The merge-base of HEAD and the repository's main line: what its changes are counted from. */
  base: string;
  /** The tree of its working tree now, uncommitted and untracked (not ignored) files included. */
  tree: string;
  /** Paths that differ between base and tree, MAM's own files left out. */
  files: string[];
}

export interface PairSide {
  sessions: string[];
  checkout: string;
}

export interface OverlapFile {
  path: string;
  /** Lines of the base this side changed in the file (empty when it is binary or the other side only conflicts on it). */
  a_lines: LineRange[];
  b_lines: LineRange[];
  /** `git merge-tree` reports this file conflicted when the two trees are merged. */
  conflict: boolean;
}

/** Two checkouts whose changes touch the same files (`overlap`), or would not merge cleanly (`conflict`). */
export interface OverlapPair {
  a: PairSide;
  b: PairSide;
  kind: 'conflict' | 'overlap';
  files: OverlapFile[];
  /** Set when the merge could not be predicted (git failed); the pair then stays an overlap. */
  merge_error?: string;
}

export interface SkippedSession {
  session: string;
  why: string;
}

export interface OverlapReport {
  computed_at: string;
  checkouts: CheckoutChanges[];
  pairs: OverlapPair[];
  skipped: SkippedSession[];
}

/** A stable key for a pair: the two checkouts, in order. */
export function pairKey(pair: Pick<OverlapPair, 'a' | 'b'>): string {
  return `${pair.a.checkout}\0${pair.b.checkout}`;
}
