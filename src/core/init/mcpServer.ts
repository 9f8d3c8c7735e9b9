/** MAM's MCP server as every client is told to start it (agent CLIs' configs, VS Code): no dependencies, for the extension's bundle. */

/** The server's name in every client's config: tools show as `mam`'s. */
export const MCP_SERVER_NAME = 'mam';

/** `<cli> mcp --workspace <workspace>`, run with Node.js: the bundled CLI by its absolute path, as the skills name it. */
export function mcpServerArgs(cli: string, workspace: string): string[] {
  return [cli, 'mcp', '--workspace', workspace];
}
