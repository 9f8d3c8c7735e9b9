import { strict as assert } from 'node:assert';
import { PANE_TEXT_LINES, sinceJobLine } from '../../src/core/jobs/paneText';

describe("a job's pane text: from its line to its end", () => {
  const line = (id: string) => `› MAM job ${id}: read the brief at /w/.mam/jobs/${id}/brief.md and follow it exactly.`;

  it('starts at the last time the job line shows, and stops at the next job\'s line', () => {
    const text = ['old output', line('j-1'), 'echoed once', line('j-1'), 'work of j-1', line('j-2'), 'work of j-2', ''].join('\n');
    assert.equal(sinceJobLine(text, 'j-1'), `${[line('j-1'), 'work of j-1'].join('\n')}\n`);
    assert.equal(sinceJobLine(text, 'j-2'), `${[line('j-2'), 'work of j-2'].join('\n')}\n`);
  });

  it('keeps everything captured, bounded, when the job line scrolled out', () => {
    const many = Array.from({ length: PANE_TEXT_LINES + 10 }, (_, i) => `line ${i}`).join('\n');
    const kept = sinceJobLine(many, 'j-9').trimEnd().split('\n');
    assert.equal(kept.length, PANE_TEXT_LINES);
    assert.equal(kept.at(-1), `line ${PANE_TEXT_LINES + 9}`);
  });

  it('drops the blank lines of the screen below the output', () => {
    assert.equal(sinceJobLine(`${line('j-3')}\ndone\n\n\n   \n`, 'j-3'), `${line('j-3')}\ndone\n`);
  });
});
