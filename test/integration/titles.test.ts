import { strict as assert } from 'node:assert';
import type { JobRecord } from '../../src/core/store/jobSchema';
import type { LoopState } from '../../src/core/loop/loopState';
import { jobFixture, loopFixture, type JobFixture } from '../support/jobs';

describe('job and loop titles (CLI, scripted agents)', function () {
  this.timeout(120_000);
  let f: JobFixture | undefined;
  afterEach(async () => {
    await f?.dispose();
    f = undefined;
  });

  it('mam job submit: --title as given, else the first sentence of the task; an empty --title is refused before anything is written', async () => {
    f = jobFixture();
    await f.agent('w1', 'work');
    const submit = async (...extra: string[]) => {
      const r = await f!.run(['job', 'submit', '--session', 'w1', '--json', ...extra]);
      assert.equal(r.exitCode, 0, r.stderr);
      return JSON.parse(r.stdout) as JobRecord;
    };
    const given = await submit('--prompt', 'Fix the typo in README.md on line 3. It says "teh".', '--title', 'README typo');
    assert.equal(given.title, 'README typo');
    assert.equal(f.controlPlane.jobs.get(given.id)!.title, 'README typo', 'kept in the record');
    const derived = await submit('--prompt', 'Fix the typo in README.md on line 3.\nIt says "teh" where it means "the", and the next\nline is wrapped badly.');
    assert.equal(derived.title, 'Fix the typo in README.md on line 3');
    const before = f.controlPlane.jobs.list().jobs.length;
    const empty = await f.run(['job', 'submit', '--session', 'w1', '--prompt', 'Anything', '--title', '  ']);
    assert.equal(empty.exitCode, 64, empty.stderr);
    assert.match(empty.stderr, /--title is empty/);
    assert.equal(f.controlPlane.jobs.list().jobs.length, before, 'no job registered');
  });

  it("a loop is titled by its task's first sentence, and its jobs by their step and round", async () => {
    f = loopFixture();
    await f.agent('creator', 'creator');
    await f.agent('rev-a', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    const task = 'Add input validation to the signup form in src/signup.js that\naccepts only real e-mail addresses. Keep the old messages.';
    const r = await f.run(['loop', '--task', task, '--creator', 'creator', '--reviewer', 'rev-a', '--json']);
    assert.equal(r.exitCode, 0, r.stderr);
    const loop = JSON.parse(r.stdout) as LoopState;
    assert.equal(loop.title, 'Add input validation to the signup form in src/signup.js…');
    const titles = loop.steps.filter((s) => s.job_id && f!.controlPlane.jobs.get(s.job_id)).map((s) => [s.key, f!.controlPlane.jobs.get(s.job_id)!.title]);
    assert.deepEqual(titles, [
      ['implement', 'Implement'],
      ['r1:review:rev-a', 'Review · round 1'],
      ['r1:fix', 'Fix · round 1'],
      ['r2:review:rev-a', 'Review · round 2'],
    ]);
  });
});
