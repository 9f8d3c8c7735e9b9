import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import { waitFor } from '../waitFor';
import { mamApi } from './support';

describe('the extension offers to keep .mam.env out of commits (.mam/ ignores itself)', () => {
  let api: MamApi;
  let folder: string;
  before(async () => {
    api = await mamApi();
    folder = api.host.current[0]!.folder.uri.fsPath;
    execFileSync('git', ['init', '-q'], { cwd: folder });
    fs.writeFileSync(path.join(folder, '.gitignore'), 'node_modules/\n');
    fs.writeFileSync(path.join(folder, '.mam.env'), '# MAM settings for this folder\n');
  });
  after(() => {
    fs.rmSync(path.join(folder, '.git'), { recursive: true, force: true });
    fs.rmSync(path.join(folder, '.gitignore'), { force: true });
    fs.rmSync(path.join(folder, '.mam.env'), { force: true });
  });

  it('offers when git does not ignore .mam.env, adds it on request, and then stops offering', async () => {
    // The extension's first write into .mam/ made it ignore itself.
    await waitFor('.mam/.gitignore', () => fs.existsSync(path.join(folder, '.mam', '.gitignore')), 20_000);
    const before = api.gitignore.offered.length;
    await api.gitignore.check();
    assert.deepEqual(api.gitignore.offered.slice(before), [{ folderIndex: 0, missing: ['.mam.env'] }]);

    await vscode.commands.executeCommand('mam.addToGitignore', { folderIndex: 0 });
    assert.equal(fs.readFileSync(path.join(folder, '.gitignore'), 'utf8'), 'node_modules/\n# Multi-Agent Mux: agent state and broker credentials\n.mam.env\n');
    assert.equal(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: folder, encoding: 'utf8' }), '?? .gitignore\n', 'git sees neither .mam/ nor .mam.env');

    await vscode.commands.executeCommand('mam.addToGitignore', { folderIndex: 0 });
    assert.match(fs.readFileSync(path.join(folder, '.gitignore'), 'utf8'), /^node_modules\/\n# Multi-Agent Mux[^\n]*\n\.mam\.env\n$/, 'nothing added twice');
    const after = api.gitignore.offered.length;
    await api.gitignore.check();
    assert.equal(api.gitignore.offered.length, after, 'no offer once it is ignored');
  });
});
