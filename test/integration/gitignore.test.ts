import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { addIgnores, missingIgnores } from '../../src/core/config/gitignore';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { tempDir } from '../support/helpers';

describe('keeping .mam/ and .mam.env out of commits (real git)', () => {
  let repo: string;
  const gitignore = () => fs.readFileSync(path.join(repo, '.gitignore'), 'utf8');
  beforeEach(() => {
    repo = tempDir('gitignore');
    execFileSync('git', ['init', '-q'], { cwd: repo });
  });

  it('finds what git does not ignore, adds exactly that, and keeps what was there', async () => {
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/');
    assert.deepEqual(await missingIgnores(repo), ['.mam/'], 'no .mam.env yet: nothing of it to leak');
    fs.writeFileSync(path.join(repo, '.mam.env'), 'MQTT_PASSWORD=x\n');
    assert.deepEqual(await missingIgnores(repo), ['.mam/', '.mam.env']);
    addIgnores(repo, ['.mam/', '.mam.env']);
    assert.equal(gitignore(), 'node_modules/\n# Multi-Agent Mux: agent state and broker credentials\n.mam/\n.mam.env\n');
    assert.deepEqual(await missingIgnores(repo), []);
    fs.mkdirSync(path.join(repo, '.mam'));
    fs.writeFileSync(path.join(repo, '.mam', 'agent-sessions.db'), '');
    fs.writeFileSync(path.join(repo, '.mam.env'), 'MQTT_PASSWORD=x\n');
    assert.equal(execFileSync('git', ['status', '--porcelain'], { cwd: repo, encoding: 'utf8' }), '?? .gitignore\n', 'git sees neither');
  });

  it('.mam/ ignores itself as soon as MAM writes to it, without touching the user\'s .gitignore', async () => {
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n');
    new ControlPlanePaths(repo).ensureDir();
    fs.writeFileSync(path.join(repo, '.mam', 'agent-sessions.db'), '');
    assert.deepEqual(await missingIgnores(repo), []);
    assert.equal(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: repo, encoding: 'utf8' }), '?? .gitignore\n');
    assert.equal(gitignore(), 'node_modules/\n');
    fs.writeFileSync(path.join(repo, '.mam', '.gitignore'), '# the user\'s own\n');
    new ControlPlanePaths(repo).ensureDir();
    assert.equal(fs.readFileSync(path.join(repo, '.mam', '.gitignore'), 'utf8'), '# the user\'s own\n', 'never overwritten');
  });

  it('asks git, so any form of ignoring counts: another pattern, a parent folder, info/exclude', async () => {
    fs.writeFileSync(path.join(repo, '.gitignore'), '/.mam\n');
    fs.writeFileSync(path.join(repo, '.mam.env'), 'MQTT_PASSWORD=x\n');
    assert.deepEqual(await missingIgnores(repo), ['.mam.env']);
    fs.appendFileSync(path.join(repo, '.git', 'info', 'exclude'), '.mam.env\n');
    assert.deepEqual(await missingIgnores(repo), []);

    const sub = path.join(repo, 'packages', 'app');
    fs.mkdirSync(sub, { recursive: true });
    fs.writeFileSync(path.join(repo, '.gitignore'), '.mam/\n');
    assert.deepEqual(await missingIgnores(sub), [], 'the parent .gitignore covers a workspace in a subfolder');
  });

  it('creates .gitignore when there is none; outside a git checkout there is nothing to check', async () => {
    addIgnores(repo, ['.mam.env']);
    assert.equal(gitignore(), '# Multi-Agent Mux: agent state and broker credentials\n.mam.env\n');
    assert.equal(await missingIgnores(tempDir('plain')), undefined);
  });
});
