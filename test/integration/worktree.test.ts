import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCommandArgs } from '../../src/cli/args';
import type { CommandContext } from '../../src/cli/command';
import { worktreeCommands } from '../../src/cli/commands/worktree';
import { MamError } from '../../src/core/base/errors';
import { exec } from '../../src/core/base/exec';
import { MemoryLogger } from '../../src/core/base/log';
import { acquire } from '../../src/core/store/lock';
import { IssueWorktrees } from '../../src/core/worktree/worktree';
import { snapshotTree, tempDir } from '../support/helpers';

/** For the test's own commits; the code under test never commits. */
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'MAM Test',
  GIT_AUTHOR_EMAIL: 'test@mam.invalid',
  GIT_COMMITTER_NAME: 'MAM Test',
  GIT_COMMITTER_EMAIL: 'test@mam.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};
/** Our submodules are local folders, which git clones only when file transport is allowed. */
const ALLOW_FILE = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'protocol.file.allow', GIT_CONFIG_VALUE_0: 'always' };

async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await exec('git', args, { cwd, env: GIT_ENV });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')} in ${cwd} failed: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

async function commitFile(repo: string, file: string, text: string): Promise<string> {
  fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
  fs.writeFileSync(path.join(repo, file), text);
  await git(repo, 'add', '--', file);
  await git(repo, 'commit', '-q', '-m', `write ${file}`);
  return git(repo, 'rev-parse', 'HEAD');
}

/** A repository with two commits; `.mam/` deliberately not in .gitignore. */
async function makeRepo(prefix = 'repo'): Promise<{ dir: string; first: string; second: string }> {
  const dir = fs.realpathSync(tempDir(prefix));
  await git(dir, 'init', '-q');
  const first = await commitFile(dir, 'README.md', 'one\n');
  const second = await commitFile(dir, 'src/two.txt', 'two\n');
  return { dir, first, second };
}

async function addSubmodule(superRepo: string, sub: string, at: string): Promise<void> {
  await git(superRepo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, at);
  await git(superRepo, 'commit', '-q', '-m', `add ${at}`);
}

/** A workspace with submodule libs/sub, which has its own submodule deps/inner. */
async function makeRepoWithNestedSubmodules(): Promise<string> {
  const inner = (await makeRepo('inner')).dir;
  const sub = (await makeRepo('sub')).dir;
  await addSubmodule(sub, inner, 'deps/inner');
  const ws = (await makeRepo('ws')).dir;
  await addSubmodule(ws, sub, 'libs/sub');
  return ws;
}

function worktrees(ws: string, logger = new MemoryLogger(), gitEnv: Record<string, string> = ALLOW_FILE): IssueWorktrees {
  return new IssueWorktrees(ws, { logger, gitEnv });
}

/** Awaits a promise that must reject with a one-line MamError carrying `exitCode`; returns its message. */
async function failure(promise: Promise<unknown>, exitCode: number): Promise<string> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof MamError, `expected a MamError, got ${caught === undefined ? 'success' : String(caught)}`);
  assert.equal(caught.exitCode, exitCode, caught.message);
  assert.ok(!caught.message.includes('\n'), `one line: ${caught.message}`);
  return caught.message;
}

/** The workspace on disk, minus lock folders (which a lock leaves behind, empty). */
function snapshot(ws: string): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshotTree(ws)).filter(([k]) => !k.startsWith(path.join('.mam', 'locks'))));
}

