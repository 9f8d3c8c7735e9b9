import { strict as assert } from 'node:assert';
import {
  canMoveLoop, canMoveRound, LOOP_STATUSES, MAX_STALE_ROUNDS, nextAfter, ROUND_STATUSES, type RoundStatus,
} from '../../src/core/loop/loopLifecycle';

/** Every pair of states: the move is allowed exactly when it is one of `allowed` (16 pairs for 4 states). */
function checkEveryMove<S extends string>(states: readonly S[], can: (from: S, to: S) => boolean, allowed: readonly string[]): void {
  let checked = 0;
  for (const from of states) {
    for (const to of states) {
      assert.equal(can(from, to), allowed.includes(`${from}→${to}`), `${from} → ${to}`);
      checked++;
    }
  }
  assert.equal(checked, states.length * states.length);
}

describe('the loop table', () => {
  it('a round goes reviewing → passed | not_passed | stale, and nowhere else', () => {
    checkEveryMove(ROUND_STATUSES, canMoveRound, ['reviewing→passed', 'reviewing→not_passed', 'reviewing→stale']);
  });

  it('a loop goes running → passed | failed | cancelled, and an ended loop never moves again', () => {
    checkEveryMove(LOOP_STATUSES, canMoveLoop, ['running→passed', 'running→failed', 'running→cancelled']);
  });

  it('the states are the ones the state file may hold', () => {
    assert.deepEqual([...ROUND_STATUSES].sort(), ['not_passed', 'passed', 'reviewing', 'stale']);
    assert.deepEqual([...LOOP_STATUSES].sort(), ['cancelled', 'failed', 'passed', 'running']);
  });
});

describe('what follows a judged round', () => {
  const rounds = (...statuses: RoundStatus[]) => statuses.map((status) => ({ status }));

  it('a passed round ends the loop passed, whatever came before', () => {
    for (const before of [rounds(), rounds('not_passed', 'stale'), rounds('stale', 'stale', 'stale')]) {
      assert.deepEqual(nextAfter({ status: 'passed' }, [...before, { status: 'passed' }], 3), { do: 'end', status: 'passed', reason: null });
    }
  });

  it('a not-passed round is fixed until it is the last round allowed; stale rounds do not count', () => {
    assert.deepEqual(nextAfter({ status: 'not_passed' }, rounds('not_passed'), 3), { do: 'fix' });
    assert.deepEqual(nextAfter({ status: 'not_passed' }, rounds('not_passed', 'not_passed'), 3), { do: 'fix' });
    assert.deepEqual(nextAfter({ status: 'not_passed' }, rounds('not_passed', 'not_passed', 'not_passed'), 3), { do: 'end', status: 'failed', reason: 'max_loop' });
    assert.deepEqual(nextAfter({ status: 'not_passed' }, rounds('stale', 'stale', 'not_passed', 'not_passed'), 3), { do: 'fix' });
    assert.deepEqual(nextAfter({ status: 'not_passed' }, rounds('not_passed'), 1), { do: 'end', status: 'failed', reason: 'max_loop' });
  });

  it(`a stale round is reviewed again, until more than ${MAX_STALE_ROUNDS} were stale`, () => {
    const stale = (n: number) => rounds(...Array.from({ length: n }, (): RoundStatus => 'stale'));
    for (let n = 1; n <= MAX_STALE_ROUNDS; n++) assert.deepEqual(nextAfter({ status: 'stale' }, stale(n), 3), { do: 'review_again' }, `${n} stale`);
    assert.deepEqual(nextAfter({ status: 'stale' }, stale(MAX_STALE_ROUNDS + 1), 3), { do: 'end', status: 'failed', reason: 'tree_keeps_changing' });
    assert.deepEqual(nextAfter({ status: 'stale' }, rounds('not_passed', 'not_passed', 'not_passed', 'stale'), 3), { do: 'review_again' }, 'judged rounds do not make a stale one the last');
  });

  it('a round still under review has no next step', () => {
    assert.throws(() => nextAfter({ status: 'reviewing' }, rounds('reviewing'), 3), /no next step/);
  });
});
