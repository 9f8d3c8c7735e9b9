import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { discoverCheckout } from '../../src/core/overlap/gitDiscovery';
import { tempDir } from '../support/helpers';
import { OverlapRepo } from '../support/overlapRepo';

/** What git itself says about `cwd` (real paths), or undefined when it is not in a work tree. */
function gitSays(cwd: string): { toplevel: string; gitDir: string; commonDir: string } | undefined {
  try {
    const [toplevel, gitDir, commonDir] = execFileSync('git', ['rev-parse', '--path-format=absolute', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n').map((p) => fs.realpathSync(p));
    return { toplevel: toplevel!, gitDir: gitDir!, commonDir: commonDir! };
  } catch {
    return undefined;
  }
}

/** Finding a checkout without git must give git's own answer, or hand the question to git. */
describe("overlap: a checkout found as git finds it, without starting git", () => {
  let repo: OverlapRepo;
  let wt: string;

  beforeEach(() => {
    repo = new OverlapRepo(tempDir('discovery'), { 'src/a/b.ts': 'b\n', 'README.md': 'r\n' });
    wt = repo.addWorktree('w');
  });

  it("gives git's answer for a checkout, a linked worktree, their subfolders, and a separate git folder", () => {
    const separate = path.join(tempDir('separate'), 'work');
    execFileSync('git', ['init', '-q', `--separate-git-dir=${path.join(path.dirname(separate), 'store.git')}`, separate]);
    fs.mkdirSync(path.join(separate, 'deep/er'), { recursive: true });
    for (const cwd of [repo.main, path.join(repo.main, 'src/a'), wt, path.join(wt, 'src'), separate, path.join(separate, 'deep/er')]) {
      const expected = gitSays(cwd);
      assert.ok(expected, `git finds ${cwd}`);
      assert.deepEqual(discoverCheckout(cwd), expected, cwd);
    }
  });

  it('says no repository where git says so, and asks git where its answer could differ', () => {
    assert.equal(discoverCheckout(tempDir('plain')), undefined);
    assert.equal(gitSays(tempDir('plain')), undefined);
    assert.equal(discoverCheckout(path.join(repo.main, '.git')), 'ask-git', 'inside the git folder');
    const bare = path.join(tempDir('bare'), 'b.git');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    assert.equal(discoverCheckout(bare), 'ask-git', 'a bare repository');
    assert.equal(discoverCheckout(wt, { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(wt) }), 'ask-git');
    repo.git(repo.main, 'config', 'core.worktree', repo.main);
    assert.equal(discoverCheckout(repo.main), 'ask-git', 'core.worktree set');
    repo.git(repo.main, 'config', '--unset', 'core.worktree');
    repo.git(repo.main, 'config', 'include.path', 'more.config');
    assert.equal(discoverCheckout(wt), 'ask-git', 'the config includes another file');
    fs.writeFileSync(path.join(wt, '.git'), 'gitdir: /nowhere/at/all\n');
    assert.equal(discoverCheckout(wt), 'ask-git', 'a .git file naming no git folder');
  });
});
