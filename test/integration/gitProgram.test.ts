import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitExec, gitThenWriteTree } from '../../src/core/base/git';
import { isAlive, whichProgram } from '../../src/core/base/process';
import { tempDir, until } from '../support/helpers';

describe('git by its path, looked up once per PATH (real git)', () => {
  let repo: string;
  const realGit = whichProgram('git', process.env.PATH ?? '')!;

  beforeEach(() => {
    repo = tempDir('git-program');
    execFileSync('git', ['init', '-q'], { cwd: repo });
    fs.writeFileSync(path.join(repo, 'a.txt'), 'a\n');
  });

  /** A folder whose `git` notes each start in `used`, then runs the real one. */
  function gitFolder(): { dir: string; starts: () => number } {
    const dir = tempDir('git-bin');
    fs.writeFileSync(path.join(dir, 'git'), `#!/bin/sh\necho >> "${dir}/used"\nexec "${realGit}" "$@"\n`, { mode: 0o755 });
    return { dir, starts: () => (fs.existsSync(path.join(dir, 'used')) ? fs.readFileSync(path.join(dir, 'used'), 'utf8').length : 0) };
  }

  it('a git that went away after it was looked up is looked up again, and the command still runs', async () => {
    const first = gitFolder();
    const env = { PATH: `${first.dir}${path.delimiter}${process.env.PATH}` };
    assert.equal((await gitExec(repo, ['--version'], { env })).exitCode, 0);
    const afterOne = first.starts();
    assert.ok(afterOne > 0, 'the first git on PATH ran');
    fs.rmSync(path.join(first.dir, 'git'));
    const r = await gitExec(repo, ['status', '--porcelain'], { env });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /a\.txt/);
    assert.equal(first.starts(), afterOne);
  });

  it("a snapshot's shell whose git went away is started again with the git found now", async () => {
    const first = gitFolder();
    const env = { PATH: `${first.dir}${path.delimiter}${process.env.PATH}` };
    const index = path.join(tempDir('git-program-index'), 'index');
    const tree = async () => gitThenWriteTree(repo, ['add', '--all', '--', '.'], { env: { ...env, GIT_INDEX_FILE: index } });
    const one = await tree();
    assert.equal(one.exitCode, 0, one.stderr);
    assert.ok(first.starts() > 0);
    fs.rmSync(path.join(first.dir, 'git'));
    const two = await tree();
    assert.equal(two.exitCode, 0, two.stderr);
    assert.equal(two.stdout, one.stdout, 'the same tree');
  });

  it("a snapshot's shell stopped by its timeout stops the git add it started", async () => {
    // The user's own clean filter (kept: only a repository's own are disarmed) holds the add up.
    const home = tempDir('git-program-home');
    const marks = tempDir('git-program-marks');
    fs.writeFileSync(path.join(home, '.gitconfig'), `[filter "slow"]\n\tclean = "echo $PPID > ${marks}/add; echo $$ > ${marks}/filter; exec sleep 30"\n`);
    fs.writeFileSync(path.join(repo, '.gitattributes'), '*.txt filter=slow\n');
    const index = path.join(tempDir('git-program-index'), 'index');
    const read = (name: string) => Number(fs.readFileSync(path.join(marks, name), 'utf8'));
    try {
      await assert.rejects(gitThenWriteTree(repo, ['add', '--all', '--', '.'], { env: { HOME: home, GIT_INDEX_FILE: index }, timeoutMs: 1_000 }), /git add was stopped by SIGTERM after 1000 ms/);
      assert.ok(fs.existsSync(path.join(marks, 'add')), 'the add was under way');
      const add = read('add');
      await until(() => !isAlive(add), 10_000, 'the git add the shell started to end with it');
    } finally {
      if (fs.existsSync(path.join(marks, 'filter'))) process.kill(read('filter'));
    }
  });
});

