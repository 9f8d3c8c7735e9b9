import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { waitFor } from '../waitFor';

const EXTENSION_ID = 'mam-dev.multi-agent-mux';

describe('activation (smoke)', () => {
  it('the workspace is a folder with a .mam/ control plane', () => {
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.equal(folders.length, 1);
    assert.ok(fs.statSync(path.join(folders[0]!.uri.fsPath, '.mam')).isDirectory());
  });

  it(`${EXTENSION_ID} activates on its own (workspaceContains:.mam)`, async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is not loaded (is dist/ built?)`);
    // Not ext.activate(): that would hide a broken activation event.
    await waitFor('the extension to activate', () => ext.isActive);
  });

  it('registers every command package.json contributes', async () => {
    const declared = (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes.commands as Array<{ command: string }>).map((c) => c.command);
    assert.ok(declared.length > 0);
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(declared.filter((c) => !registered.has(c)), []);
  });

  it('workspace trust is what the harness asked for', () => {
    assert.equal(vscode.workspace.isTrusted, process.env.MAM_VSCODE_TRUST !== 'untrusted');
  });
});
