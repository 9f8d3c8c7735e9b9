/**
 * git's hardening flags (src/core/base/git.ts) are looked up once per repository when every worktree
 * of it reads the same configuration, and per worktree otherwise. A worktree that reads something
 * its siblings do not — its own config file, or a conditional include only it matches — must still
 * be disarmed; a configuration that cannot be read must run no git; a configuration changed is read
 * again within the same 2 s as before.
 */
import FakeTimers from '@sinonjs/fake-timers';
import { strict as assert } from 'node:assert';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitExec } from '../../src/core/base/git';
import { tempDir } from '../support/helpers';
import { gitsStarted } from '../support/gitsStarted';
import { OverlapRepo } from '../support/overlapRepo';

/** The gits this process starts while `fn` runs, by subcommand. */
async function gitsDuring(fn: () => Promise<unknown>): Promise<string[]> {
  const counting = gitsStarted();
  try {
    await fn();
    return counting.stop().gits;
  } finally {
    counting.stop();
  }
}

describe('faults: one hardening lookup per repository, and a worktree that reads its own configuration', function () {
  this.timeout(60_000);
  let repo: OverlapRepo;
  let marks: string;
  let common: string;
  let w1: string;
  let w2: string;
  /** w2's own git folder (`.git/worktrees/…`). */
  let w2GitDir: string;
  const pwned = (): string[] => (fs.existsSync(marks) ? fs.readdirSync(marks).sort() : []);
  /** Config text naming a clean filter and a merge driver (`name`, which .gitattributes names) that each leave a mark. */
  const programs = (tag: string, name = 'evil'): string => [
    `[filter "${name}"]`,
    `\tclean = "touch ${marks}/${tag}-clean; cat"`,
    `[merge "${name}"]`,
    `\tdriver = "touch ${marks}/${tag}-merge-driver; false"`,
    '',
  ].join('\n');
  /** Changes a.txt in `cwd` and stages it (the clean filter runs) through MAM's git. */
  const stage = async (cwd: string, text: string): Promise<void> => {
    fs.writeFileSync(path.join(cwd, 'a.txt'), text);
    const r = await gitExec(cwd, ['add', 'a.txt']);
    assert.equal(r.exitCode, 0, r.stderr);
  };
  /** Two commits on HEAD each changing a.txt its own way, merged with `git merge-tree` through MAM's git (the merge driver would run). */
  const mergeConflicting = async (cwd: string): Promise<void> => {
    const head = repo.git(cwd, 'rev-parse', 'HEAD');
    const commit = (text: string): string => {
      const blob = childProcess.execFileSync('git', ['hash-object', '-w', '--no-filters', '--stdin'], { cwd, input: text, encoding: 'utf8' }).trim();
      const tree = childProcess.execFileSync('git', ['mktree'], { cwd, input: `100644 blob ${blob}\ta.txt\n100644 blob ${repo.git(cwd, 'rev-parse', 'HEAD:.gitattributes')}\t.gitattributes\n`, encoding: 'utf8' }).trim();
      return repo.git(cwd, 'commit-tree', tree, '-p', head, '-m', text);
    };
    const r = await gitExec(cwd, ['merge-tree', '--write-tree', commit('two\n'), commit('three\n')]);
    assert.notEqual(r.exitCode, 0, 'the merge does not succeed (the driver is emptied, or the two conflict)');
  };
  /** The same two steps through plain git: shows the trap is armed. */
  const plainGitRuns = (cwd: string): void => {
    fs.writeFileSync(path.join(cwd, 'a.txt'), 'plain\n');
    childProcess.execFileSync('git', ['-c', 'core.hooksPath=/dev/null', 'add', 'a.txt'], { cwd, stdio: 'ignore' });
  };

  beforeEach(() => {
    marks = tempDir('marks');
    repo = new OverlapRepo(tempDir('shared-config'), { 'a.txt': 'one\n', '.gitattributes': '*.txt filter=evil merge=evil\n' });
    w1 = repo.addWorktree('w1');
    w2 = repo.addWorktree('w2');
    common = fs.realpathSync(path.join(repo.main, '.git'));
    w2GitDir = repo.git(w2, 'rev-parse', '--absolute-git-dir');
  });

  /** A look at all three checkouts (the main one first) and a conflicting merge in w2, as the overlap check makes them. */
  async function stageAllAndMerge(): Promise<void> {
    await stage(repo.main, 'main\n');
    await stage(w1, 'w1\n');
    await stage(w2, 'w2\n');
    await mergeConflicting(w2);
  }

  it('worktrees that read the same configuration share one lookup, and each is disarmed by it', async () => {
    fs.appendFileSync(path.join(common, 'config'), programs('shared'));
    const gits = await gitsDuring(stageAllAndMerge);
    assert.deepEqual(pwned(), []);
    assert.equal(gits.filter((g) => g === 'config').length, 1, `one lookup for the three worktrees: ${gits.join(' ')}`);
    plainGitRuns(w2);
    assert.deepEqual(pwned(), ['shared-clean'], 'the trap is armed');
  });

  it("a worktree's own config file (extensions.worktreeConfig) is read by a lookup of its own", async () => {
    repo.git(repo.main, 'config', 'extensions.worktreeConfig', 'true');
    fs.writeFileSync(path.join(w2GitDir, 'config.worktree'), programs('worktree'));
    const gits = await gitsDuring(stageAllAndMerge);
    assert.deepEqual(pwned(), []);
    assert.equal(gits.filter((g) => g === 'config').length, 3, `a lookup per worktree: ${gits.join(' ')}`);
    plainGitRuns(w2);
    assert.deepEqual(pwned(), ['worktree-clean'], 'the trap is armed');
  });

  for (const [kind, condition] of [['gitdir:', () => `gitdir:${w2GitDir}`], ['onbranch:', () => 'onbranch:w2']] as const) {
    it(`a conditional include (includeIf "${kind}…") only one worktree matches is read by that worktree's own lookup`, async () => {
      const included = path.join(tempDir('included'), 'programs.config');
      fs.writeFileSync(included, programs('included'));
      fs.appendFileSync(path.join(common, 'config'), `[includeIf "${condition()}"]\n\tpath = ${included}\n`);
      // The lookup in the main checkout first: there the include does not apply.
      await stageAllAndMerge();
      assert.deepEqual(pwned(), []);
      plainGitRuns(w1);
      assert.deepEqual(pwned(), [], 'w1 does not match the condition');
      plainGitRuns(w2);
      assert.deepEqual(pwned(), ['included-clean'], 'the trap is armed in w2');
    });
  }

  it('a repository value posing as a global credential helper is not handed on', async () => {
    repo.git(repo.main, 'config', 'credential.helper', `x\nglobal\tcredential.helper !touch ${marks}/helper`);
    const r = await gitExec(w1, ['credential', 'fill'], { input: 'protocol=https\nhost=example.invalid\n\n' });
    assert.notEqual(r.exitCode, 0, 'no credentials (and no prompt)');
    assert.deepEqual(pwned(), []);
  });

  it('a configuration that cannot be read runs no git, in any worktree', async () => {
    fs.appendFileSync(path.join(common, 'config'), programs('broken'));
    fs.appendFileSync(path.join(common, 'config'), '[broken\n');
    const gits = await gitsDuring(async () => {
      const results = await Promise.allSettled([stage(repo.main, 'main\n'), stage(w1, 'w1\n'), stage(w2, 'w2\n')]);
      for (const r of results) assert.match(r.status === 'rejected' ? String(r.reason) : 'ran', /cannot read the git configuration/);
    });
    assert.deepEqual([...new Set(gits)], ['config'], `only lookups ran: ${gits.join(' ')}`);
    assert.deepEqual(pwned(), []);
  });

  it('a configuration changed after a lookup is read again 2 s later, as before, in every worktree', async () => {
    const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() });
    try {
      await stage(repo.main, 'main\n');
      fs.appendFileSync(path.join(common, 'config'), programs('later'));
      clock.tick(2_001);
      await stage(w1, 'w1\n');
      await stage(w2, 'w2\n');
      await mergeConflicting(w2);
      assert.deepEqual(pwned(), []);
      // The shared answer goes stale too: a worktree config appearing makes each look up its own.
      // (A filter of another name, which w2's .gitattributes names: the flags looked up for the others do not empty it.)
      repo.git(repo.main, 'config', 'extensions.worktreeConfig', 'true');
      fs.writeFileSync(path.join(w2GitDir, 'config.worktree'), programs('worktree', 'own'));
      fs.writeFileSync(path.join(w2, '.gitattributes'), '*.txt filter=own merge=own\n');
      clock.tick(2_001);
      await stage(repo.main, 'main again\n');
      await stage(w2, 'w2 again\n');
      assert.deepEqual(pwned(), []);
    } finally {
      clock.uninstall();
    }
    plainGitRuns(w1);
    plainGitRuns(w2);
    assert.deepEqual(pwned(), ['later-clean', 'worktree-clean'], 'the traps are armed');
  });
});
