import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitThenWriteTree } from '../../src/core/base/git';
import { changedFiles, fileAt, resolveCommit, snapshotDiff, snapshotIdentity, worktreeTree } from '../../src/core/loop/snapshot';
import { UsageError } from '../../src/core/base/errors';
import { tempDir } from '../support/helpers';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.invalid' };

describe('snapshot identities (real git)', () => {
  let repo: string;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    fs.writeFileSync(path.join(repo, file), text);
  };
  let base: string;

  beforeEach(() => {
    repo = tempDir('snap');
    git('init', '-q');
    write('a.txt', 'one\n');
    write('old-name.txt', 'moved\n'.repeat(20));
    write('.gitignore', 'build/\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
    base = git('rev-parse', 'HEAD');
  });

  it('the tree covers committed, staged, unstaged and untracked files, not ignored ones or .mam/', async () => {
    const clean = await snapshotIdentity(repo, base);
    assert.deepEqual(clean, { base, head: base, tree: git('rev-parse', 'HEAD^{tree}') }, 'a clean checkout: the tree is HEAD\'s');
    const seen = new Set([clean.tree]);
    const step = async (what: string, change: () => void) => {
      change();
      const id = await snapshotIdentity(repo, base);
      assert.ok(!seen.has(id.tree), `${what} changes the tree`);
      seen.add(id.tree);
    };
    await step('an unstaged edit', () => write('a.txt', 'two\n'));
    await step('an untracked file', () => write('new/b.txt', 'b\n'));
    await step('a staged edit', () => {
      write('a.txt', 'three\n');
      git('add', 'a.txt');
    });
    const before = await snapshotIdentity(repo, base);
    write('build/out.js', 'ignored\n');
    write('.mam/loops/l-1.json', '{}\n');
    write('.mam.env', 'MAM_BROKER_PASSWORD=secret\n');
    assert.deepEqual(await snapshotIdentity(repo, base), before, 'ignored files, .mam/ and .mam.env do not count');
  });

  it('MAM writing its own files while git runs never fails or changes a snapshot, .mam/ ignored or not', async function () {
    this.timeout(60_000);
    write('a.txt', 'under review\n');
    const expected = (await snapshotIdentity(repo, base)).tree;
    // What the control plane does during a round: lock directories made and renamed away, events
    // appended, files replaced by rename — as fast as it can, in another process.
    const churn = spawn(process.execPath, ['-e', `
      const fs = require('fs'), path = require('path');
      const dir = path.join(process.argv[1], '.mam');
      for (let i = 0; ; i++) {
        const lock = path.join(dir, 'locks', 'job-' + (i % 7) + '.lock');
        fs.mkdirSync(lock, { recursive: true });
        fs.writeFileSync(path.join(lock, 'owner'), String(i));
        fs.rmSync(lock, { recursive: true, force: true });
        fs.appendFileSync(path.join(dir, 'events.ndjson'), i + '\\n');
        fs.writeFileSync(path.join(dir, 'job.json.tmp'), String(i));
        fs.renameSync(path.join(dir, 'job.json.tmp'), path.join(dir, 'job-' + (i % 3) + '.json'));
      }`, repo], { stdio: 'ignore' });
    try {
      for (const ignored of [false, true]) {
        if (ignored) write('.gitignore', 'build/\n.mam/\n.mam.env\n');
        const want = ignored ? (await snapshotIdentity(repo, base)).tree : expected;
        for (let i = 0; i < 30; i++) {
          if (i % 10 === 0) write('.mam.env', `MQTT_PASSWORD=${i}\n`);
          assert.equal((await snapshotIdentity(repo, base, `l-race/r${i}`)).tree, want, `snapshot ${i} (.mam/ ${ignored ? '' : 'not '}ignored)`);
        }
      }
    } finally {
      churn.kill('SIGKILL');
    }
  });

  it('a snapshot is one git add and one write-tree from one shell: the tree of the index the add wrote, or the add\'s failure in git\'s words', async () => {
    write('a.txt', 'two\n');
    write('new.txt', 'new\n');
    const index = path.join(tempDir('snap-index'), 'index');
    fs.copyFileSync(path.join(repo, '.git', 'index'), index);
    const r = await gitThenWriteTree(repo, ['add', '--all', '--', '.'], { env: { GIT_INDEX_FILE: index } });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout.trim(), execFileSync('git', ['write-tree'], { cwd: repo, env: { ...process.env, GIT_INDEX_FILE: index }, encoding: 'utf8' }).trim(), 'the tree of the index the add wrote');
    assert.equal(git('ls-tree', '--name-only', r.stdout.trim()).split('\n').sort().join(' '), '.gitignore a.txt new.txt old-name.txt');
    fs.writeFileSync(index, 'not an index');
    const failed = await gitThenWriteTree(repo, ['add', '--all', '--', '.'], { env: { GIT_INDEX_FILE: index } });
    assert.notEqual(failed.exitCode, 0);
    assert.equal(failed.stdout, '', 'no write-tree after a failed add');
    assert.match(failed.stderr, /index file/);
  });

  it('a checkout whose own index git cannot read gets its snapshot from HEAD and its working tree', async () => {
    write('a.txt', 'two\n');
    write('new.txt', 'new\n');
    const seeded = await worktreeTree(repo, { seedIndex: path.join(repo, '.git', 'index') });
    const garbage = path.join(tempDir('snap-seed'), 'index');
    fs.writeFileSync(garbage, 'not an index');
    assert.equal(await worktreeTree(repo, { seedIndex: garbage }), seeded);
  });

  it('never touches the user\'s index', async () => {
    write('a.txt', 'staged\n');
    git('add', 'a.txt');
    write('a.txt', 'staged, then edited\n');
    write('untracked.txt', 'u\n');
    const status = git('status', '--porcelain=v1');
    const index = fs.readFileSync(path.join(repo, '.git', 'index'));
    await snapshotIdentity(repo, base, 'l-test/r1');
    assert.equal(git('status', '--porcelain=v1'), status);
    assert.deepEqual(fs.readFileSync(path.join(repo, '.git', 'index')), index);
  });

  it('a kept snapshot stays readable after the code moves on: changed files, diff, file contents', async () => {
    write('a.txt', 'reviewed\n');
    git('mv', 'old-name.txt', 'new-name.txt');
    write('added.txt', 'new\n');
    fs.rmSync(path.join(repo, '.gitignore'));
    const id = await snapshotIdentity(repo, base, 'l-test/r1');
    assert.equal(git('rev-parse', 'refs/mam/snapshots/l-test/r1^{tree}'), id.tree, 'kept under refs/mam/snapshots/');

    write('a.txt', 'moved on\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'later');
    git('gc', '--prune=now', '--quiet');

    const files = await changedFiles(repo, id);
    assert.deepEqual(files.sort((x, y) => x.path.localeCompare(y.path)), [
      { status: 'D', path: '.gitignore' },
      { status: 'M', path: 'a.txt' },
      { status: 'A', path: 'added.txt' },
      { status: 'R', from: 'old-name.txt', path: 'new-name.txt' },
    ]);
    assert.equal(await fileAt(repo, id.tree, 'a.txt'), 'reviewed\n');
    assert.equal(await fileAt(repo, id.base, 'a.txt'), 'one\n');
    assert.equal(await fileAt(repo, id.tree, 'old-name.txt'), undefined);
    const diff = await snapshotDiff(repo, id);
    assert.match(diff, /-one\n\+reviewed/);
    assert.match(diff, /rename from old-name\.txt/);
  });

  it('cuts a huge diff and says how to see all of it', async () => {
    write('big.txt', 'x'.repeat(50_000));
    const id = await snapshotIdentity(repo, base);
    const diff = await snapshotDiff(repo, id, 1_000);
    assert.ok(diff.length < 3_000);
    assert.match(diff, new RegExp(`diff cut at 1000 bytes; run \`git diff ${base} ${id.tree}\``));
  });

  it('an unknown or option-like revision is a usage error naming it', async () => {
    await assert.rejects(resolveCommit(repo, 'no-such'), (e: unknown) => e instanceof UsageError && /unknown revision 'no-such'/.test(e.message));
    await assert.rejects(resolveCommit(repo, '--all'), (e: unknown) => e instanceof UsageError && /'--all' is not a revision/.test(e.message));
    assert.equal(await resolveCommit(repo, 'HEAD'), base);
  });
});