describe('issue worktrees (core)', function () {
  this.timeout(60_000);

  it('prepare creates .mam/worktrees/ISSUE on a new branch at HEAD and leaves the main checkout clean', async () => {
    const { dir: ws, second } = await makeRepo();
    const before = await git(ws, 'status', '--porcelain');
    assert.equal(before, '');
    const logger = new MemoryLogger();
    const w = await worktrees(ws, logger).prepare('issue-42');
    assert.deepEqual(w, {
      issue: 'issue-42',
      path: path.join(ws, '.mam', 'worktrees', 'issue-42'),
      branch: 'mam/issue-42',
      base: second,
      head: second,
      created: true,
      branchCreated: true,
    });
    assert.equal(fs.readFileSync(path.join(w.path, 'src', 'two.txt'), 'utf8'), 'two\n');
    assert.equal(await git(w.path, 'symbolic-ref', '--short', 'HEAD'), 'mam/issue-42');
    assert.equal(await git(ws, 'rev-parse', 'mam/issue-42'), second);
    assert.equal(await git(ws, 'status', '--porcelain', '--untracked-files=all'), before, 'the main checkout does not see the worktree');
    assert.deepEqual(logger.messages('warn'), []);
  });

  it('prepare again reuses the worktree and what is in it', async () => {
    const { dir: ws } = await makeRepo();
    const first = await worktrees(ws).prepare('7');
    fs.writeFileSync(path.join(first.path, 'work-in-progress.txt'), 'keep me\n');
    const again = await worktrees(ws).prepare('7');
    assert.equal(again.created, false);
    assert.equal(again.path, first.path);
    assert.equal(again.head, first.head);
    assert.equal(fs.readFileSync(path.join(again.path, 'work-in-progress.txt'), 'utf8'), 'keep me\n');
    assert.equal((await git(ws, 'worktree', 'list', '--porcelain')).split('\n').filter((l) => l.startsWith('worktree ')).length, 2);
  });

  it('prepare --base starts the branch at an older commit', async () => {
    const { dir: ws, first } = await makeRepo();
    const w = await worktrees(ws).prepare('old', { base: 'HEAD~1' });
    assert.deepEqual([w.base, w.head], [first, first]);
    assert.equal(await git(ws, 'rev-parse', 'mam/old'), first);
    assert.ok(!fs.existsSync(path.join(w.path, 'src', 'two.txt')), 'the second commit is not in the worktree');
    assert.equal(await git(w.path, 'status', '--porcelain'), '');
  });

  it('remove takes a clean worktree away and keeps its branch; prepare checks that branch out again', async () => {
    const { dir: ws } = await makeRepo();
    const w = await worktrees(ws).prepare('fix');
    const commit = await commitFile(w.path, 'fix.txt', 'fixed\n');
    const removed = await worktrees(ws).remove('fix');
    assert.deepEqual(removed, { issue: 'fix', path: w.path, branch: 'mam/fix', head: commit, alreadyGone: false });
    assert.ok(!fs.existsSync(w.path));
    assert.ok(!(await git(ws, 'worktree', 'list', '--porcelain')).includes(w.path));
    assert.equal(await git(ws, 'rev-parse', 'mam/fix'), commit, 'the branch and its commit are kept');
    assert.equal(await git(ws, 'status', '--porcelain', '--untracked-files=all'), '');

    const back = await worktrees(ws).prepare('fix');
    assert.deepEqual([back.created, back.branchCreated, back.head], [true, false, commit]);
    assert.equal(fs.readFileSync(path.join(back.path, 'fix.txt'), 'utf8'), 'fixed\n');
  });

  it('remove refuses while the worktree has modified or untracked files, naming it, and removes nothing', async () => {
    const { dir: ws } = await makeRepo();
    const w = await worktrees(ws).prepare('dirty');
    fs.appendFileSync(path.join(w.path, 'README.md'), 'more\n');
    fs.mkdirSync(path.join(w.path, 'new'));
    fs.writeFileSync(path.join(w.path, 'new', 'untracked.txt'), 'x\n');
    const before = snapshot(ws);
    const message = await failure(worktrees(ws).remove('dirty'), 1);
    assert.match(message, /the worktree \.mam\/worktrees\/dirty \(2 changed files\)/);
    assert.doesNotMatch(message, /submodule/);
    assert.deepEqual(snapshot(ws), before, 'nothing changed on disk');
  });

  it('remove refuses while commits sit on a detached HEAD that nothing else reaches', async () => {
    const { dir: ws } = await makeRepo();
    const w = await worktrees(ws).prepare('detached');
    await git(w.path, 'checkout', '-q', '--detach');
    await commitFile(w.path, 'lonely.txt', 'x\n');
    assert.match(await failure(worktrees(ws).remove('detached'), 1), /\(1 commit on a detached HEAD\)/);
    assert.ok(fs.existsSync(path.join(w.path, 'lonely.txt')));
  });

  describe('with submodules', () => {
    let ws: string;
    before(async () => {
      ws = await makeRepoWithNestedSubmodules();
    });

    it('prepare initializes submodules recursively; a clean one is removed', async () => {
      const w = await worktrees(ws).prepare('subs');
      assert.ok(fs.existsSync(path.join(w.path, 'libs', 'sub', 'src', 'two.txt')));
      assert.ok(fs.existsSync(path.join(w.path, 'libs', 'sub', 'deps', 'inner', 'src', 'two.txt')));
      assert.equal(await git(ws, 'status', '--porcelain', '--untracked-files=all'), '');
      const removed = await worktrees(ws).remove('subs');
      assert.equal(removed.branch, 'mam/subs');
      assert.ok(!fs.existsSync(w.path));
    });

    it('remove refuses while a submodule, at any depth, is dirty or has unpushed commits, naming it', async () => {
      const w = await worktrees(ws).prepare('subdirty');
      const inner = path.join(w.path, 'libs', 'sub', 'deps', 'inner');
      fs.appendFileSync(path.join(inner, 'README.md'), 'changed\n');
      const before = snapshot(ws);
      const message = await failure(worktrees(ws).remove('subdirty'), 1);
      assert.match(message, /submodule libs\/sub\/deps\/inner \(1 changed file\)/);
      assert.doesNotMatch(message, /the worktree|submodule libs\/sub \(/, 'only the dirty one is named');
      assert.deepEqual(snapshot(ws), before, 'nothing changed on disk');

      // Committed but not pushed: the submodule's repository lives in the worktree's git dir and
      // would be deleted with it.
      await git(inner, 'commit', '-q', '-am', 'local only');
      assert.match(await failure(worktrees(ws).remove('subdirty'), 1), /submodule libs\/sub\/deps\/inner \(1 unpushed commit\)/);
      await git(inner, 'reset', '-q', '--hard', 'HEAD~1');
      fs.writeFileSync(path.join(w.path, 'libs', 'sub', 'scratch.txt'), 'x\n');
      await git(path.join(w.path, 'libs', 'sub'), 'stash', 'push', '-q', '--include-untracked');
      assert.match(await failure(worktrees(ws).remove('subdirty'), 1), /submodule libs\/sub \(1 stash entry\)/);
      assert.ok(fs.existsSync(w.path));
    });

    it('a failed submodule initialization rolls the prepare back', async () => {
      const forbid = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'protocol.file.allow', GIT_CONFIG_VALUE_0: 'never' };
      const message = await failure(worktrees(ws, new MemoryLogger(), forbid).prepare('nosub'), 1);
      assert.match(message, /initializing the submodules of issue 'nosub' failed: .*; rolled back, nothing was kept/);
      assert.ok(!fs.existsSync(path.join(ws, '.mam', 'worktrees', 'nosub')));
      assert.equal((await exec('git', ['rev-parse', '--verify', '--quiet', 'refs/heads/mam/nosub'], { cwd: ws })).exitCode, 1, 'no branch left');
      assert.ok(!(await git(ws, 'worktree', 'list', '--porcelain')).includes('nosub'));
    });
  });

  describe('bad input answers exit 64 in one line and changes nothing', () => {
    let ws: string;
    before(async () => {
      ws = (await makeRepo()).dir;
      await worktrees(ws).prepare('existing');
    });

    const badNames: Array<[string, string]> = [
      ['../x', "contains '/'"],
      ['a/b', "contains '/'"],
      ['$(touch x)', "contains '$'"],
      ['x'.repeat(65), '65 characters long'],
      ['', 'empty'],
      ['..', 'reserved'],
      ['a..b', 'cannot name a git branch'],
      ['x.lock', 'cannot name a git branch'],
    ];
    for (const [name, why] of badNames) {
      it(`issue ${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}…(${name.length})` : name)}`, async () => {
        const before = snapshot(ws);
        assert.ok((await failure(worktrees(ws).prepare(name), 64)).includes(why));
        assert.ok((await failure(worktrees(ws).remove(name), 64)).includes(why));
        assert.deepEqual(snapshot(ws), before);
      });
    }

    it('an unknown --base names the revision', async () => {
      const before = snapshot(ws);
      assert.match(await failure(worktrees(ws).prepare('new', { base: 'no-such-rev' }), 64), /unknown revision 'no-such-rev'/);
      assert.match(await failure(worktrees(ws).prepare('new', { base: '--orphan' }), 64), /'--orphan' is not a revision/);
      assert.deepEqual(snapshot(ws), before);
    });

    it('remove of an issue without a worktree', async () => {
      const before = snapshot(ws);
      assert.match(await failure(worktrees(ws).remove('nothing-here'), 64), /no worktree for issue 'nothing-here'/);
      assert.deepEqual(snapshot(ws), before);
    });

    it('a workspace that is not a git repository', async () => {
      const plain = tempDir('plain');
      fs.writeFileSync(path.join(plain, 'file.txt'), 'x\n');
      const before = snapshotTree(plain);
      assert.match(await failure(worktrees(plain).prepare('a'), 64), /is not in a git work tree/);
      assert.match(await failure(worktrees(plain).remove('a'), 64), /is not in a git work tree/);
      assert.deepEqual(snapshotTree(plain), before, 'not even .mam/ was created');
    });
  });

  it('refuses to take over or delete a folder at the path that is not a worktree', async () => {
    const { dir: ws } = await makeRepo();
    const squatter = path.join(ws, '.mam', 'worktrees', 'taken');
    fs.mkdirSync(squatter, { recursive: true });
    fs.writeFileSync(path.join(squatter, 'notes.txt'), 'mine\n');
    assert.match(await failure(worktrees(ws).prepare('taken'), 1), /exists but is not a worktree/);
    assert.match(await failure(worktrees(ws).remove('taken'), 1), /is not a worktree git knows; nothing removed/);
    assert.equal(fs.readFileSync(path.join(squatter, 'notes.txt'), 'utf8'), 'mine\n');
  });

  it('remove of a worktree whose folder was deleted by hand prunes git\'s record', async () => {
    const { dir: ws } = await makeRepo();
    const w = await worktrees(ws).prepare('gone');
    fs.rmSync(w.path, { recursive: true, force: true });
    const removed = await worktrees(ws).remove('gone');
    assert.deepEqual([removed.alreadyGone, removed.branch], [true, 'mam/gone']);
    assert.ok(!(await git(ws, 'worktree', 'list', '--porcelain')).includes(w.path));
  });

  it('concurrent prepares of different issues all succeed', async () => {
    const { dir: ws, second } = await makeRepo();
    const issues = ['c1', 'c2', 'c3', 'c4'];
    const results = await Promise.all(issues.map((i) => worktrees(ws).prepare(i)));
    assert.deepEqual(results.map((r) => [r.issue, r.created, r.head]), issues.map((i) => [i, true, second]));
    const listed = (await git(ws, 'worktree', 'list', '--porcelain')).split('\n').filter((l) => l.startsWith('branch refs/heads/mam/'));
    assert.deepEqual(listed.sort(), issues.map((i) => `branch refs/heads/mam/${i}`));
    assert.equal(await git(ws, 'status', '--porcelain', '--untracked-files=all'), '');
  });

  it('prepare waits for the workspace worktree lock and touches nothing without it', async () => {
    const { dir: ws } = await makeRepo();
    const release = await acquire(path.join(ws, '.mam', 'locks', 'worktree.lock'));
    try {
      const impatient = new IssueWorktrees(ws, { lockTimeoutMs: 200 });
      assert.match(await failure(impatient.prepare('waits'), 70), /the issue-worktree lock is locked by process/);
      assert.ok(!fs.existsSync(path.join(ws, '.mam', 'worktrees', 'waits')));
    } finally {
      release();
    }
    assert.equal((await worktrees(ws).prepare('waits')).created, true);
  });
});

/**
 * Runs a `mam worktree …` command the way runCli does (strict argument parsing, MamError → exit
 * code and one `mam: …` line), without the command index, which wires this group in separately.
 */
async function cli(argv: readonly string[], ws: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const [group, sub, ...rest] = argv;
  const command = worktreeCommands.find((c) => c.path[0] === group && c.path[1] === sub);
  assert.ok(command, `no command ${argv.join(' ')}`);
  let stdout = '';
  let stderr = '';
  const io = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t), cwd: ws, env: { ...process.env, ...ALLOW_FILE } };
  const logger = { debug() {}, info() {}, warn: (m: string) => io.stderr(`mam: warning: ${m}\n`), error: (m: string) => io.stderr(`mam: error: ${m}\n`) };
  try {
    const args = parseCommandArgs(command.path.join(' '), rest, command.options ?? {}, command.positionals ?? []);
    // Only what these commands use; the rest of the context belongs to other command groups.
    const ctx: Partial<CommandContext> = {
      args,
      io,
      logger,
      out: (line = '') => io.stdout(`${line}\n`),
      json: (value) => io.stdout(`${JSON.stringify(value, null, 2)}\n`),
      workspace: () => ws,
    };
    return { exitCode: await command.run(ctx as CommandContext), stdout, stderr };
  } catch (err) {
    if (!(err instanceof MamError)) throw err;
    return { exitCode: err.exitCode, stdout, stderr: `${stderr}mam: ${err.message}\n` };
  }
}

describe('mam worktree (command layer)', function () {
  this.timeout(60_000);
  let ws: string;
  beforeEach(async () => {
    ws = (await makeRepo()).dir;
  });

  it('prepare prints only the path on stdout and says on stderr what it did', async () => {
    const made = await cli(['worktree', 'prepare', '5'], ws);
    assert.equal(made.exitCode, 0, made.stderr);
    assert.equal(made.stdout, `${path.join(ws, '.mam', 'worktrees', '5')}\n`);
    assert.match(made.stderr, /^mam: created the worktree of issue 5 on new branch mam\/5 at [0-9a-f]{12} \(from HEAD\)\n$/);
    const again = await cli(['worktree', 'prepare', '5'], ws);
    assert.deepEqual([again.exitCode, again.stdout], [0, made.stdout]);
    assert.match(again.stderr, /reused the existing worktree of issue 5/);
  });

  it('prepare --json and remove --json', async () => {
    const head = await git(ws, 'rev-parse', 'HEAD~1');
    const made = await cli(['worktree', 'prepare', '6', '--base', 'HEAD~1', '--json'], ws);
    assert.equal(made.exitCode, 0, made.stderr);
    assert.equal(made.stderr, '');
    const wtPath = path.join(ws, '.mam', 'worktrees', '6');
    assert.deepEqual(JSON.parse(made.stdout), { issue: '6', path: wtPath, branch: 'mam/6', base: head, head, created: true });
    const removed = await cli(['worktree', 'remove', '6', '--json'], ws);
    assert.equal(removed.exitCode, 0, removed.stderr);
    assert.deepEqual(JSON.parse(removed.stdout), { issue: '6', path: wtPath, branch: 'mam/6', head, removed: true });
  });

  it('remove names the kept branch, or refuses with exit 1 naming what is dirty', async () => {
    await cli(['worktree', 'prepare', '8'], ws);
    fs.writeFileSync(path.join(ws, '.mam', 'worktrees', '8', 'new.txt'), 'x\n');
    const refused = await cli(['worktree', 'remove', '8'], ws);
    assert.equal(refused.exitCode, 1);
    assert.equal(refused.stderr, 'mam: not removed: unsaved work in the worktree .mam/worktrees/8 (1 changed file); commit or stash the changes first\n');
    fs.rmSync(path.join(ws, '.mam', 'worktrees', '8', 'new.txt'));
    const removed = await cli(['worktree', 'remove', '8'], ws);
    assert.equal(removed.exitCode, 0, removed.stderr);
    assert.match(removed.stdout, /^removed the worktree of issue 8 \(.*\); kept branch mam\/8 at [0-9a-f]{12} \(delete it with: git branch -d mam\/8\)\n$/);
  });

  for (const [argv, why] of [
    [['worktree', 'prepare'], /missing ISSUE/],
    [['worktree', 'prepare', 'a', 'b'], /unexpected argument 'b'/],
    [['worktree', 'prepare', 'a', '--base'], /--base needs a value/],
    [['worktree', 'remove', 'a', '--force'], /unknown option --force/],
    [['worktree', 'prepare', '$(touch x)'], /issue '\$\(touch x\)' contains '\$'/],
  ] as Array<[string[], RegExp]>) {
    it(`usage error: mam ${argv.join(' ')}`, async () => {
      const before = snapshot(ws);
      const r = await cli(argv, ws);
      assert.equal(r.exitCode, 64);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.split('\n').length, 2, `one line: ${r.stderr}`);
      assert.match(r.stderr, why);
      assert.deepEqual(snapshot(ws), before);
    });
  }

  it('remove --help says there is no --force and how to clean up by hand', () => {
    const remove = worktreeCommands.find((c) => c.path[1] === 'remove')!;
    assert.equal(remove.options?.force, undefined);
    assert.match(remove.details ?? '', /There is no --force/);
    assert.match(remove.details ?? '', /git worktree remove --force \.mam\/worktrees\/ISSUE/);
    assert.match(remove.details ?? '', /git branch -D mam\/ISSUE/);
  });
});
