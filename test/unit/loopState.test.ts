import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import FakeTimers from '@sinonjs/fake-timers';
import { ValidationError } from '../../src/core/base/errors';
import { LoopStore, validateLoopState, type LoopState } from '../../src/core/loop/loopState';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { clockOf } from '../support/clock';
import { tempDir } from '../support/helpers';

/** A loop as the runner writes it after one not-passed round and a fix. */
function goodState(): LoopState {
  return {
    id: 'l-20250101T000000Z-abcdef', task: 'Add input validation', title: 'Add input validation', creator: 'dev', planner: null, plan_talk: 0,
    reviewers: ['rev-a'], max_loop: 3, max_rebut: 2, review_only: false, checkout: '/w', base: 'a'.repeat(40), reports_dir: '/w/.mam/reports',
    created_at: '2025-01-01T00:00:00.000Z', updated_at: '2025-01-01T00:05:00.000Z', status: 'running', reason: null, exit_code: null,
    owner: { pid: 123, host: 'h' }, plan: null, rebuts_used: 0,
    steps: [
      { key: 'implement', kind: 'implement', session: 'dev', job_id: 'j-1', round: null, status: 'done', job_state: 'completed', job_reason: null, text: 'done', report: null },
      { key: 'r1:review:rev-a', kind: 'review', session: 'rev-a', job_id: 'j-2', round: 1, status: 'done', job_state: 'completed', text: '[VERDICT: NOT PASS]' },
      { key: 'r1:fix', kind: 'fix', session: 'dev', job_id: 'j-3', round: 1, status: 'planned' },
    ],
    rounds: [{
      n: 1, identity: { base: 'a'.repeat(40), head: 'b'.repeat(40), tree: 'c'.repeat(40) }, status: 'not_passed',
      reviews: [{ reviewer: 'rev-a', step: 'r1:review:rev-a', job_id: 'j-2', verdict: 'NOT PASS' }],
      children: [{ id: 'j-9', state: 'completed', session: 'helper' }], started_at: '2025-01-01T00:01:00.000Z', finished_at: '2025-01-01T00:02:00.000Z',
    }],
  };
}

const copy = (): Record<string, unknown> => JSON.parse(JSON.stringify(goodState())) as Record<string, unknown>;

