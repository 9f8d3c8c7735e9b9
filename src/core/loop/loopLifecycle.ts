/**
 * The review loop as data (SPEC §7), beside the job lifecycle (jobs/lifecycle.ts): which states may
 * follow which, for a round and for the loop, and what the loop does once a round is judged. The
 * runner only looks things up here.
 *
 *   round: reviewing → passed | not_passed | stale
 *   loop:  running → passed | failed | cancelled
 */
export const ROUND_STATUSES = ['reviewing', 'passed', 'not_passed', 'stale'] as const;
export type RoundStatus = (typeof ROUND_STATUSES)[number];

export const LOOP_STATUSES = ['running', 'passed', 'failed', 'cancelled'] as const;
export type LoopStatus = (typeof LOOP_STATUSES)[number];

export const ROUND_TRANSITIONS: Readonly<Record<RoundStatus, readonly RoundStatus[]>> = {
  reviewing: ['passed', 'not_passed', 'stale'],
  passed: [],
  not_passed: [],
  stale: [],
};

export const LOOP_TRANSITIONS: Readonly<Record<LoopStatus, readonly LoopStatus[]>> = {
  running: ['passed', 'failed', 'cancelled'],
  passed: [],
  failed: [],
  cancelled: [],
};

export function canMoveRound(from: RoundStatus, to: RoundStatus): boolean {
  return ROUND_TRANSITIONS[from].includes(to);
}

export function canMoveLoop(from: LoopStatus, to: LoopStatus): boolean {
  return LOOP_TRANSITIONS[from].includes(to);
}

/** A move the table refuses: a bug in the runner, or a state file edited by hand. */
export class LoopTransitionError extends Error {
  constructor(what: 'round' | 'loop', from: string, to: string) {
    super(`a ${what} cannot go from ${from} to ${to}`);
  }
}

/** After so many rounds whose tree changed under review, the loop stops. */
export const MAX_STALE_ROUNDS = 3;

/** What the loop does once a round is judged. */
export type NextStep =
  | { do: 'review_again' }
  | { do: 'fix' }
  | { do: 'end'; status: 'passed' | 'failed'; reason: 'max_loop' | 'tree_keeps_changing' | null };

/**
 * The decision after a round: a stale round is reviewed again (until too many were); a passed
 * one ends the loop; a not-passed one is fixed, unless it was the last round allowed.
 * `rounds` are the loop's rounds so far, this one included.
 */
export function nextAfter(round: { status: RoundStatus }, rounds: ReadonlyArray<{ status: RoundStatus }>, maxLoop: number): NextStep {
  switch (round.status) {
    case 'stale':
      return rounds.filter((r) => r.status === 'stale').length > MAX_STALE_ROUNDS ? { do: 'end', status: 'failed', reason: 'tree_keeps_changing' } : { do: 'review_again' };
    case 'passed':
      return { do: 'end', status: 'passed', reason: null };
    case 'not_passed':
      return rounds.filter((r) => r.status !== 'stale').length >= maxLoop ? { do: 'end', status: 'failed', reason: 'max_loop' } : { do: 'fix' };
    case 'reviewing':
      throw new Error('a round under review has no next step yet');
  }
}
