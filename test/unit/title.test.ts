import { strict as assert } from 'node:assert';
import { clampTitle, firstSentence, jobTitle, loopStepTitle, loopTitle, TITLE_MAX, titleFromTask } from '../../src/core/jobs/title';

describe('short titles for jobs and loops', () => {
  it('a task is titled by its first sentence, hard wraps joined, markdown marks dropped', () => {
    assert.equal(titleFromTask('Write the changelog entry'), 'Write the changelog entry');
    assert.equal(titleFromTask('Write the changelog entry. Keep it short.'), 'Write the changelog entry');
    assert.equal(titleFromTask('Is the retry safe? Check it.'), 'Is the retry safe?');
    // The loop label of the issue: a hard-wrapped task used to show only its first line.
    assert.equal(titleFromTask('Add validation to the signup form\nin src/signup.js that accepts only\nreal e-mail addresses. Then test it.'), 'Add validation to the signup form in src/signup.js that…');
    assert.equal(titleFromTask('\n\n## Fix the parser\n\nIt drops the last token.'), 'Fix the parser');
    assert.equal(titleFromTask('- Rename `parseArgs` to **parseOptions**\n- update callers'), 'Rename parseArgs to parseOptions');
    assert.equal(titleFromTask('Fix these bugs:\n- a\n- b'), 'Fix these bugs');
  });

  it('periods inside words, versions and abbreviations do not end the sentence', () => {
    assert.equal(firstSentence('Update src/app.js to v2.0 now. Later more.'), 'Update src/app.js to v2.0 now');
    assert.equal(firstSentence('Use a stable sort, e.g. merge sort. Then measure.'), 'Use a stable sort, e.g. merge sort');
  });

  it('long titles are cut at a word, at most 60 characters, with an ellipsis', () => {
    const long = 'Refactor the payment retry logic so that every failure is retried with exponential backoff and jitter';
    const title = titleFromTask(long);
    assert.ok(title.length <= TITLE_MAX, `${title.length} characters`);
    assert.equal(title, 'Refactor the payment retry logic so that every failure is…');
    assert.ok(long.startsWith(title.slice(0, -1)), 'a prefix of the task, cut between words');
    // One long word is cut inside it rather than left empty.
    assert.equal(clampTitle('x'.repeat(100)).length, TITLE_MAX);
    assert.equal(clampTitle(''), '');
  });

  it("a loop's jobs are titled by their step and round", () => {
    assert.equal(loopStepTitle({ kind: 'plan', round: null, key: 'plan' }), 'Plan');
    assert.equal(loopStepTitle({ kind: 'challenge', round: null, key: 'plan:challenge:2' }), 'Plan · challenge 2');
    assert.equal(loopStepTitle({ kind: 'implement', round: null, key: 'implement' }), 'Implement');
    assert.equal(loopStepTitle({ kind: 'review', round: 2, key: 'r2:review:rev-a' }), 'Review · round 2');
    assert.equal(loopStepTitle({ kind: 'fix', round: 1, key: 'r1:fix' }), 'Fix · round 1');
  });

  it('old records stay readable: the raw prompt line of a loop job reads as its step, others are shortened', () => {
    assert.equal(jobTitle({ id: 'j-1', title: 'Review round 2 of the loop l-20261130T101010Z-abc123: review the changes below for' }), 'Review · round 2');
    assert.equal(jobTitle({ id: 'j-1', title: 'Implement this task in /home/me/repo and commit your changes there (git commit), then report' }), 'Implement');
    assert.equal(jobTitle({ id: 'j-1', title: 'The reviewers did not pass round 1 of your work on this task. Address their findings in' }), 'Fix · round 1');
    assert.equal(jobTitle({ id: 'j-1', title: 'Review the work done for this task (iteration 3 of 3).' }), 'Review · iteration 3');
    const old = 'Add input validation to the signup form in src/signup.js that accepts only real mail';
    assert.equal(jobTitle({ id: 'j-1', title: old }), clampTitle(old));
    assert.equal(jobTitle({ id: 'j-1', title: null }), 'j-1');
    assert.equal(jobTitle({ id: 'j-1' }), 'j-1');
  });

  it('a loop is titled by its title, else by its task', () => {
    assert.equal(loopTitle({ task: 'Validate the signup form input.\nAll of it.' }), 'Validate the signup form input');
    assert.equal(loopTitle({ title: 'Signup validation', task: 'Anything' }), 'Signup validation');
  });
});
