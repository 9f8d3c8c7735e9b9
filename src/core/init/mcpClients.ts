/**
 * The agent CLIs that read a project's MCP servers from a file in the project, and how each wants
 * MAM's server (`mam mcp`) written there. Measured with the pinned CLIs (scripts/agent-clis.json;
 * docs/mcp.md "Registered by mam init"): each lists the server from its project file, and claude,
 * gemini and opencode start it and ask it for its tools when listing.
 */

/** The server's name in every client's config: tools show as `mam`'s. */
export const MCP_SERVER_NAME = 'mam';

export type McpClientName = 'claude' | 'codex' | 'gemini' | 'opencode';

export interface McpClient {
  name: McpClientName;
  /** The CLI's own name, for the user. */
  label: string;
  /** The project files it reads, workspace-relative: the first that exists is used, the first is created. */
  files: readonly string[];
  format: 'json' | 'toml';
  /** The top-level key holding the servers. */
  container: string;
  /** The server's entry, running `cli` for `workspace`. */
  entry(cli: string, workspace: string): Record<string, unknown>;
  /** What the user must know for the CLI to load it, said when mam init adds it. */
  note: string;
}

/** `node <cli> mcp --workspace <workspace>`: the bundled CLI by its absolute path, as the skills name it. */
export function mcpServerArgs(cli: string, workspace: string): string[] {
  return [cli, 'mcp', '--workspace', workspace];
}

const stdio = (cli: string, workspace: string) => ({ command: 'node', args: mcpServerArgs(cli, workspace) });

export const MCP_CLIENTS: readonly McpClient[] = [
  {
    name: 'claude',
    label: 'Claude Code',
    files: ['.mcp.json'],
    format: 'json',
    container: 'mcpServers',
    entry: stdio,
    // Claude Code's own question; never answered for the user (`claude mcp list` shows it pending).
    note: 'MAM’s MCP server for Claude Code, which asks you once to approve it',
  },
  {
    name: 'codex',
    label: 'Codex',
    files: ['.codex/config.toml'],
    format: 'toml',
    container: 'mcp_servers',
    entry: stdio,
    note: 'MAM’s MCP server for Codex, which reads this file once you trust the project',
  },
  {
    name: 'gemini',
    label: 'Gemini CLI',
    files: ['.gemini/settings.json'],
    format: 'json',
    container: 'mcpServers',
    entry: stdio,
    note: 'MAM’s MCP server for Gemini CLI, which starts it in a folder you trust',
  },
  {
    name: 'opencode',
    label: 'opencode',
    // opencode reads both, JSONC either way; a project's own .jsonc is edited rather than shadowed.
    files: ['opencode.json', 'opencode.jsonc'],
    format: 'json',
    container: 'mcp',
    entry: (cli, workspace) => ({ type: 'local', command: ['node', ...mcpServerArgs(cli, workspace)], enabled: true }),
    note: 'MAM’s MCP server for opencode',
  },
];
