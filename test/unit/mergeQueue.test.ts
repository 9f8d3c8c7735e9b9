import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { creatorTask, outputTail, OUTPUT_TAIL_CHARS } from '../../src/core/merge/creatorBrief';
import { MergeQueueStore, validateQueue, type MergeEntry } from '../../src/core/merge/mergeQueue';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { tempWorkspace } from '../support/helpers';

function entry(fields: Partial<MergeEntry> = {}): MergeEntry {
  return {
    id: 'm-20260101T000000Z-abcdef', branch: 'mam/a', worktree: null, into: 'main', validate: ['npm', 'test'], creator: 'creator-a', reviewers: ['rev-a'],
    reviewed: { loop: 'l-1', base: 'b', head: 'h', tree: 't' }, state: 'queued', step: null, reason: null, job_id: null, attempt: null, landed_commit: null,
    created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', landed_at: null, ...fields,
  };
}

describe('the merge queue file', () => {
  it('is checked field by field: a bad field is named, never trusted', () => {
    assert.doesNotThrow(() => validateQueue({ version: 1, entries: [entry()] }));
    for (const [bad, message] of [
      [{ version: 2, entries: [] }, /version must be 1/],
      [{ version: 1, entries: [entry({ id: '../x' })] }, /entries\[0\]\.id is not an entry ID/],
      [{ version: 1, entries: [entry(), entry()] }, /entries\[1\]\.id appears twice/],
      [{ version: 1, entries: [entry({ state: 'lost' as never })] }, /entries\[0\]\.state must be one of/],
      [{ version: 1, entries: [entry({ validate: [] })] }, /validate must name a program/],
      [{ version: 1, entries: [entry({ validate: 'npm test' as never })] }, /validate must be a list of strings/],
      [{ version: 1, entries: [entry({ attempt: { target: 'x', tip: 'y', result: null, result_tree: null, validated: 'yes' as never, review_loop: null, reviewed: false } })] }, /attempt\.validated must be true or false/],
    ] as const) {
      assert.throws(() => validateQueue(bad, 'q.json'), message);
    }
  });

  it('a reader never throws: a corrupt file is named as the problem', async () => {
    const paths = new ControlPlanePaths(tempWorkspace());
    const store = new MergeQueueStore(paths);
    assert.deepEqual(store.reading(), { entries: [], problem: null });
    await store.update((entries) => void entries.push(entry()));
    assert.equal(store.reading().entries[0]!.branch, 'mam/a');
    fs.writeFileSync(paths.mergeQueueFile, '{ not json');
    const r = store.reading();
    assert.deepEqual(r.entries, []);
    assert.match(r.problem!, /queue\.json: not JSON/);
  });

  it("the creator's brief carries a bounded tail of the output, colours and control characters removed", () => {
    const noisy = `${'x'.repeat(10_000)}\n\u001b[31mred\u001b[0m\u0007 at the end`;
    const tail = outputTail(noisy);
    assert.ok(tail.length <= OUTPUT_TAIL_CHARS + 100, String(tail.length));
    assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(tail), 'no control characters');
    assert.match(tail, /\nred at the end$/);
    assert.match(tail, /^… \(earlier output cut/);
    const task = creatorTask(entry(), { kind: 'conflict', files: ['src/a.ts'], output: 'CONFLICT (content): Merge conflict in src/a.ts' }, '/ws/.mam/merge/logs/x.log');
    assert.match(task, /conflicts in these files:\n\n- `src\/a\.ts`/);
    assert.match(task, /CONFLICT \(content\)/);
  });
});
