import { strict as assert } from 'node:assert';
import { outcomeCarries } from '../../src/core/overlap/mergeCarry';

/** The rule by which a kept overlap checker skips a merge whose answer cannot have changed. */
describe('overlap: when a merge outcome carries over to a moved tree', () => {
  const m = (entries: Record<string, string> = {}) => new Map(Object.entries(entries));
  const clean = { conflicts: [] };

  it('carries when every moved path was modified, exists at the base and the other side left it alone', () => {
    assert.equal(outcomeCarries(clean, m({ 'a.ts': 'M' }), m({ 'a.ts': 'M', 'b.ts': 'A' }), m({ 'c.ts': 'M' })), true);
    assert.equal(outcomeCarries({ conflicts: ['c.ts'] }, m({ 'a.ts': 'M' }), m(), m({ 'c.ts': 'M' })), true, 'moved back to the base: no change of its own');
  });

  it('never carries an added, deleted or retyped path, a file added on the moved side, one the other side changed, a conflicted one, or an error', () => {
    for (const status of ['A', 'D', 'T']) assert.equal(outcomeCarries(clean, m({ 'a.ts': status }), m(), m()), false, status);
    assert.equal(outcomeCarries(clean, m({ 'new.ts': 'M' }), m({ 'new.ts': 'A' }), m()), false, 'an added file may be a rename target');
    assert.equal(outcomeCarries(clean, m({ 'a.ts': 'M' }), m({ 'a.ts': 'M' }), m({ 'a.ts': 'D' })), false);
    assert.equal(outcomeCarries({ conflicts: ['a.ts'] }, m({ 'a.ts': 'M' }), m({ 'a.ts': 'M' }), m()), false);
    assert.equal(outcomeCarries({ error: 'refusing to merge unrelated histories' }, m({ 'a.ts': 'M' }), m(), m()), false);
    assert.equal(outcomeCarries(clean, m(), m(), m()), false, 'nothing moved: nothing to carry');
  });
});
