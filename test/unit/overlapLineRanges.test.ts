import { strict as assert } from 'node:assert';
import { parseLineRanges } from '../../src/core/overlap/lineRanges';

describe('overlap line ranges from git diff -U0', () => {
  it('reads base-side ranges per file: changes, deletions, pure insertions, quoted paths, binary files', () => {
    const diff = [
      'diff --git a/src/app.ts b/src/app.ts',
      'index 1..2 100644',
      '--- a/src/app.ts',
      '+++ b/src/app.ts',
      '@@ -5 +5 @@ function total() {',
      '-old',
      '+new',
      '@@ -10,3 +9,0 @@',
      '@@ -20,0 +18,2 @@',
      'diff --git "a/t\\303\\244b \\"x\\".txt" "b/t\\303\\244b \\"x\\".txt"',
      '@@ -0,0 +1 @@',
      'diff --git a/with space b/with space',
      'Binary files a/with space and b/with space differ',
    ].join('\n');
    assert.deepEqual([...parseLineRanges(diff)], [
      ['src/app.ts', [[5, 5], [10, 12], [20, 20]]],
      ['täb "x".txt', [[0, 0]]],
      ['with space', []],
    ]);
  });
});
