import { strict as assert } from 'node:assert';
import { loopHintComment, parseLoopHint } from '../../src/core/loop/loopHint';
import { fixPrompt, implementPrompt, reviewPrompt } from '../../src/core/loop/loopPrompts';
import type { LoopState } from '../../src/core/loop/loopState';

describe('the loop hint at the end of a loop job\'s task', () => {
  it("reads each loop prompt's hint: step and round", () => {
    const state = { id: 'l-20261129T000000Z-abcdef', task: 'T', creator: 'c', checkout: '/r', max_rebut: 2, rebuts_used: 0, plan: null } as unknown as LoopState;
    const round = { n: 2, identity: { base: 'a'.repeat(40), head: 'b'.repeat(40), tree: 'c'.repeat(40) }, status: 'reviewing', reviews: [], started_at: '' } as LoopState['rounds'][number];
    assert.deepEqual(parseLoopHint(implementPrompt(state)), { loop: state.id, step: 'implement', round: null });
    assert.deepEqual(parseLoopHint(reviewPrompt(state, round, 'diff --git a/x b/x', undefined)), { loop: state.id, step: 'review', round: 2 });
    assert.deepEqual(parseLoopHint(fixPrompt(state, round, [{ reviewer: 'r', text: 'no' }])), { loop: state.id, step: 'fix', round: 2 });
  });

  it('reads back what it writes, and nothing from a note that is not one', () => {
    for (const hint of [{ loop: 'l-1', step: 'plan', round: null }, { loop: 'l-"x" -->', step: 'fix', round: 3 }] as const) {
      assert.deepEqual(parseLoopHint(`task\n\n${loopHintComment(hint)}`), hint);
    }
    assert.equal(parseLoopHint('no note'), null);
    assert.equal(parseLoopHint('<!-- mam-loop: {not json} -->'), null);
    assert.equal(parseLoopHint('<!-- mam-loop: {"round":1} -->'), null);
  });
});
