import { strict as assert } from 'node:assert';
import { splitWords } from '../../src/core/base/words';
import { markerOf, normalize } from '../../src/core/mux/inject';

describe('command words and screen matching', () => {
  it('splits a command line into words without interpreting anything', () => {
    assert.deepEqual(splitWords('node  /x/agent.js --as claude'), ['node', '/x/agent.js', '--as', 'claude']);
    assert.deepEqual(splitWords(`say 'it''s' "a \\"b\\" \\\\c" d\\ e`), ['say', 'its', 'a "b" \\c', 'd e']);
    assert.deepEqual(splitWords('echo $(rm -rf ~) | cat > x; `y` *'), ['echo', '$(rm', '-rf', '~)', '|', 'cat', '>', 'x;', '`y`', '*']);
    assert.deepEqual(splitWords(`'' ""`), ['', '']);
    // What brief.ts writes: double quotes in which a backslash escapes " \ $ and `.
    assert.deepEqual(splitWords('node "/a b/c.js" event started --workspace "/x\\"y\\$z\\`w\\\\v"'), ['node', '/a b/c.js', 'event', 'started', '--workspace', '/x"y$z`w\\v']);
    assert.deepEqual(splitWords('"a\\nb"'), ['a\\nb'], 'other backslashes in double quotes stay');
    assert.deepEqual(splitWords('  '), []);
    assert.throws(() => splitWords("echo 'open"), /unterminated '/);
    assert.throws(() => splitWords('trailing\\'), /cannot end with a backslash/);
  });

  it('matches typed text on a screen that wrapped it, boxed it, or cut a wide character', () => {
    const text = '한국어로 된 아주 긴 줄입니다 and some ASCII at the end 끝';
    const screen = '╭────────────╮\n│ > 한국어로 된 아주 긴 줄입 │\n│ 니다 and some ASCII at t │\n│ he end 끝                  │\n╰────────────╯';
    assert.ok(normalize(screen).includes(markerOf(text)));
    assert.equal([...markerOf(text)].length, 24);
    assert.ok([...markerOf(text)].every((c) => c.length > 0));
    assert.equal(markerOf('   '), '');
  });
});
