/**
 * A repository whose own `.git/config` and `.gitattributes` name programs — what a cloned
 * stranger's repository, or an agent, can write — must not make MAM start any of them. Every git MAM
 * runs (snapshots, diffs, file contents, .gitignore checks, worktrees, the overlap check's merges)
 * goes through src/core/base/git.ts.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitExec, gitThenWriteTree } from '../../src/core/base/git';
import { missingIgnores } from '../../src/core/config/gitignore';
import { MemoryLogger } from '../../src/core/base/log';
import { changedFiles, fileAt, snapshotDiff, snapshotIdentity } from '../../src/core/loop/snapshot';
import { OverlapChecker } from '../../src/core/overlap/overlapChecker';
import { IssueWorktrees } from '../../src/core/worktree/worktree';
import { tempDir } from '../support/helpers';
import { sessionRow } from '../support/rows';

describe('faults: a hostile repository configuration runs nothing', function () {
  this.timeout(60_000);
  let repo: string;
  let marks: string;
  const pwned = () => (fs.existsSync(marks) ? fs.readdirSync(marks).sort() : []);
  const trap = (name: string) => `sh -c 'touch ${marks}/${name}; cat'`;
  /** A filter name (no space: a .gitattributes value ends at one) that a shell reading it as script would run three commands from. */
  const oddFilter = () => `odd;touch\${IFS}${marks}/semicolon;$(touch\${IFS}${marks}/dollar)\`touch\${IFS}${marks}/backquote\``;

  beforeEach(() => {
    repo = tempDir('hostile');
    marks = tempDir('marks');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@t.invalid', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@t.invalid' } });
    git('init', '-q');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
    git('add', '-A');
    git('commit', '-qm', 'initial');
    // Written after the commit, as a stranger's repository arrives: each names a program.
    const hooks = path.join(repo, '.git', 'hooks');
    for (const hook of ['post-checkout', 'pre-commit', 'post-commit', 'reference-transaction']) {
      fs.writeFileSync(path.join(hooks, hook), `#!/bin/sh\ntouch ${marks}/hook-${hook}\n`, { mode: 0o755 });
    }
    fs.writeFileSync(path.join(marks, '..', 'fake-gpg'), `#!/bin/sh\ntouch ${marks}/gpg\nexit 1\n`, { mode: 0o755 });
    fs.appendFileSync(path.join(repo, '.git', 'config'), [
      '[core]',
      `\tfsmonitor = "touch ${marks}/fsmonitor; false"`,
      `\tpager = "${trap('pager')}"`,
      '[filter "evil"]',
      `\tclean = "${trap('clean')}"`,
      `\tsmudge = "${trap('smudge')}"`,
      '[diff "evil"]',
      `\ttextconv = "${trap('textconv')}"`,
      `\tcommand = "${trap('diff-command')}"`,
      // A filter whose name is shell text: the flags that disarm it name it, and reach git through a shell's "$@" (base/git.ts's gitThenWriteTree) without being read as script.
      `[filter "${oddFilter()}"]`,
      `\tclean = "${trap('clean-odd')}"`,
      '[merge "evil"]',
      `\tdriver = "touch ${marks}/merge-driver; false"`,
      '[diff]',
      `\texternal = "${trap('external-diff')}"`,
      '[commit]',
      '\tgpgsign = true',
      '[gpg]',
      `\tprogram = "${path.join(marks, '..', 'fake-gpg')}"`,
      '',
    ].join('\n'));
    fs.writeFileSync(path.join(repo, '.gitattributes'), `*.txt filter=evil diff=evil merge=evil\n*.odd filter=${oddFilter()}\n`);
    fs.writeFileSync(path.join(repo, 'c.odd'), 'odd\n');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'two\n');
    fs.writeFileSync(path.join(repo, 'b.txt'), 'new\n');
  });

  it('the git a plain `git status` would be tricked by really is armed', () => {
    execFileSync('git', ['status', '--porcelain'], { cwd: repo, stdio: 'ignore' });
    assert.ok(pwned().includes('fsmonitor'), `the fsmonitor trap works: ${pwned().join(', ')}`);
  });

  it('a plain git merge-tree starts the merge driver (the trap is armed)', () => {
    const git = (args: string[], input?: string) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', input, env: { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@t.invalid', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@t.invalid' } }).trim();
    const base = git(['rev-parse', 'HEAD']);
    // Two commits on the initial one, each changing a.txt its own way.
    const commit = (text: string): string => {
      const blob = git(['hash-object', '-w', '--no-filters', '--stdin'], text);
      return git(['commit-tree', git(['mktree'], `100644 blob ${blob}\ta.txt\n`), '-p', base, '-m', text]);
    };
    try {
      execFileSync('git', ['merge-tree', '--write-tree', commit('two\n'), commit('three\n')], { cwd: repo, stdio: 'ignore' });
    } catch {
      // a conflict: exit 1
    }
    assert.ok(pwned().includes('merge-driver'), `the merge driver trap works: ${pwned().join(', ')}`);
  });

  it('the overlap check of two conflicting worktrees (snapshots, merges, line ranges, watches) starts none of them, merged in either', async () => {
    // git reads a merge's attributes in the checkout it merges in, the first by path: the worktree
    // ('a-…') or the repository ('hostile-…'). The worktree, made from HEAD, lacks the uncommitted
    // .gitattributes (merged there a.txt just conflicted, and this failed when the random names put
    // it first); the repository's own attributes file names the driver for both.
    fs.writeFileSync(path.join(repo, '.git', 'info', 'attributes'), '*.txt merge=evil\n');
    for (const [prefix, branch] of [['a', 'first'], ['z', 'last']] as const) {
      const wt = path.join(tempDir(prefix), 'wt');
      // Made with the traps held off (this is the test's own git, not MAM's).
      execFileSync('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', 'worktree', 'add', '-q', '-b', branch, wt, 'HEAD'], { cwd: repo });
      assert.deepEqual(pwned(), []);
      fs.writeFileSync(path.join(wt, 'a.txt'), 'three\n');
      const checker = new OverlapChecker({ watch: true });
      try {
        const report = await checker.check([sessionRow('one', { cwd: repo }), sessionRow('two', { cwd: wt })]);
        assert.equal(report.checkouts[0]?.checkout === wt, prefix === 'a', `the worktree is merged in ${prefix === 'a' ? 'first' : 'second'}`);
        assert.deepEqual(report.pairs.map((p) => p.files.map((f) => f.path)), [['a.txt']], JSON.stringify(report));
        assert.match(report.pairs[0]!.merge_error ?? '', /./, `merged in ${report.checkouts[0]?.checkout}: the merge is not predicted (git would have run the driver)`);
      } finally {
        checker.dispose();
      }
      assert.deepEqual(pwned(), []);
    }
  });

  it('snapshots, diffs, file contents and the .gitignore check start none of them', async () => {
    const base = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    // Checked first, whether or not the snapshot was written: what ran is the question here.
    const id = await snapshotIdentity(repo, base, 'l-hostile/r1').finally(() => assert.deepEqual(pwned(), [], 'the snapshot started none of them'));
    assert.deepEqual((await changedFiles(repo, id)).map((f) => f.path).sort(), ['.gitattributes', 'a.txt', 'b.txt', 'c.odd']);
    assert.match(await snapshotDiff(repo, id), /^\+two$/m, 'the diff shows the content, not what a textconv made of it');
    assert.equal(await fileAt(repo, id.tree, 'a.txt'), 'two\n');
    await missingIgnores(repo);
    assert.deepEqual(pwned(), []);
  });

  it("a repository's own executable named git is never started, even with PATH naming the current folder first", async () => {
    fs.writeFileSync(path.join(repo, 'git'), `#!/bin/sh\ntouch ${marks}/repository-git\nexit 0\n`, { mode: 0o755 });
    const env = { PATH: `.${path.delimiter}${process.env.PATH}` };
    const r = await gitExec(repo, ['status', '--porcelain'], { env });
    assert.match(r.stdout, /^\?\? git$/m, 'the real git ran: it lists the file');
    await gitThenWriteTree(repo, ['add', '--all', '--', '.'], { env: { ...env, GIT_INDEX_FILE: path.join(tempDir('hostile-index'), 'index') } });
    assert.deepEqual(pwned(), []);
  });

  it('preparing and removing an issue worktree starts none of them', async () => {
    const manager = new IssueWorktrees(repo, { logger: new MemoryLogger() });
    const prepared = await manager.prepare('42');
    assert.ok(fs.existsSync(path.join(prepared.path, 'a.txt')));
    await manager.remove('42');
    assert.deepEqual(pwned(), []);
  });
});
