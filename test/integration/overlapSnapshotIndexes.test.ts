import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { worktreeTree } from '../../src/core/loop/snapshot';
import type { CheckoutLocation } from '../../src/core/overlap/checkouts';
import { statusesOf } from '../../src/core/overlap/rawDiff';
import { SnapshotIndexes, type SnapshotLook } from '../../src/core/overlap/snapshotIndexes';
import { gitsStarted } from '../support/gitsStarted';
import { tempDir } from '../support/helpers';
import { numberedLines, OverlapRepo } from '../support/overlapRepo';

/**
 * The overlap checker keeps one index per checkout between looks — a watched checker in memory, a
 * one-look checker (`mam conflicts`) in the checkout's git folder for the next process; each look's
 * tree must be exactly the one-off snapshot's (worktreeTree seeded from the checkout's index, and
 * from HEAD), whatever happened in between, and the checkout's own index must never change.
 */
for (const persist of [false, true]) describe(`overlap snapshot indexes (kept between looks${persist ? ' in the git folder, each look a new checker as a new process makes it' : ', in memory'})`, () => {
  let repo: OverlapRepo;
  let wt: string;
  let location: CheckoutLocation;
  let indexes: SnapshotIndexes;

  beforeEach(() => {
    repo = new OverlapRepo(tempDir('overlap-index'), { 'src/a.ts': numberedLines(30, 'a'), 'src/b.ts': numberedLines(30, 'b'), 'docs/c.md': 'c\n', '.gitignore': 'build/\n' });
    wt = repo.addWorktree('w');
    location = { toplevel: wt, gitDir: repo.git(wt, 'rev-parse', '--absolute-git-dir'), commonDir: fs.realpathSync(path.join(repo.main, '.git')) };
    indexes = new SnapshotIndexes({ persist });
  });
  afterEach(() => indexes.dispose());

  /** What the last look said moved since the one before (a watched checker's only, when it kept its index). */
  let moved: SnapshotLook['moved'];
  const userIndex = (): Buffer => fs.readFileSync(path.join(location.gitDir, 'index'));
  /** A look as the mode makes it: the one checker again, or a new one (a new process's). */
  const lookOnce = async (): Promise<SnapshotLook> => {
    if (!persist) return indexes.look(location);
    const once = new SnapshotIndexes({ persist });
    try {
      return await once.look(location);
    } finally {
      once.dispose();
    }
  };

  /**
   * One look: the kept index's tree equals the one-off seeded snapshot (and the one from HEAD, unless
   * the user's index holds what HEAD does not), and the user's index is untouched.
   */
  async function look(what: string, sameAsHead = true): Promise<string> {
    const before = userIndex();
    const found = await lookOnce();
    moved = found.moved;
    const kept = found.tree;
    assert.deepEqual(userIndex(), before, `${what}: the checkout's own index changed`);
    assert.equal(kept, await worktreeTree(wt, { seedIndex: path.join(location.gitDir, 'index') }), `${what}: differs from the seeded snapshot`);
    if (sameAsHead) assert.equal(kept, await worktreeTree(wt), `${what}: differs from the snapshot from HEAD`);
    return kept;
  }
  /**
   * Dates every file of the checkout written since the last call an hour back, so that no index written from now on holds a
   * racily clean entry: git would then look at those files again and rewrite the kept index anyway,
   * which would hide a kept index trusted when it must not be.
   */
  const backdate = (): void => {
    const then = new Date(Date.now() - 3_600_000);
    for (const f of fs.readdirSync(wt, { recursive: true, encoding: 'utf8' })) {
      // Files dated back already keep their stat data: git must not see them as changed.
      if (f !== '.git' && fs.statSync(path.join(wt, f)).mtimeMs > then.getTime() + 60_000) fs.utimesSync(path.join(wt, f), then, then);
    }
  };
  const blob = (tree: string, file: string): string => repo.git(wt, 'show', `${tree}:${file}`);
  const paths = (tree: string): string[] => repo.git(wt, 'ls-tree', '-r', '--name-only', tree).split('\n');

  it("keeps git's guard for racily clean entries: a file rewritten, same size and time as its index entry, is read", async () => {
    // Only mtime seconds and size compared (core.checkStat=minimal), all in one second long past: the
    // checkout's index is as old as the file, so git reads it again; so must a copy of that index.
    repo.git(wt, 'config', 'core.checkStat', 'minimal');
    const then = new Date(Math.floor(Date.now() / 1000) * 1000 - 100_000);
    repo.write(wt, 'src/r.txt', 'one\n');
    fs.utimesSync(path.join(wt, 'src/r.txt'), then, then);
    repo.git(wt, 'add', 'src/r.txt');
    repo.git(wt, 'commit', '-q', '-m', 'r');
    fs.writeFileSync(path.join(wt, 'src/r.txt'), 'two\n');
    fs.utimesSync(path.join(wt, 'src/r.txt'), then, then);
    fs.utimesSync(path.join(location.gitDir, 'index'), then, then);
    assert.match(repo.git(wt, 'diff', '--name-only'), /src\/r\.txt/, 'git itself sees the change');
    assert.equal(blob(await look('rewritten in the same second'), 'src/r.txt'), 'two');
  });

  it('follows edits, deletions, new untracked files, a checkout of another branch and a commit', async () => {
    const first = await look('untouched');
    assert.equal(await look('again, nothing changed'), first);

    repo.editLine(wt, 'src/a.ts', 3, 'edited');
    fs.rmSync(path.join(wt, 'docs/c.md'));
    repo.write(wt, 'src/new.ts', 'new\n');
    repo.write(wt, 'build/out.js', 'ignored\n');
    const edited = await look('edited, deleted, added');
    if (!persist) assert.deepEqual(moved && { from: moved.from, paths: Object.fromEntries(statusesOf(moved.diff)) }, { from: first, paths: { 'docs/c.md': 'D', 'src/a.ts': 'M', 'src/new.ts': 'A' } });
    assert.match(blob(edited, 'src/a.ts'), /^edited$/m);
    assert.deepEqual(paths(edited), ['.gitignore', 'src/a.ts', 'src/b.ts', 'src/new.ts']);

    repo.git(wt, 'add', '-A');
    repo.git(wt, 'commit', '-q', '-m', 'w: work');
    assert.equal(await look('committed'), edited);

    repo.git(wt, 'checkout', '-q', '-b', 'other', 'main');
    const other = await look('another branch checked out');
    assert.deepEqual(paths(other), ['.gitignore', 'docs/c.md', 'src/a.ts', 'src/b.ts']);

    repo.git(wt, 'checkout', '-q', 'w');
    assert.equal(await look('back on the branch'), edited);
  });

  it('sees a file changed twice within one second, same size (racy timestamps)', async () => {
    for (const text of ['one\n', 'two\n', 'six\n']) {
      repo.write(wt, 'src/a.ts', text);
      assert.equal(blob(await look(`src/a.ts = ${text.trim()}`), 'src/a.ts'), text.trim());
    }
    // Stat data identical to the last look's, content not: only git's racy check can tell.
    const { mtime } = fs.statSync(path.join(wt, 'src/a.ts'));
    repo.write(wt, 'src/a.ts', 'ten\n');
    fs.utimesSync(path.join(wt, 'src/a.ts'), mtime, mtime);
    assert.equal(blob(await look('same size and mtime'), 'src/a.ts'), 'ten');
  });

  it('drops an untracked file the kept index took in once it is ignored, and follows what the user stages', async () => {
    repo.write(wt, 'notes.txt', 'scratch\n');
    backdate();
    assert.ok(paths(await look('untracked file')).includes('notes.txt'));
    await look('nothing changed since');
    fs.mkdirSync(path.join(location.commonDir, 'info'), { recursive: true });
    fs.appendFileSync(path.join(location.commonDir, 'info', 'exclude'), 'notes.txt\n');
    assert.ok(!paths(await look('ignored through info/exclude')).includes('notes.txt'));
    fs.appendFileSync(path.join(wt, '.gitignore'), 'src/b.ts\n');
    repo.write(wt, 'src/b.ts', 'tracked, so still seen\n');
    backdate();
    await look('tracked file ignored since');
    repo.git(wt, 'rm', '-q', '--cached', 'src/b.ts');
    // Ignored and no longer in the user's index: the seeded snapshot leaves it out, HEAD's keeps it.
    assert.ok(!paths(await look('unstaged by the user', false)).includes('src/b.ts'));
  });

  it('takes a tracked file that is ignored in again when it is deleted and made again', async () => {
    repo.write(wt, 'build/keep.js', 'forced in\n');
    repo.git(wt, 'add', '--force', 'build/keep.js');
    repo.git(wt, 'commit', '-q', '-m', 'w: a build file, tracked though ignored');
    backdate();
    assert.ok(paths(await look('tracked though ignored')).includes('build/keep.js'));
    fs.rmSync(path.join(wt, 'build/keep.js'));
    assert.ok(!paths(await look('deleted')).includes('build/keep.js'));
    repo.write(wt, 'build/keep.js', 'made again\n');
    backdate();
    assert.equal(blob(await look('made again'), 'build/keep.js'), 'made again');
  });

  it('follows a .gitignore edited alone, anywhere in the tree, and a .gitattributes that changes how an unchanged file is read', async () => {
    repo.write(wt, 'notes.txt', 'scratch\n');
    repo.write(wt, 'src/scratch.ts', 'scratch\n');
    backdate();
    assert.ok(paths(await look('untracked files')).includes('src/scratch.ts'));
    fs.appendFileSync(path.join(wt, '.gitignore'), 'notes.txt\n');
    backdate();
    assert.ok(!paths(await look('ignored by .gitignore')).includes('notes.txt'));
    repo.write(wt, 'src/.gitignore', 'scratch.ts\n');
    backdate();
    assert.ok(!paths(await look('ignored by a new src/.gitignore')).includes('src/scratch.ts'));

    repo.write(wt, 'docs/c.md', 'one\r\ntwo\r\n');
    backdate();
    assert.equal(blob(await look('CRLF, no attributes'), 'docs/c.md'), 'one\r\ntwo');
    repo.write(wt, '.gitattributes', '*.md text eol=lf\n');
    backdate();
    assert.equal(blob(await look('*.md is text now'), 'docs/c.md'), 'one\ntwo');
  });

  if (!persist) it('deletes its indexes on dispose', async () => {
    await look('one look');
    const dir = indexes['dir']!; // private: where the kept indexes are
    assert.equal(fs.readdirSync(dir).length, 1);
    indexes.dispose();
    assert.equal(fs.existsSync(dir), false);
    await assert.rejects(indexes.look(location), /disposed/);
  });
});

