/**
 * An orchestrating agent reads what it runs: `job submit` speaks of its own job only, however many
 * the workspace has had, and `job wait` follows jobs submitted with --no-wait to their end — all of
 * them, or the first with --any — with the job table's exit codes (75 when --timeout runs out first).
 */
import { strict as assert } from 'node:assert';
import { snapshotTree } from '../support/helpers';
import { jobFixture, JOB_ID, type JobFixture } from '../support/jobs';

const ALL_JOB_IDS = new RegExp(JOB_ID.source, 'g');

describe('quiet output and mam job wait', function () {
  this.timeout(90_000);
  let f: JobFixture;
  beforeEach(() => {
    f = jobFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  const submit = async (session: string, ...extra: string[]) => {
    const r = await f.run(['job', 'submit', '--session', session, '--prompt', 'Fix the typo in README', '--json', ...extra]);
    assert.equal(r.exitCode, 0, r.stderr);
    return JSON.parse(r.stdout) as { id: string; state: string };
  };

  it('job submit, after the workspace has had other jobs, names no job but its own', async () => {
    await f.agent('w1', 'instant');
    for (let i = 0; i < 3; i++) await submit('w1');
    const r = await f.run(['job', 'submit', '--session', 'w1', '--prompt', 'One more']);
    assert.equal(r.exitCode, 0, r.stderr);
    const [id] = r.stdout.match(ALL_JOB_IDS) ?? [];
    assert.equal(r.stdout.trim(), `${id} completed: done at once`, 'one line on stdout: the job and its outcome');
    assert.deepEqual([...new Set(r.stderr.match(ALL_JOB_IDS))], [id], `stderr speaks of this job only:\n${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^mam: job ${id}: new → registered$`, 'm'));
    assert.match(r.stderr, new RegExp(`^mam: job ${id}: started → completed$`, 'm'));
  });

  it('waits for every job named; the first that did not complete gives the exit code', async () => {
    await f.agent('w1', 'work', ['--work-ms', '300']);
    await f.agent('w2', 'error');
    const a = await submit('w1', '--no-wait');
    const b = await submit('w2', '--no-wait');
    const r = await f.run(['job', 'wait', a.id, b.id]);
    assert.equal(r.exitCode, 1, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n').map((l) => /^\S+ \w+/.exec(l)?.[0]), [`${a.id} completed`, `${b.id} failed`], 'one line per job, in the order named');
    const seen = new Set(r.stderr.match(ALL_JOB_IDS) ?? []);
    assert.ok([...seen].every((id) => id === a.id || id === b.id), `stderr speaks of the jobs waited for only:\n${r.stderr}`);

    // Both ended: answered from the disk at once, in the same shape.
    const again = await f.run(['job', 'wait', b.id, a.id, '--json']);
    assert.equal(again.exitCode, 1);
    const out = JSON.parse(again.stdout) as { exit_code: number; timed_out: boolean; ended: string[]; jobs: Array<{ id: string; state: string }> };
    assert.deepEqual([out.exit_code, out.timed_out, out.ended, out.jobs.map((j) => [j.id, j.state])], [1, false, [b.id, a.id], [[b.id, 'failed'], [a.id, 'completed']]]);
  });

  it('--any returns with the first job to end, and its exit code; the others go on', async () => {
    await f.agent('w1', 'heartbeats');
    await f.agent('w2', 'work', ['--work-ms', '300']);
    const open = await submit('w1', '--no-wait', '--heartbeat', '1');
    const quick = await submit('w2', '--no-wait');
    const r = await f.run(['job', 'wait', open.id, quick.id, '--any', '--json']);
    assert.equal(r.exitCode, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { ended: string[]; jobs: Array<{ id: string; state: string }> };
    assert.deepEqual(out.ended, [quick.id]);
    assert.equal(out.jobs.find((j) => j.id === open.id)!.state, 'started', 'the other job goes on');

    // --timeout: the wait gives up, the job does not.
    const waited = await f.run(['job', 'wait', open.id, '--timeout', '1', '--json']);
    assert.equal(waited.exitCode, 75, waited.stderr);
    const w = JSON.parse(waited.stdout) as { exit_code: number; timed_out: boolean; ended: string[] };
    assert.deepEqual([w.exit_code, w.timed_out, w.ended], [75, true, []]);
    assert.equal(f.controlPlane.jobs.require(open.id).state, 'started', 'stopping a wait changes no job');

    // Cancelled by a person: the job table says 1.
    assert.equal((await f.run(['job', 'cancel', open.id])).exitCode, 0);
    const cancelled = await f.run(['job', 'wait', open.id]);
    assert.equal(cancelled.exitCode, 1);
    assert.match(cancelled.stdout, new RegExp(`^${open.id} cancelled \\(cancelled_by_user\\)`));
  });

  describe('bad input: one line, exit 64, nothing changed', () => {
    for (const [name, args, message] of [
      ['no job', ['job', 'wait'], /^mam: mam job wait: missing JOB/],
      ['an unknown job', ['job', 'wait', 'j-20260101T000000Z-00000000'], /^mam: unknown job 'j-20260101T000000Z-00000000'$/],
      ['a malformed ID', ['job', 'wait', '../etc'], /^mam: '\.\.\/etc' is not a job ID$/],
      ['a negative timeout', ['job', 'wait', 'j-20260101T000000Z-00000000', '--timeout', '-1'], /--timeout/],
    ] as const) {
      it(name, async () => {
        const before = snapshotTree(f.workspace);
        const r = await f.run([...args]);
        assert.equal(r.exitCode, 64, r.stderr);
        assert.equal(r.stdout, '');
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr.trim(), message);
        assert.deepEqual(snapshotTree(f.workspace), before);
      });
    }
  });
});
