import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { initWorkspace, type InitResult } from '../../../src/core/init/initWorkspace';
import type { MamApi } from '../../../src/extension';
import { mamApi, REPO_ROOT } from './support';

describe('MAM: Initialize Workspace (mam init for a folder)', () => {
  let api: MamApi;
  let folder: string;
  const status = () => execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: folder, encoding: 'utf8' }).split('\n').filter(Boolean).sort();
  before(async () => {
    api = await mamApi();
    folder = api.host.current[0]!.folder.uri.fsPath;
    execFileSync('git', ['init', '-q'], { cwd: folder });
  });
  after(() => {
    fs.rmSync(path.join(folder, '.git'), { recursive: true, force: true });
  });

  it('installs the skills naming the extension’s own CLI, keeps .mam.env out of git, and takes it all back', async () => {
    const offered = api.init.offered.length;
    await api.init.check();
    assert.equal(api.init.offered.length, offered, 'a folder that has .mam/ is not offered');

    const before = status();
    const result = (await vscode.commands.executeCommand('mam.initWorkspace', { folderIndex: 0 })) as InitResult;
    assert.equal(result.changed, true);
    assert.equal(result.orchestrator, null, 'VS Code registers no orchestrator');
    const cli = path.join(REPO_ROOT, 'dist', 'cli.js');
    assert.equal(fs.realpathSync(result.cli), fs.realpathSync(cli));
    assert.ok(fs.readFileSync(path.join(folder, '.claude/skills/mam-jobs/SKILL.md'), 'utf8').includes(`node "${result.cli}" job submit --session <session>`));
    assert.equal(fs.statSync(path.join(folder, '.mam.env')).mode & 0o777, 0o600);
    const added = status().filter((l) => !before.includes(l));
    assert.equal(added.length, 24, added.join('\n'));
    assert.ok(added.every((l) => /^\?\? (\.(agents|claude)\/skills\/mam-[a-z]+\/(SKILL\.md|references\/[a-z-]+\.md)|\.claude\/rules\/mam\.md|AGENTS\.md|\.mcp\.json|\.codex\/config\.toml|\.gemini\/settings\.json|opencode\.json)$/.test(l)), added.join('\n'));
    // MAM's MCP server for the agent CLIs, run by the extension's own CLI.
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(folder, '.mcp.json'), 'utf8')), { mcpServers: { mam: { command: 'node', args: [result.cli, 'mcp', '--workspace', folder] } } });

    const again = (await vscode.commands.executeCommand('mam.initWorkspace', { folderIndex: 0 })) as InitResult;
    assert.equal(again.changed, false);
    const removed = (await vscode.commands.executeCommand('mam.initWorkspace', { folderIndex: 0, mode: 'remove' })) as InitResult;
    assert.equal(removed.changed, true);
    assert.deepEqual(status(), before);
    assert.ok(!fs.existsSync(path.join(folder, '.mam.env')));
  });

  it('skills naming a MAM CLI that is gone (the extension was updated) are offered a refresh, which names this one', async () => {
    const gone = path.join(folder, '.mam', 'old-extension', 'dist', 'cli.js');
    await initWorkspace({ workspace: folder, cliPath: gone, mode: 'install' });
    const skill = path.join(folder, '.agents/skills/mam-jobs/SKILL.md');
    assert.ok(fs.readFileSync(skill, 'utf8').includes(gone));
    const refreshes = api.init.refreshes.length;
    await api.init.check();
    assert.deepEqual(api.init.refreshes.slice(refreshes), [0], 'offered once for the folder');
    await api.init.check();
    assert.equal(api.init.refreshes.length, refreshes + 1, 'and not again in this window');

    const refreshed = (await vscode.commands.executeCommand('mam.initWorkspace', { folderIndex: 0, mode: 'update' })) as InitResult;
    assert.ok(refreshed.items.some((i) => i.path === '.agents/skills/mam-jobs/SKILL.md' && i.action === 'updated'));
    assert.ok(fs.readFileSync(skill, 'utf8').includes(`node "${refreshed.cli}" job submit`));
    await vscode.commands.executeCommand('mam.initWorkspace', { folderIndex: 0, mode: 'remove' });
  });
});
