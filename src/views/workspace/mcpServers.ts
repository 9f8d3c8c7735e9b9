import * as vscode from 'vscode';
import { printable } from '../../core/base/ids';
import { mcpServerArgs } from '../../core/init/mcpServer';
import { DisposableBase } from '../../core/base/disposable';
import type { EngineHost } from '../host/engineHost';
import { version } from '../../../package.json';

/** The provider's ID, as package.json's `mcpServerDefinitionProviders` contributes it. */
export const MCP_PROVIDER_ID = 'mam.mcpServers';

/**
 * Offers `mam mcp` to the window's agent mode: one stdio server per folder that uses MAM (holds
 * `.mam/`), each serving that folder, so a chat in VS Code can run the team with the same tools an
 * agent CLI gets from `mam init`'s registration. None in an untrusted window: there the server
 * would refuse to act, and VS Code would start a process for nothing. VS Code asks again whenever
 * the folders, their engines or the trust change.
 */
export class McpServerProvider extends DisposableBase implements vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition> {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeMcpServerDefinitions = this.changed.event;

  constructor(
    private readonly host: EngineHost,
    private readonly cliPath: string,
    private readonly version: string,
  ) {
    super();
    this._register(host.onDidReset(() => this.changed.fire()));
  }

  async provideMcpServerDefinitions(): Promise<vscode.McpStdioServerDefinition[]> {
    await this.host.ready();
    if (!this.host.trusted) return [];
    // The Node.js the extension host runs on: inside VS Code desktop that is Electron, told to act as Node.
    const env: Record<string, string> = process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {};
    return this.host.mamFolders.map(({ folder }) => {
      const server = new vscode.McpStdioServerDefinition(`MAM: ${printable(folder.name, 60)}`, process.execPath, mcpServerArgs(this.cliPath, folder.uri.fsPath), env, this.version);
      server.cwd = folder.uri;
      return server;
    });
  }
}

export function registerMcpServers(host: EngineHost, context: vscode.ExtensionContext): { provider: McpServerProvider; disposables: vscode.Disposable[] } {
  // A new MAM may serve other tools: VS Code offers to refresh them when the version changes.
  const provider = new McpServerProvider(host, vscode.Uri.joinPath(context.extensionUri, 'dist', 'cli.js').fsPath, version);
  return { provider, disposables: [provider, vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider)] };
}