describe('validateLoopState', () => {
  it('accepts what the runner writes, and the older files without title, reports_dir or job', () => {
    assert.deepEqual(validateLoopState(copy()), goodState());
    const old = copy();
    delete old.title;
    delete old.reports_dir;
    assert.equal(validateLoopState(old).title, undefined);
    const job = { ...copy(), job: { id: 'j-parent', timeout_s: 600 }, base: '' };
    assert.deepEqual(validateLoopState(job).job, { id: 'j-parent', timeout_s: 600 });
    const ended = { ...copy(), status: 'failed', reason: 'max_loop', exit_code: 1, owner: null };
    assert.equal(validateLoopState(ended).status, 'failed');
  });

  const cases: Array<[string, (s: Record<string, unknown>) => unknown, RegExp]> = [
    ['not an object', () => [1, 2], /the loop state must be an object/],
    ['null', () => null, /the loop state must be an object/],
    ['a missing field', (s) => { delete s.task; return s; }, /task must be a string/],
    ['an unknown loop status', (s) => ({ ...s, status: 'resting' }), /status must be one of running, passed, failed, cancelled \(got 'resting'\)/],
    ['a wrong type', (s) => ({ ...s, max_rebut: '2' }), /max_rebut must be a whole number/],
    ['no round allowed', (s) => ({ ...s, max_loop: 0 }), /max_loop must be a whole number ≥ 1/],
    ['no reviewer', (s) => ({ ...s, reviewers: [] }), /reviewers must name at least one session/],
    ['a bad owner', (s) => ({ ...s, owner: { pid: 'me', host: 'h' } }), /owner\.pid must be a process ID/],
    ['a job without its ID', (s) => ({ ...s, job: { timeout_s: 5 } }), /job\.id must be a string/],
    ['steps that are not a list', (s) => ({ ...s, steps: {} }), /steps must be an array/],
    ['an unknown step kind', (s) => { (s.steps as Array<Record<string, unknown>>)[1]!.kind = 'vote'; return s; }, /steps\[1\]\.kind must be one of/],
    ['a step without its job', (s) => { delete (s.steps as Array<Record<string, unknown>>)[2]!.job_id; return s; }, /steps\[2\]\.job_id must be a string/],
    ['an unknown round status', (s) => { (s.rounds as Array<Record<string, unknown>>)[0]!.status = 'done'; return s; }, /rounds\[0\]\.status must be one of reviewing, passed, not_passed, stale/],
    ['a round without its identity', (s) => { delete (s.rounds as Array<Record<string, unknown>>)[0]!.identity; return s; }, /rounds\[0\]\.identity must be an object/],
    ['an identity with a number', (s) => { ((s.rounds as Array<Record<string, unknown>>)[0]!.identity as Record<string, unknown>).tree = 7; return s; }, /rounds\[0\]\.identity\.tree must be a string/],
    ['an unknown verdict', (s) => { ((s.rounds as Array<Record<string, unknown>>)[0]!.reviews as Array<Record<string, unknown>>)[0]!.verdict = 'MAYBE'; return s; }, /rounds\[0\]\.reviews\[0\]\.verdict must be one of PASS, NOT PASS/],
    ['a bad child', (s) => { (s.rounds as Array<Record<string, unknown>>)[0]!.children = [{ id: 'j-9' }]; return s; }, /rounds\[0\]\.children\[0\]\.state must be a string/],
  ];
  for (const [what, spoil, message] of cases) {
    it(`refuses ${what} with one error naming the field`, () => {
      assert.throws(() => validateLoopState(spoil(copy()), '/w/.mam/loops/x.json'), (err: Error) => {
        assert.ok(err instanceof ValidationError, `${err.constructor.name}: ${err.message}`);
        assert.match(err.message, /^\/w\/\.mam\/loops\/x\.json: /);
        assert.match(err.message, message);
        return true;
      });
    });
  }
});

describe('LoopStore', () => {
  let paths: ControlPlanePaths;
  beforeEach(() => {
    paths = new ControlPlanePaths(tempDir('loops'));
  });

  it('reads back what it saved, stamped with its clock', () => {
    const fake = FakeTimers.createClock(Date.UTC(2030, 0, 2, 3, 4, 5));
    const store = new LoopStore(paths, clockOf(fake));
    store.save(goodState());
    assert.deepEqual(store.get(goodState().id), { ...goodState(), updated_at: '2030-01-02T03:04:05.000Z' });
  });

  it('a corrupt or hand-edited file is one clear error on get, and listed apart as unreadable', () => {
    const store = new LoopStore(paths);
    store.save(goodState());
    fs.writeFileSync(store.file('l-20250101T000000Z-badjsn'), '{"id": "l-2025', 'utf8');
    fs.writeFileSync(store.file('l-20250101T000000Z-edited'), JSON.stringify({ ...goodState(), id: 'l-20250101T000000Z-edited', status: 'paused' }), 'utf8');
    assert.throws(() => store.get('l-20250101T000000Z-badjsn'), (err: Error) => err instanceof ValidationError && err.message.startsWith(path.join(paths.loopsDir, 'l-20250101T000000Z-badjsn.json')) && /not JSON/.test(err.message));
    assert.throws(() => store.get('l-20250101T000000Z-edited'), (err: Error) => err instanceof ValidationError && /status must be one of/.test(err.message));
    assert.deepEqual(store.list().map((l) => l.id), [goodState().id]);
    const { unreadable } = store.listing();
    assert.deepEqual(unreadable.map((u) => u.file).sort(), ['l-20250101T000000Z-badjsn.json', 'l-20250101T000000Z-edited.json']);
    assert.ok(unreadable.every((u) => u.why.startsWith(path.join(paths.loopsDir, u.file))), 'each says which file and why');
  });
});
