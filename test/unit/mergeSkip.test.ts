import { strict as assert } from 'node:assert';
import { changedSide, mergeCannotConflict } from '../../src/core/overlap/mergeSkip';

/** The rule by which the overlap checker leaves out a merge that cannot conflict (git's own merge is checked in test/integration/overlapMergeSkip.test.ts). */
describe('overlap: when two sides\' changes cannot conflict', () => {
  const m = (entries: Record<string, string> = {}) => changedSide(new Map(Object.entries(entries)));

  it('holds for edits, additions and type changes of different paths, folders beside each other included', () => {
    assert.equal(mergeCannotConflict(m({ 'src/a.ts': 'M', 'src/new.ts': 'A' }), m({ 'src/b.ts': 'M', 'lib/x/y.ts': 'A', 'bin/run': 'T' })), true);
    assert.equal(mergeCannotConflict(m({ 'src/a': 'A' }), m({ 'src/ab/c.ts': 'A', 'src/a.ts': 'M' })), true, 'a name that only starts like a folder');
  });

  it('does not hold for a shared path, a deletion on either side, or a path above one of the other side at any depth', () => {
    assert.equal(mergeCannotConflict(m({ 'a.ts': 'M' }), m({ 'a.ts': 'M' })), false);
    assert.equal(mergeCannotConflict(m({ 'a.ts': 'D' }), m({ 'b.ts': 'M' })), false);
    assert.equal(mergeCannotConflict(m({ 'a.ts': 'M' }), m({ 'b.ts': 'D' })), false);
    assert.equal(mergeCannotConflict(m({ 'src/x': 'A' }), m({ 'src/x/y/z.ts': 'A' })), false);
    assert.equal(mergeCannotConflict(m({ 'src/x/y/z.ts': 'A' }), m({ src: 'A' })), false);
  });
});
