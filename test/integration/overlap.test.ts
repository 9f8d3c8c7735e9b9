import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MergePredictor } from '../../src/core/overlap/mergePrediction';
import { OverlapChecker } from '../../src/core/overlap/overlapChecker';
import type { OverlapReport } from '../../src/core/overlap/overlapReport';
import type { SessionRow } from '../../src/core/store/sessionSchema';
import { controlPlane, mam, tempDir } from '../support/helpers';
import { numberedLines, OverlapRepo } from '../support/overlapRepo';
import { sessionRow } from '../support/rows';

const APP = 'src/app.ts';

describe('overlap warnings (real git worktrees)', () => {
  let repo: OverlapRepo;
  let a: string;
  let b: string;

  beforeEach(() => {
    repo = new OverlapRepo(tempDir('overlap'), { [APP]: numberedLines(200), 'src/util.ts': numberedLines(20, 'util'), 'README.md': 'hello\n' });
    a = repo.addWorktree('alice');
    b = repo.addWorktree('bob');
  });

  const check = (rows: SessionRow[]): Promise<OverlapReport> => new OverlapChecker().check(rows);
  const two = (): SessionRow[] => [sessionRow('alice', { cwd: a }), sessionRow('bob', { cwd: b })];

  it('predicts a conflict between two uncommitted edits of the same lines, with the lines', async () => {
    repo.editLine(a, APP, 5, 'return a + b;');
    repo.editLine(b, APP, 5, 'return a - b;');
    const report = await check(two());
    assert.equal(report.pairs.length, 1, JSON.stringify(report));
    const [pair] = report.pairs;
    assert.deepEqual({ a: pair!.a, b: pair!.b, kind: pair!.kind }, { a: { sessions: ['alice'], checkout: a }, b: { sessions: ['bob'], checkout: b }, kind: 'conflict' });
    assert.deepEqual(pair!.files, [{ path: APP, a_lines: [[5, 5]], b_lines: [[5, 5]], conflict: true }]);
    assert.deepEqual(report.checkouts.map((c) => [c.sessions, c.branch, c.files]), [[['alice'], 'alice', [APP]], [['bob'], 'bob', [APP]]]);
    assert.deepEqual(report.skipped, []);
  });

  it('says nothing about two checkouts editing different files (one of them new and untracked)', async () => {
    repo.editLine(a, APP, 5, 'changed by alice');
    repo.editLine(b, 'src/util.ts', 5, 'changed by bob');
    repo.write(b, 'src/new.ts', 'new\n');
    const report = await check(two());
    assert.deepEqual(report.pairs, []);
    assert.deepEqual(report.checkouts.map((c) => c.files), [[APP], ['src/new.ts', 'src/util.ts']], 'both checkouts were read, untracked file included');
  });

  it('reports an overlap without a conflict when the same file changes far apart', async () => {
    repo.editLine(a, APP, 10, 'alice was here');
    repo.editLine(b, APP, 150, 'bob was here');
    fs.appendFileSync(path.join(b, APP), 'one more\ntwo more\n');
    const report = await check(two());
    assert.equal(report.pairs.length, 1);
    assert.equal(report.pairs[0]!.kind, 'overlap');
    assert.deepEqual(report.pairs[0]!.files, [{ path: APP, a_lines: [[10, 10]], b_lines: [[150, 150], [200, 200]], conflict: false }]);
  });

  it('counts commits on the branch since it left main, staged changes, and a session in the main checkout', async () => {
    repo.editLine(a, APP, 20, 'alice committed this');
    repo.git(a, 'commit', '-q', '-am', 'alice');
    repo.editLine(repo.main, APP, 20, 'main, uncommitted, staged');
    repo.git(repo.main, 'add', APP);
    const report = await check([sessionRow('alice', { cwd: a }), sessionRow('lead', { cwd: repo.main })]);
    assert.deepEqual(report.pairs.map((p) => [p.a.sessions, p.b.sessions, p.kind, p.files.map((f) => [f.path, f.a_lines, f.b_lines])]), [[['lead'], ['alice'], 'conflict', [[APP, [[20, 20]], [[20, 20]]]]]]);
  });

  it('leaves every checkout as it was: index bytes, status, HEAD and refs', async () => {
    repo.editLine(a, APP, 5, 'alice');
    repo.git(a, 'add', APP);
    repo.editLine(a, APP, 6, 'alice, unstaged');
    repo.write(a, 'untracked.txt', 'u\n');
    repo.editLine(b, APP, 5, 'bob');
    const state = (dir: string) => ({
      status: repo.git(dir, 'status', '--porcelain=v1', '-uall'),
      index: fs.readFileSync(repo.git(dir, 'rev-parse', '--path-format=absolute', '--git-path', 'index')).toString('base64'),
      head: repo.git(dir, 'rev-parse', 'HEAD'),
      refs: repo.git(dir, 'for-each-ref'),
      stash: repo.git(dir, 'stash', 'list'),
    });
    const before = [a, b, repo.main].map(state);
    const report = await check(two());
    assert.equal(report.pairs[0]?.kind, 'conflict', 'the check ran');
    assert.deepEqual([a, b, repo.main].map(state), before);
  });

  it('never pairs sessions sharing a checkout; skips folders outside git silently and stopped sessions', async () => {
    repo.editLine(a, APP, 5, 'alice');
    repo.editLine(b, APP, 5, 'bob');
    fs.mkdirSync(path.join(a, 'src/deep'), { recursive: true });
    const rows = [
      sessionRow('alice', { cwd: a }),
      sessionRow('carol', { cwd: path.join(a, 'src/deep'), status: 'starting' }),
      sessionRow('bob', { cwd: b }),
      sessionRow('dave', { cwd: b, status: 'stopped' }),
      sessionRow('outside', { cwd: tempDir('plain') }),
    ];
    const report = await check(rows);
    assert.deepEqual(report.pairs.map((p) => [p.a.sessions, p.b.sessions]), [[['alice', 'carol'], ['bob']]]);
    assert.deepEqual(report.skipped, []);
  });

  it('a checker kept between looks answers as a new one does, merging again only where the answer can change', async () => {
    const old = Array.from({ length: 40 }, (_, i) => `export const old${i} = ${i * 7}; // a line of its own`).join('\n') + '\n';
    repo = new OverlapRepo(tempDir('overlap-kept'), { [APP]: numberedLines(200), 'src/util.ts': numberedLines(20, 'util'), 'src/old.ts': old, 'README.md': 'hello\n' });
    a = repo.addWorktree('alice');
    b = repo.addWorktree('bob');
    const merges = countMerges();
    const kept = new OverlapChecker();
    try {
      const strip = (r: OverlapReport) => ({ ...r, computed_at: '' });
      const look = async (what: string, expected: number): Promise<OverlapReport> => {
        merges.count = 0;
        const report = await kept.check(two());
        assert.equal(merges.count, expected, `${what}: pairs merged`);
        const fresh = new OverlapChecker();
        try {
          assert.deepEqual(strip(report), strip(await fresh.check(two())), `${what}: the kept checker differs from a new one`);
        } finally {
          fresh.dispose();
        }
        return report;
      };
      const conflicted = (r: OverlapReport) => r.pairs.flatMap((p) => p.files.filter((f) => f.conflict).map((f) => f.path));

      repo.editLine(a, APP, 5, 'return a + b;');
      repo.editLine(b, APP, 5, 'return a - b;');
      assert.deepEqual(conflicted(await look('both edit line 5', 1)), [APP]);
      repo.editLine(a, 'src/util.ts', 3, 'alice alone');
      await look('alice edits a file bob left alone: carried', 0);
      repo.editLine(b, 'src/util.ts', 15, 'bob, far from alice');
      await look('bob edits a file alice changed: merged again', 1);
      // alice renames old.ts (a deletion and a similar new file); bob edits old.ts: git follows the rename.
      fs.rmSync(path.join(a, 'src/old.ts'));
      repo.write(a, 'src/new.ts', old.replace('old0 = 0', 'old0 = -1'));
      repo.editLine(b, 'src/old.ts', 20, 'export const old19 = 0; // bob');
      assert.deepEqual(conflicted(await look('a rename against an edit', 1)), [APP]);
      repo.write(a, 'src/new.ts', 'nothing like it any more\n');
      assert.deepEqual(conflicted(await look('the new file changes: no rename now, an edit against a deletion', 1)), [APP, 'src/old.ts']);
      fs.appendFileSync(path.join(a, 'README.md'), 'alice\n');
      await look('alice edits a file bob left alone, beside her deletion: carried', 0);
    } finally {
      merges.stop();
      kept.dispose();
    }
  });

  it('one-look checkers one after another (as mam conflicts processes) answer as a new checker does, merging only pairs whose side moved', async () => {
    const c = repo.addWorktree('carol');
    const three = (): SessionRow[] => [...two(), sessionRow('carol', { cwd: c })];
    const merges = countMerges();
    const strip = (r: OverlapReport) => ({ ...r, computed_at: '' });
    const once = async (options: { oneShot?: boolean }): Promise<OverlapReport> => {
      const checker = new OverlapChecker(options);
      try {
        return await checker.check(three());
      } finally {
        checker.dispose();
      }
    };
    const look = async (what: string, expected: number): Promise<OverlapReport> => {
      merges.count = 0;
      const report = await once({ oneShot: true });
      assert.equal(merges.count, expected, `${what}: pairs merged`);
      assert.deepEqual(strip(report), strip(await once({})), `${what}: differs from a new checker's first look`);
      return report;
    };
    const memo = path.join(repo.main, '.git', 'mam-overlap', 'memo.json');
    try {
      repo.editLine(a, APP, 5, 'return a + b;');
      repo.editLine(b, APP, 5, 'return a - b;');
      repo.editLine(c, APP, 5, 'return a * b;');
      assert.equal((await look('three edit line 5', 3)).pairs.length, 3);
      assert.ok(fs.existsSync(memo), 'the memo is in the shared git folder');
      await look('nothing moved', 0);
      repo.editLine(c, APP, 100, 'carol, far away');
      await look('carol moved: her two pairs merged again', 2);
      fs.writeFileSync(memo, '{"v":1,"merges":{"not ids":[]},"ranges":{}}');
      await look('a memo that is not MAM\'s is not used', 3);
    } finally {
      merges.stop();
    }
  });

  it('mam conflicts prints the pairs, and --json the report (through dist/cli.js)', async () => {
    const ws = repo.main;
    await controlPlane(ws).sessions.mutate((tx) => two().forEach((r) => tx.insert(r)));
    const none = await mam(['conflicts'], { cwd: ws });
    assert.deepEqual([none.exitCode, none.stdout.trim()], [0, 'No overlaps between running sessions.'], none.stderr);

    repo.editLine(a, APP, 5, 'alice');
    repo.editLine(b, APP, 5, 'bob');
    const json = await mam(['conflicts', '--json'], { cwd: ws });
    assert.equal(json.exitCode, 0, json.stderr);
    const report = JSON.parse(json.stdout) as OverlapReport;
    assert.deepEqual(report.pairs.map((p) => [p.a.sessions, p.b.sessions, p.kind, p.files]), [[['alice'], ['bob'], 'conflict', [{ path: APP, a_lines: [[5, 5]], b_lines: [[5, 5]], conflict: true }]]]);
    const text = await mam(['conflicts'], { cwd: ws });
    assert.match(text.stdout, /^CONFLICT in 1 of 1 file: alice \(.*wt-alice\) ↔ bob \(.*wt-bob\)\n  conflict  src\/app\.ts  \(alice line 5, bob line 5\)$/);
  });
});