/** What only the indexes kept in a checkout's git folder must do: be used by the next process, and survive two at once. */
describe('overlap snapshot indexes kept in the git folder (mam conflicts, one process after another)', () => {
  let repo: OverlapRepo;
  let wt: string;
  let location: CheckoutLocation;
  let kept: string;

  beforeEach(() => {
    repo = new OverlapRepo(tempDir('overlap-kept'), { 'src/a.ts': numberedLines(30, 'a'), 'src/b.ts': numberedLines(30, 'b'), '.gitignore': 'build/\n' });
    wt = repo.addWorktree('w');
    location = { toplevel: wt, gitDir: repo.git(wt, 'rev-parse', '--absolute-git-dir'), commonDir: fs.realpathSync(path.join(repo.main, '.git')) };
    kept = path.join(location.gitDir, 'mam-overlap');
  });

  /** One look by a new checker, with the gits it ran. */
  async function lookOnce(): Promise<{ tree: string; gits: string[] }> {
    const indexes = new SnapshotIndexes({ persist: true });
    const counting = gitsStarted();
    try {
      const { tree } = await indexes.look(location);
      // (The hardening flags' `git config` runs when its cache is older than 2 s: not the look's own.)
      return { tree, gits: counting.stop().gits.filter((g) => g !== 'config') };
    } finally {
      counting.stop();
      indexes.dispose();
    }
  }
  const oneOff = () => worktreeTree(wt, { seedIndex: path.join(location.gitDir, 'index') });
  /**
   * Dates the checkout's files an hour back, as files are minutes after an agent wrote them: an
   * index written in the same second as a file holds it racily clean, and git then reads the file
   * and writes the index again at every add (git compares whole seconds here).
   */
  const backdate = (): void => {
    const then = new Date(Date.now() - 3_600_000);
    for (const f of fs.readdirSync(wt, { recursive: true, encoding: 'utf8' })) if (f !== '.git') fs.utimesSync(path.join(wt, f), then, then);
  };

  it('the next process asks git one add where nothing moved, and writes the tree only where something did', async () => {
    repo.editLine(wt, 'src/a.ts', 3, 'edited');
    backdate();
    const first = await lookOnce();
    assert.deepEqual(first.gits, ['add', 'write-tree'], 'the first look ever seeds from the checkout\'s index');
    assert.deepEqual(fs.readdirSync(kept).sort(), ['index', 'state.json'], 'nothing else left in the git folder');
    const again = await lookOnce();
    assert.deepEqual([again.tree, again.gits], [first.tree, ['add']]);

    repo.editLine(wt, 'src/b.ts', 5, 'edited too');
    backdate();
    const after = await lookOnce();
    assert.deepEqual(after.gits, ['add', 'write-tree']);
    assert.equal(after.tree, await oneOff());
    assert.notEqual(after.tree, first.tree);
    assert.deepEqual((await lookOnce()).gits, ['add'], 'the index the last look wrote was put in place');
  });

  it('looks at once (as processes at once) each get the one-off tree, while files change between them; what is kept after them still holds', async () => {
    for (let round = 0; round < 12; round++) {
      repo.editLine(wt, 'src/a.ts', 1 + (round % 20), `round ${round}`);
      if (round % 3 === 0) repo.write(wt, `src/new-${round}.ts`, `${round}\n`);
      if (round % 4 === 1) fs.rmSync(path.join(wt, `src/new-${round - 1}.ts`), { force: true });
      const expected = await oneOff();
      const trees = await Promise.all([lookOnce(), lookOnce(), lookOnce()]);
      assert.deepEqual(trees.map((t) => t.tree), [expected, expected, expected], `round ${round}`);
    }
    assert.equal((await lookOnce()).tree, await oneOff());
    assert.deepEqual(fs.readdirSync(kept).sort(), ['index', 'state.json'], 'every private copy was put in place or removed');
  });

  it('a state one process wrote beside the index another put in place is not taken for its pair: the look seeds again', async () => {
    backdate();
    const first = await lookOnce();
    const state = path.join(kept, 'state.json');
    const firstState = fs.readFileSync(state);
    repo.editLine(wt, 'src/a.ts', 4, 'second');
    backdate();
    const second = await lookOnce();
    assert.notEqual(second.tree, first.tree);
    // The first process's state landing last, after the second's index was renamed in.
    fs.writeFileSync(state, firstState);
    const third = await lookOnce();
    assert.deepEqual([third.tree, third.gits], [second.tree, ['add', 'write-tree']]);
  });

  it('a state that is not MAM\'s, or one that names paths outside the checkout, is not used: the look seeds again', async () => {
    await lookOnce();
    const state = path.join(kept, 'state.json');
    const good = JSON.parse(fs.readFileSync(state, 'utf8')) as { removed: string[] };
    for (const bad of ['not json', JSON.stringify({ ...good, v: 2 }), JSON.stringify({ ...good, removed: ['../../outside'] }), JSON.stringify({ ...good, tree: 'HEAD' })]) {
      fs.writeFileSync(state, bad);
      repo.editLine(wt, 'src/a.ts', 2, `after ${bad.length}`);
      const look = await lookOnce();
      assert.deepEqual(look.gits, ['add', 'write-tree'], `seeded again after ${bad.slice(0, 30)}`);
      assert.equal(look.tree, await oneOff());
    }
  });

  it('a copy left by a process that died is removed by the next look that keeps an index', async () => {
    await lookOnce();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const stray = path.join(kept, `.index.tmp-${dead}-deadbeef`);
    fs.writeFileSync(stray, 'a copy');
    repo.editLine(wt, 'src/a.ts', 2, 'moved');
    await lookOnce();
    assert.deepEqual(fs.readdirSync(kept).sort(), ['index', 'state.json']);
  });

  it('removing the worktree removes what was kept for it', async () => {
    await lookOnce();
    assert.ok(fs.existsSync(kept));
    repo.git(repo.main, 'worktree', 'remove', '--force', wt);
    assert.equal(fs.existsSync(location.gitDir), false);
  });
});
