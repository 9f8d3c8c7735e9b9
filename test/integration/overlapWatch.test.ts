import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { systemClock } from '../../src/core/base/clock';
import { MemoryLogger } from '../../src/core/base/log';
import { OverlapChecker } from '../../src/core/overlap/overlapChecker';
import type { OverlapReport } from '../../src/core/overlap/overlapReport';
import type { SessionRow } from '../../src/core/store/sessionSchema';
import { WorkspaceOverlaps } from '../../src/core/workspaceOverlaps';
import { tempDir, until } from '../support/helpers';
import { inotifyWatches } from '../support/inotify';
import { numberedLines, OverlapRepo } from '../support/overlapRepo';
import { sessionRow } from '../support/rows';

const APP = 'src/app.ts';

/**
 * The watched checker (a watch per worktree folder and on the repository's git folders): after
 * something moves, a look asks git only about what moved, and answers exactly what a new checker
 * reading everything answers. Real git, real worktrees, real inotify; each step waits (bounded) for
 * the watch to have seen it before looking.
 */
describe('overlap check with watched worktrees (real git, real file watches)', function () {
  this.timeout(60_000);
  let repo: OverlapRepo;
  let a: string;
  let b: string;
  let c: string;
  let commonDir: string;
  let checker: OverlapChecker;
  let moves: number;
  let rows: SessionRow[];

  beforeEach(async () => {
    repo = new OverlapRepo(tempDir('overlap-watch'), { [APP]: numberedLines(100), 'src/util.ts': numberedLines(20, 'util'), 'docs/guide.md': 'guide\n', '.gitignore': 'build/\n' });
    a = repo.addWorktree('alice');
    b = repo.addWorktree('bob');
    c = repo.addWorktree('carol');
    commonDir = fs.realpathSync(path.join(repo.main, '.git'));
    repo.editLine(a, APP, 5, 'alice');
    repo.editLine(b, APP, 5, 'bob');
    repo.editLine(c, 'src/util.ts', 3, 'carol');
    rows = [sessionRow('alice', { cwd: a }), sessionRow('bob', { cwd: b }), sessionRow('carol', { cwd: c })];
    checker = new OverlapChecker({ watch: true });
    moves = 0;
    checker.onDidMove(() => moves++);
    await look('the first look', { read: [a, b, c], listed: true });
  });

  afterEach(() => checker.dispose());

  const strip = (r: OverlapReport): OverlapReport => ({ ...r, computed_at: '' });

  /**
   * One look of the watched checker: it must read exactly `expect.read` (and list HEADs when
   * `expect.listed`), and answer what a new checker, reading everything, answers.
   */
  async function look(what: string, expect: { read: string[]; listed?: boolean }): Promise<OverlapReport> {
    const report = await checker.check(rows);
    const work = checker.lastWork;
    const fresh = new OverlapChecker();
    try {
      assert.deepEqual(strip(report), strip(await fresh.check(rows)), `${what}: the watched checker differs from a new one`);
    } finally {
      fresh.dispose();
    }
    assert.deepEqual(work, { read: [...expect.read].sort(), listed: expect.listed ? [commonDir] : [] }, `${what}: what the look read`);
    return report;
  }

  /** Runs `act`, then waits (bounded) until the watch has seen something move. */
  async function after(what: string, act: () => void): Promise<void> {
    const before = moves;
    act();
    await until(() => moves > before, 10_000, `the watch to see ${what}`);
  }

  const filesOf = (r: OverlapReport, dir: string): string[] | undefined => r.checkouts.find((x) => x.checkout === dir)?.files;

  it('reads nothing when nothing moved, and only the worktree where a file changed', async () => {
    await look('nothing moved', { read: [] });
    await after('an edit in bob', () => repo.editLine(b, APP, 60, 'bob, further down'));
    const report = await look('one file changed in bob', { read: [b] });
    assert.equal(report.pairs[0]?.kind, 'conflict');
    await after('a new file in carol', () => repo.write(c, 'src/new.ts', 'new\n'));
    assert.deepEqual(filesOf(await look('a new file in carol', { read: [c] }), c), ['src/new.ts', 'src/util.ts']);
    await after('a deletion in carol', () => fs.rmSync(path.join(c, 'src/new.ts')));
    assert.deepEqual(filesOf(await look('the file deleted again', { read: [c] }), c), ['src/util.ts']);
  });

  it('follows a revert, an executable bit, a file made a symlink, a deletion and a new file (the diff against the base composed, not asked)', async () => {
    await after('bob reverting his edit and more', () => {
      repo.editLine(b, APP, 5, 'line 5'); // as at the base again (written by hand: git would touch the index)
      fs.chmodSync(path.join(b, 'src/util.ts'), 0o755);
      fs.rmSync(path.join(b, 'docs/guide.md'));
      fs.symlinkSync('../src/util.ts', path.join(b, 'docs/guide.md'));
      repo.write(b, 'src/extra.ts', 'extra\n');
    });
    assert.deepEqual(filesOf(await look('bob\'s new state', { read: [b] }), b), ['docs/guide.md', 'src/extra.ts', 'src/util.ts']);
    await after('bob deleting a file', () => fs.rmSync(path.join(b, 'src/extra.ts')));
    assert.deepEqual(filesOf(await look('the new file gone', { read: [b] }), b), ['docs/guide.md', 'src/util.ts']);
  });

  it('sees a commit, a checkout of another branch, a rebase and main moving on', async () => {
    await after('a commit in alice', () => repo.git(a, 'commit', '-q', '-am', 'alice'));
    await look('alice committed', { read: [a], listed: true });

    await after('bob checking out another branch', () => repo.git(b, 'checkout', '-q', '-b', 'bob-2', 'main'));
    assert.deepEqual(filesOf(await look('bob on a fresh branch: his edit came along', { read: [b], listed: true }), b), [APP]);

    await after('a commit on main', () => {
      repo.editLine(repo.main, 'docs/guide.md', 1, 'main moved on');
      repo.git(repo.main, 'commit', '-q', '-am', 'main moves');
    });
    await look('main moved on: every base follows, no tree is read again', { read: [], listed: true });

    await after('alice rebasing onto main', () => repo.git(a, 'rebase', '-q', 'main'));
    await look('alice rebased', { read: [a], listed: true });
  });

  it('sees a checked-out branch moved from another checkout (git update-ref), one named with a slash', async () => {
    await after('bob on a branch team/bob', () => repo.git(b, 'checkout', '-q', '-b', 'team/bob'));
    await look('bob on team/bob', { read: [b], listed: true });
    const moved = repo.git(repo.main, 'commit-tree', 'HEAD^{tree}', '-p', repo.git(b, 'rev-parse', 'HEAD'), '-m', 'moved from elsewhere');
    // Only refs/heads/team/bob changes: not bob's index, not his HEAD file, not a file of his.
    await after('team/bob moved by update-ref in the main checkout', () => repo.git(repo.main, 'update-ref', 'refs/heads/team/bob', moved));
    const report = await look('bob\'s branch moved under him', { read: [], listed: true });
    assert.equal(report.checkouts.find((x) => x.checkout === b)?.head, moved);
  });

  it('sees a stash and its pop', async () => {
    await after('bob stashing', () => repo.git(b, 'stash', '-q'));
    assert.deepEqual(filesOf(await look('bob stashed his edit', { read: [b], listed: true }), b), []);
    await after('bob popping his stash', () => repo.git(b, 'stash', 'pop', '-q'));
    assert.deepEqual(filesOf(await look('bob popped it', { read: [b], listed: true }), b), [APP]);
  });

  it('sees a file written while git reads the checkout, at the next look', async () => {
    // A checker of its own whose first look reads every checkout; the write lands right after git
    // has read bob's and before the look ends: that look cannot have it, the next one must.
    const own = new OverlapChecker({ watch: true });
    try {
      let seen = 0;
      own.onDidMove(() => seen++);
      const changes = (own as unknown as { changes: { snapshot: (l: { toplevel: string }) => Promise<unknown> } }).changes;
      const snapshot = changes.snapshot.bind(changes);
      let written = false;
      changes.snapshot = async (location) => {
        const found = await snapshot(location);
        if (location.toplevel === b && !written) {
          written = true;
          repo.editLine(b, 'src/util.ts', 10, 'bob, while git was reading');
        }
        return found;
      };
      const during = await own.check(rows);
      assert.ok(written, 'the file was written during the look');
      assert.deepEqual(filesOf(during, b), [APP], 'the look that was reading cannot have it');
      await until(() => seen > 0, 10_000, 'the watch to see the write made during the look');
      const next = await own.check(rows);
      assert.deepEqual(own.lastWork, { read: [b], listed: [] });
      assert.deepEqual(filesOf(next, b), [APP, 'src/util.ts']);
    } finally {
      own.dispose();
    }
  });

  it('follows a worktree added and one removed, and closes the removed one\'s watches', async () => {
    const watchesBefore = inotifyWatches();
    const d = repo.addWorktree('dave');
    repo.editLine(d, APP, 5, 'dave');
    rows = [...rows, sessionRow('dave', { cwd: d })];
    await look('dave joins', { read: [d], listed: true });
    assert.ok(inotifyWatches() > watchesBefore, 'dave\'s folders are watched');

    await after('carol\'s worktree removed', () => repo.git(repo.main, 'worktree', 'remove', '--force', c));
    const report = await look('carol\'s worktree is gone', { read: [], listed: true });
    assert.deepEqual(report.skipped.map((s) => s.session), ['carol']);
    rows = rows.filter((r) => r.name !== 'carol');
    await look('carol\'s session ended', { read: [] });
  });

  it('watches a new folder and what is written in it later; a folder un-ignored; info/exclude', async () => {
    await after('a new folder with a file', () => repo.write(b, 'lib/deep/one.ts', 'one\n'));
    await look('a new folder', { read: [b] });
    await after('a second file in the new folder', () => repo.write(b, 'lib/deep/two.ts', 'two\n'));
    assert.deepEqual(filesOf(await look('a file in the folder made since the last look', { read: [b] }), b), ['lib/deep/one.ts', 'lib/deep/two.ts', APP]);

    await after('a new ignored folder', () => repo.write(a, 'build/out.js', 'built\n'));
    await look('a new folder, found ignored: not in the tree', { read: [a] });
    repo.write(a, 'build/more.js', 'more\n');
    await look('a write in the ignored folder: not watched', { read: [] });
    await after('.gitignore no longer ignoring build/', () => fs.writeFileSync(path.join(a, '.gitignore'), '# nothing ignored\n'));
    assert.deepEqual(filesOf(await look('build/ is in the tree now', { read: [a] }), a), ['.gitignore', 'build/more.js', 'build/out.js', APP]);
    await after('a write in build/, watched now', () => repo.write(a, 'build/last.js', 'last\n'));
    assert.deepEqual(filesOf(await look('the write in build/', { read: [a] }), a), ['.gitignore', 'build/last.js', 'build/more.js', 'build/out.js', APP]);

    await after('info/exclude ignoring lib/', () => {
      fs.mkdirSync(path.join(commonDir, 'info'), { recursive: true });
      fs.writeFileSync(path.join(commonDir, 'info/exclude'), 'lib/\n');
    });
    assert.deepEqual(filesOf(await look('bob\'s untracked lib/ is excluded now', { read: [a, b, c] }), b), [APP]);
  });

  it('sees an index-only change: an ignored file added with --force', async () => {
    await after('an ignored file', () => repo.write(c, 'build/keep.js', 'kept\n'));
    await look('an ignored file in a new folder', { read: [c] });
    await after('git add --force in carol', () => repo.git(c, 'add', '--force', 'build/keep.js'));
    assert.deepEqual(filesOf(await look('it is tracked now', { read: [c], listed: true }), c), ['build/keep.js', 'src/util.ts']);
  });

  it('reads on every look a worktree it cannot watch (a repository inside it), and says why', async () => {
    const inner = path.join(c, 'vendor/lib');
    fs.mkdirSync(inner, { recursive: true });
    repo.git(inner, 'init', '-q');
    repo.git(inner, 'commit', '-q', '--allow-empty', '-m', 'inner');
    await after('a repository made inside carol', () => repo.write(c, 'vendor/lib/x.ts', 'x\n'));
    await look('carol is read', { read: [c] });
    await look('and read again, nothing having moved', { read: [c] });
    assert.match((checker as unknown as { watches: { unwatched(l: unknown): string | undefined } }).watches.unwatched({ toplevel: c, commonDir, gitDir: '' }) ?? '', /a repository is inside it \(vendor\/lib\)/);
  });

  it('reads everything at a full look (every fullEveryMs), also what no event told: a file written through a hard link from outside', async () => {
    let now = 0;
    const clock = { ...systemClock, now: () => now };
    const outside = path.join(tempDir('outside'), 'linked.ts');
    fs.writeFileSync(outside, 'one\n');
    fs.linkSync(outside, path.join(c, 'src/linked.ts'));
    const own = new OverlapChecker({ clock, watch: { fullEveryMs: 60_000 } });
    try {
      await own.check(rows);
      fs.writeFileSync(outside, 'two, through the other name\n'); // the same file; no event in carol's folders
      await own.check(rows);
      assert.deepEqual(own.lastWork.read, [], 'no event told it: not read (the limit the full look is for)');
      now += 60_000;
      const report = await own.check(rows);
      assert.deepEqual(own.lastWork, { read: [a, b, c].sort(), listed: [commonDir] }, 'the full look reads everything');
      const fresh = new OverlapChecker();
      try {
        assert.deepEqual(strip(report), strip(await fresh.check(rows)));
      } finally {
        fresh.dispose();
      }
    } finally {
      own.dispose();
    }
  });

  it('closes every watch when disposed of', async () => {
    assert.ok(inotifyWatches() > 0, 'watches are open');
    checker.dispose();
    assert.equal(inotifyWatches(), 0);
  });
});

describe("the extension's overlaps (WorkspaceOverlaps): a move in a checkout asks for a look by itself", function () {
  this.timeout(60_000);

  it('sees a conflict end when a file changes, with nobody asking for a look', async () => {
    const repo = new OverlapRepo(tempDir('overlap-ws'), { [APP]: numberedLines(20) });
    const [a, b] = [repo.addWorktree('alice'), repo.addWorktree('bob')];
    repo.editLine(a, APP, 5, 'alice');
    repo.editLine(b, APP, 5, 'bob');
    const overlaps = new WorkspaceOverlaps(async () => [sessionRow('alice', { cwd: a }), sessionRow('bob', { cwd: b })], new MemoryLogger());
    try {
      overlaps.start();
      await until(() => overlaps.report?.pairs[0]?.kind === 'conflict', 30_000, 'the conflict');
      repo.editLine(b, APP, 5, 'line 5'); // bob undoes his edit
      await until(() => overlaps.report?.pairs.length === 0, 30_000, 'the conflict gone, no schedule() called');
    } finally {
      overlaps.dispose();
    }
  });
});