describe('snapshot commits: the ID computed without git is the one git writes', () => {
  for (const format of ['sha1', 'sha256'] as const) {
    it(`in a ${format} repository`, async () => {
      const dir = tempDir(`overlap-${format}`);
      const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } }).trim();
      git('init', '-q', `--object-format=${format}`);
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
      git('add', 'a.txt');
      git('commit', '-q', '-m', 'one');
      fs.writeFileSync(path.join(dir, 'a.txt'), 'b\n');
      git('commit', '-q', '-am', 'two');
      const head = git('rev-parse', 'HEAD');
      const predictor = new MergePredictor();
      const ours = predictor.commit(git('rev-parse', 'HEAD^{tree}'), head);
      const theirs = predictor.commit(git('rev-parse', 'HEAD~1^{tree}'), head);
      assert.equal(ours.length, format === 'sha1' ? 40 : 64);
      // What commit-tree writes with the same names, times and message.
      const env = { GIT_AUTHOR_NAME: 'mam', GIT_AUTHOR_EMAIL: 'mam@localhost', GIT_AUTHOR_DATE: '@0 +0000', GIT_COMMITTER_NAME: 'mam', GIT_COMMITTER_EMAIL: 'mam@localhost', GIT_COMMITTER_DATE: '@0 +0000' };
      const written = execFileSync('git', ['commit-tree', `${head}^{tree}`, '-p', head, '-m', 'mam overlap snapshot'], { cwd: dir, encoding: 'utf8', env: { ...process.env, ...env } }).trim();
      assert.equal(ours, written);
      // Written by the predictor when a merge needs them: git merges the two as commits it has.
      assert.throws(() => git('cat-file', '-e', theirs), 'not written before a merge needs it');
      const [outcome] = await predictor.predict(dir, [[ours, theirs]]);
      assert.deepEqual(outcome, { conflicts: [] });
      assert.equal(git('cat-file', '-t', theirs), 'commit');
      assert.equal(git('rev-parse', `${theirs}^`), head);
    });
  }
});

/** Counts the pairs git is asked to merge (MergePredictor's one batched merge-tree) until `stop`. */
function countMerges(): { count: number; stop(): void } {
  const proto = MergePredictor.prototype as unknown as { mergeAll(this: MergePredictor, checkout: string, pairs: readonly unknown[]): Promise<unknown> };
  const mergeAll = proto.mergeAll;
  const counter = {
    count: 0,
    stop: () => {
      proto.mergeAll = mergeAll;
    },
  };
  proto.mergeAll = function (checkout, pairs) {
    counter.count += pairs.length;
    return mergeAll.call(this, checkout, pairs);
  };
  return counter;
}
