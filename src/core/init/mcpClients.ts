import { settingVariables } from '../config/settings';
import { mcpServerArgs } from './mcpServer';

/**
 * The agent CLIs that read a project's MCP servers from a file in the project, and how each wants
 * MAM's server (`mam mcp`) written there. Measured with the pinned CLIs (scripts/agent-clis.json;
 * docs/cli.md "Your repository"): each lists the server from its project file, and claude,
 * gemini and opencode start it and ask it for its tools when listing.
 */
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

const stdio = (cli: string, workspace: string) => ({ command: 'node', args: mcpServerArgs(cli, workspace) });

/**
 * What codex must pass on by name: it starts an MCP server with a few variables of its own (HOME,
 * PATH, TMPDIR, LANG …), not its environment. Where the tmux sockets and the agents' stores are,
 * MAM's debug switch, and every MAM setting, so the server acts as `mam` run from the same shell.
 */
export function codexForwardedVariables(): string[] {
  return ['TMUX_TMPDIR', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'XDG_RUNTIME_DIR', 'MAM_DEBUG', ...settingVariables()];
}

/** Seconds codex waits for MAM's server to start (its default: 10). */
export const CODEX_STARTUP_TIMEOUT_S = 30;

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
    // codex gives a server 10 s to start and answer by default: a Node server on a busy machine may need more.
    entry: (cli, workspace) => ({ ...stdio(cli, workspace), env_vars: codexForwardedVariables(), startup_timeout_sec: CODEX_STARTUP_TIMEOUT_S }),
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
