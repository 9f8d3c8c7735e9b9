import { strict as assert } from 'node:assert';
import { composeRaw, parseRaw, splitStdinDiffs, type RawChange } from '../../src/core/overlap/rawDiff';

const file = (oid: string, mode = '100644') => ({ mode, oid: oid.repeat(40).slice(0, 40) });

describe('raw diffs: parsing, and base → tree composed from the last look and what moved', () => {
  it('parses raw records: both sides, an added and a deleted path, a path with spaces', () => {
    const z = '0'.repeat(40);
    const out = [`:100644 100644 ${'a'.repeat(40)} ${'b'.repeat(40)} M`, 'src/a.ts', `:000000 100644 ${z} ${'c'.repeat(40)} A`, 'new file.ts', `:100644 000000 ${'d'.repeat(40)} ${z} D`, 'gone.ts', ''].join('\0');
    assert.deepEqual(Object.fromEntries(parseRaw(out)), {
      'src/a.ts': { status: 'M', from: file('a'), to: file('b') },
      'new file.ts': { status: 'A', to: file('c') },
      'gone.ts': { status: 'D', from: file('d') },
    });
  });

  it('composes exactly what a diff of the base and the new tree says', () => {
    // base → from: a.ts modified, b.ts added, c.ts deleted, d.ts modified.
    const baseToFrom = new Map<string, RawChange>([
      ['a.ts', { status: 'M', from: file('1'), to: file('2') }],
      ['b.ts', { status: 'A', to: file('3') }],
      ['c.ts', { status: 'D', from: file('4') }],
      ['d.ts', { status: 'M', from: file('5'), to: file('6') }],
    ]);
    // from → to: a.ts back to the base's content, b.ts deleted again, c.ts back as a symlink,
    // e.ts (unchanged against the base until now) made executable, f.ts new, d.ts edited again.
    const fromToTo = new Map<string, RawChange>([
      ['a.ts', { status: 'M', from: file('2'), to: file('1') }],
      ['b.ts', { status: 'D', from: file('3') }],
      ['c.ts', { status: 'A', to: file('4', '120000') }],
      ['e.ts', { status: 'M', from: file('7'), to: file('7', '100755') }],
      ['f.ts', { status: 'A', to: file('8') }],
      ['d.ts', { status: 'M', from: file('6'), to: file('9') }],
    ]);
    const composed = composeRaw(baseToFrom, fromToTo);
    assert.deepEqual([...composed.keys()], ['c.ts', 'd.ts', 'e.ts', 'f.ts'], "git's order; a.ts and b.ts are as at the base again");
    assert.deepEqual(Object.fromEntries(composed), {
      'c.ts': { status: 'T', from: file('4'), to: file('4', '120000') },
      'd.ts': { status: 'M', from: file('5'), to: file('9') },
      'e.ts': { status: 'M', from: file('7'), to: file('7', '100755') },
      'f.ts': { status: 'A', to: file('8') },
    });
  });

  it('splits diff-tree --stdin output by its headers, empty diffs and repeated pairs included', () => {
    const [t1, t2, t3] = ['1'.repeat(40), '2'.repeat(40), '3'.repeat(40)];
    const rec = `:100644 100644 ${'a'.repeat(40)} ${'b'.repeat(40)} M\0x.ts\0`;
    const out = `${t1} ${t2}\n${rec}${t1} ${t1}\n${t1} ${t3}\n${rec}${t1} ${t3}\n${rec}`;
    assert.deepEqual(splitStdinDiffs(out, [[t1, t2], [t1, t1], [t1, t3], [t1, t3]]), [rec, '', rec, rec]);
    assert.throws(() => splitStdinDiffs(out, [[t1, t3]]), /unexpected git diff-tree --stdin output/);
  });
});
