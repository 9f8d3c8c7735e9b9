import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findWorkspace } from '../../src/core/config/workspace';
import { UsageError } from '../../src/core/base/errors';
import { tempDir } from '../support/helpers';

describe('workspace discovery', () => {
  let root: string;
  beforeEach(() => {
    root = fs.realpathSync(tempDir('find'));
  });

  it('prefers --workspace, then MAM_WORKSPACE, then the nearest .mam/, then the git root', () => {
    const repo = path.join(root, 'repo');
    const nested = path.join(repo, 'pkg', 'src');
    fs.mkdirSync(nested, { recursive: true });
    fs.mkdirSync(path.join(repo, '.git'));
    const other = path.join(root, 'other');
    fs.mkdirSync(other);

    assert.deepEqual(findWorkspace({ cwd: nested, env: {} }), { root: repo, how: 'git-root' });
    fs.mkdirSync(path.join(repo, 'pkg', '.mam'));
    assert.deepEqual(findWorkspace({ cwd: nested, env: {} }), { root: path.join(repo, 'pkg'), how: 'control-plane' });
    assert.deepEqual(findWorkspace({ cwd: nested, env: { MAM_WORKSPACE: other } }), { root: other, how: 'env' });
    assert.deepEqual(findWorkspace({ cwd: nested, env: { MAM_WORKSPACE: other }, flag: '../..' }), { root: repo, how: 'flag' });
  });

  it('treats a worktree .git file as a git root', () => {
    const wt = path.join(root, 'wt');
    fs.mkdirSync(path.join(wt, 'a'), { recursive: true });
    fs.writeFileSync(path.join(wt, '.git'), 'gitdir: /elsewhere\n');
    assert.equal(findWorkspace({ cwd: path.join(wt, 'a'), env: {} }).root, wt);
  });

  it('says what to do when there is no workspace, and refuses a missing --workspace', () => {
    const bare = path.join(root, 'bare');
    fs.mkdirSync(bare);
    assert.throws(() => findWorkspace({ cwd: bare, env: {} }), (e: unknown) => e instanceof UsageError && /pass --workspace DIR/.test(e.message));
    assert.throws(() => findWorkspace({ cwd: bare, env: {}, flag: 'nope' }), /--workspace: .*nope is not a directory/);
  });
});
