import { strict as assert } from 'node:assert';
import { markerOf, normalize } from '../../src/core/mux/inject';

describe('screen matching of typed text', () => {
  it('matches typed text on a screen that wrapped it, boxed it, or cut a wide character', () => {
    const text = '한국어로 된 아주 긴 줄입니다 and some ASCII at the end 끝';
    const screen = '╭────────────╮\n│ > 한국어로 된 아주 긴 줄입 │\n│ 니다 and some ASCII at t │\n│ he end 끝                  │\n╰────────────╯';
    assert.ok(normalize(screen).includes(markerOf(text)));
    assert.equal([...markerOf(text)].length, 24);
    assert.ok([...markerOf(text)].every((c) => c.length > 0));
    assert.equal(markerOf('   '), '');
  });
});
