/**
 * A pair of checkouts that change no file in common is not merged when its merge cannot conflict
 * (src/core/overlap/mergeSkip.ts). The report must still be git's: every pair is checked against
 * `git merge-tree` run here on the two snapshot trees, and each way disjoint changes can still
 * conflict is shown to be merged.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { OverlapChecker } from '../../src/core/overlap/overlapChecker';
import type { OverlapReport } from '../../src/core/overlap/overlapReport';
import { tempDir } from '../support/helpers';
import { numberedLines, OverlapRepo } from '../support/overlapRepo';
import { sessionRow } from '../support/rows';

describe('overlap: merges that cannot conflict are not asked of git, and the report stays git\'s', function () {
  this.timeout(60_000);
  let repo: OverlapRepo;
  let a: string;
  let b: string;

  beforeEach(() => {
    repo = new OverlapRepo(tempDir('merge-skip'), {
      'src/app.ts': numberedLines(40, 'app'),
      'src/util.ts': numberedLines(40, 'util'),
      'lib/one.ts': numberedLines(30, 'one'),
      'lib/two.ts': numberedLines(30, 'two'),
      'README.md': 'readme\n',
    });
    a = repo.addWorktree('alice');
    b = repo.addWorktree('bob');
  });

  /**
   * One look at alice and bob: returns the report and how many merges git was asked for, after
   * checking the report against git's own merge of the two snapshot trees (on their HEADs).
   */
  async function look(): Promise<{ report: OverlapReport; merged: number }> {
    const checker = new OverlapChecker({ oneShot: true });
    let report: OverlapReport;
    try {
      report = await checker.check([sessionRow('alice', { cwd: a }), sessionRow('bob', { cwd: b })]);
    } finally {
      checker.dispose();
    }
    const [x, y] = report.checkouts;
    assert.ok(x && y && x.files.length > 0 && y.files.length > 0, `both sides changed something: ${JSON.stringify(report.checkouts)}`);
    const commit = (c: typeof x): string => repo.git(repo.main, 'commit-tree', c.tree, '-p', c.head, '-m', 'snapshot');
    let conflicts: string[];
    try {
      repo.git(repo.main, 'merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', commit(x), commit(y));
      conflicts = [];
    } catch (err) {
      const out = String((err as { stdout?: unknown }).stdout ?? '');
      assert.equal((err as { status?: number }).status, 1, `git merge-tree failed: ${String(err)}`);
      conflicts = [...new Set(out.split('\0').slice(1).filter((p) => p !== ''))].sort();
    }
    const shared = x.files.filter((f) => y.files.includes(f));
    // (A path git moves aside is named after its side's commit: ours and the checker's differ.)
    const named = (paths: string[]): string[] => paths.map((p) => p.replace(/~[0-9a-f]{40,64}$/, '~COMMIT')).sort();
    const reported = report.pairs[0]?.files.filter((f) => f.conflict).map((f) => f.path) ?? [];
    assert.deepEqual(named(reported), named(conflicts), "the report's conflicts are git's");
    assert.equal(report.pairs.length, shared.length > 0 || conflicts.length > 0 ? 1 : 0, 'a pair is reported when it shares a file or conflicts');
    return { report, merged: checker.lastMerges };
  }

  it('edits of different files, and new files, are not merged: git agrees they merge cleanly', async () => {
    repo.editLine(a, 'src/app.ts', 5, 'alice');
    repo.write(a, 'src/alice.ts', 'new\n');
    repo.git(a, 'commit', '-q', '-am', 'alice commits part');
    repo.editLine(b, 'src/util.ts', 5, 'bob');
    repo.write(b, 'lib/bob/deep.ts', 'bob\n');
    const { report, merged } = await look();
    assert.deepEqual(report.pairs, []);
    assert.equal(merged, 0, 'no merge asked');
  });

  it('a file added where the other side adds a folder of that name is merged: a conflict', async () => {
    repo.write(a, 'src/thing', 'a file\n');
    repo.write(b, 'src/thing/inside.ts', 'a folder\n');
    const { report, merged } = await look();
    assert.equal(merged, 1);
    assert.equal(report.pairs[0]?.kind, 'conflict');
  });

  it('a folder renamed on one side (deletions) while the other adds a file in it is merged: a conflict', async () => {
    fs.renameSync(path.join(a, 'lib'), path.join(a, 'pkg'));
    repo.write(b, 'lib/new.ts', 'new\n');
    const { report, merged } = await look();
    assert.equal(merged, 1);
    assert.equal(report.pairs[0]?.kind, 'conflict', JSON.stringify(report.pairs));
  });

  it("MAM's own files committed differently on both sides (left out of the changes) are merged: a conflict", async () => {
    for (const [dir, who] of [[a, 'alice'], [b, 'bob']] as const) {
      repo.write(dir, '.mam/notes.md', `${who}\n`);
      repo.git(dir, 'add', '--force', '.mam/notes.md');
      repo.git(dir, 'commit', '-q', '-m', `${who}: notes`);
    }
    repo.editLine(a, 'src/app.ts', 5, 'alice');
    repo.editLine(b, 'src/util.ts', 5, 'bob');
    const { report, merged } = await look();
    assert.equal(merged, 1);
    assert.deepEqual(report.pairs[0]?.files.map((f) => [f.path, f.conflict]), [['.mam/notes.md', true]]);
  });

  it('HEADs whose merge-base is not the base their changes are counted from are merged: a conflict the changes do not show', async () => {
    // A commit X both branches build on; alice then changes app.ts back to main's text, bob changes it again.
    repo.git(a, 'checkout', '-q', '-b', 'x');
    repo.editLine(a, 'src/app.ts', 5, 'x');
    repo.git(a, 'commit', '-q', '-am', 'x');
    repo.git(b, 'checkout', '-q', '-b', 'bob-on-x', 'x');
    repo.editLine(a, 'src/app.ts', 5, 'app 5');
    repo.git(a, 'commit', '-q', '-am', 'alice: back to main');
    repo.editLine(a, 'src/util.ts', 5, 'alice');
    repo.editLine(b, 'src/app.ts', 5, 'bob');
    const { report, merged } = await look();
    assert.equal(merged, 1);
    assert.deepEqual(report.pairs[0]?.files.map((f) => [f.path, f.conflict]), [['src/app.ts', true]]);
  });

  it('a deletion on one side beside the other side\'s edits is merged (clean)', async () => {
    fs.rmSync(path.join(a, 'lib/two.ts'));
    repo.editLine(b, 'src/app.ts', 5, 'bob');
    const { report, merged } = await look();
    assert.equal(merged, 1);
    assert.deepEqual(report.pairs, []);
  });
});
