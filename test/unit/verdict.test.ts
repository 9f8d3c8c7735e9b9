import { strict as assert } from 'node:assert';
import { agrees } from '../../src/core/jobs/compositeJobs';
import { hasVerdictLine, rebuttalOf, verdictOf } from '../../src/core/loop/verdict';

describe('verdicts, rebuttals and agreement are read strictly', () => {
  it('PASS only when [VERDICT: PASS] stands alone on the last non-empty line', () => {
    assert.equal(verdictOf('# Review\n\nAll good.\n\n[VERDICT: PASS]\n'), 'PASS');
    assert.equal(verdictOf('All good.\r\n[VERDICT: PASS]\r\n\r\n  \n'), 'PASS', 'CRLF and trailing blank lines');
    assert.equal(verdictOf('  [VERDICT: PASS]  '), 'PASS', 'surrounding whitespace on the line');
  });

  it('anything else is NOT PASS', () => {
    for (const report of [
      '',
      'Looks fine to me.',
      '[VERDICT: PASS]\nbut one more thing: the test is missing.',
      'Verdict: [VERDICT: PASS]',
      '**[VERDICT: PASS]**',
      '[VERDICT: pass]',
      '[VERDICT:PASS]',
      '[VERDICT: PASS] (mostly)',
      '[VERDICT: NOT PASS]',
      '[VERDICT: PASS]\n[VERDICT: NOT PASS]',
    ]) {
      assert.equal(verdictOf(report), 'NOT PASS', JSON.stringify(report));
    }
  });

  it('tells a missing verdict line from an explicit one', () => {
    assert.equal(hasVerdictLine('ok\n[VERDICT: NOT PASS]'), true);
    assert.equal(hasVerdictLine('ok\n[VERDICT: PASS]'), true);
    assert.equal(hasVerdictLine('ok, PASS'), false);
  });

  it('finds a rebuttal anywhere in the answer, and its reason', () => {
    assert.equal(rebuttalOf('I looked.\n[REBUT: the input is validated upstream]\nThanks.'), 'the input is validated upstream');
    assert.equal(rebuttalOf('[REBUT:   spaces trimmed  ]'), 'spaces trimmed');
    assert.equal(rebuttalOf('Fixed it.'), undefined);
    assert.equal(rebuttalOf('[REBUT: ]'), undefined, 'an empty reason is no rebuttal');
  });

  it('agreement is [AGREE] alone on the last line', () => {
    assert.equal(agrees('Fine by me.\n[AGREE]\n'), true);
    assert.equal(agrees('[AGREE] but change step 2'), false);
    assert.equal(agrees('[AGREE]\nActually, no.'), false);
  });
});
