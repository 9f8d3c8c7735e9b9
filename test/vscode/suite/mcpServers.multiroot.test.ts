import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import { waitFor } from '../waitFor';
import { McpStdioClient } from './mcpStdio';
import { EXTENSION_ID, mamApi } from './support';

/** Some of the tools `mam mcp` serves. */
const TOOLS = ['session_list', 'job_submit', 'job_wait', 'job_status'];

/**
 * The MCP servers the extension offers the window's agent mode (vscode.lm
 * registerMcpServerDefinitionProvider), in the multi-root window of multiRoot.multiroot.test.ts:
 * one per folder using MAM (api and web; docs has no .mam/), each the bundled `mam mcp` serving
 * its folder. The server a definition names is started as VS Code starts it, and answers
 * initialize and tools/list; and VS Code itself starts it and hands its tools to agent mode.
 */
describe('the MCP servers offered to VS Code’s agent mode: one per MAM folder', function () {
  this.timeout(60_000);
  let api: MamApi;
  const clients: McpStdioClient[] = [];
  before(async () => {
    api = await mamApi();
  });
  after(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  it('package.json contributes the provider the extension registers', () => {
    const contributed = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes.mcpServerDefinitionProviders as Array<{ id: string; label: string }>;
    assert.deepEqual(contributed, [{ id: 'mam.mcpServers', label: 'Multi-Agent Mux' }]);
  });

  it('yields api and web, each `mam mcp --workspace <folder>` on the extension host’s Node.js, labelled with its folder; not docs', async () => {
    assert.deepEqual(api.host.mamFolders.map((fe) => fe.folder.name), ['api', 'web'], 'the harness’s window');
    const servers = (await api.mcp.provideMcpServerDefinitions()) ?? [];
    const cli = path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'dist', 'cli.js');
    const version = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.version as string;
    assert.deepEqual(
      servers.map((s) => ({ label: s.label, command: s.command, args: s.args, cwd: s.cwd?.fsPath, version: s.version })),
      ['api', 'web'].map((name) => {
        const folder = api.host.current.find((fe) => fe.folder.name === name)!.folder.uri.fsPath;
        return { label: `MAM: ${name}`, command: process.execPath, args: [cli, 'mcp', '--workspace', folder], cwd: folder, version };
      }),
    );
    for (const s of servers) assert.ok(s instanceof vscode.McpStdioServerDefinition, 'a stdio server VS Code starts itself');
  });

  it('each server it names starts, answers initialize as MAM, and lists its tools', async () => {
    const servers = (await api.mcp.provideMcpServerDefinitions()) ?? [];
    assert.equal(servers.length, 2);
    for (const server of servers) {
      const client = new McpStdioClient(server);
      clients.push(client);
      const hello = await client.initialize();
      assert.ok(typeof hello.protocolVersion === 'string', `${server.label}: ${JSON.stringify(hello)}`);
      const { tools } = (await client.request('tools/list')) as { tools?: Array<{ name: string; inputSchema?: unknown }> };
      const names = (tools ?? []).map((t) => t.name);
      for (const name of TOOLS) assert.ok(names.includes(name), `${server.label} lists ${name}: ${names.join(', ')}`);
      assert.ok((tools ?? []).every((t) => typeof t.inputSchema === 'object'), 'every tool has a JSON schema');
    }
  });

  it('VS Code takes them: it starts each by the ID it gives an extension’s server, and the tools it lists reach agent mode (vscode.lm.tools)', async () => {
    const ids = ['api', 'web'].map((name) => `${EXTENSION_ID}/MAM: ${name}`);
    try {
      // What a person's Start in MCP: List Servers runs (an extension's servers need no trust prompt).
      for (const id of ids) await vscode.commands.executeCommand('workbench.mcp.startServer', id);
      const expected = ['api', 'web'].flatMap((folder) => TOOLS.map((tool) => `mcp_mam_${folder}_${tool}`));
      await waitFor(`VS Code to list ${expected.join(', ')} among the language model tools`, () => expected.every((t) => vscode.lm.tools.some((x) => x.name === t)), 30_000).catch((err: Error) => {
        throw new Error(`${err.message}; it has ${vscode.lm.tools.map((t) => t.name).join(', ')}`);
      });
    } finally {
      for (const id of ids) await vscode.commands.executeCommand('workbench.mcp.stopServer', id);
    }
  });

  it('tells VS Code to ask again when the engines are rebuilt (folders, trust, settings)', async () => {
    let told = 0;
    const sub = api.mcp.onDidChangeMcpServerDefinitions(() => told++);
    try {
      await api.host.rebuild();
      assert.equal(told, 1);
    } finally {
      sub.dispose();
    }
  });
});
