import * as path from 'node:path';
import { MCP_OPTIONS } from '../../mcp/options';
import { defineCommand } from '../command';

/**
 * `mam mcp`: serves the workspace to an MCP client over stdio (docs/mcp.md). The server and the SDK
 * are their own bundle, dist/mcp.js, which boot.ts loads directly for `mam mcp`; this entry gives
 * the command its help and its place in `mam --help`.
 */
export const mcpCommand = defineCommand({
  path: ['mcp'],
  summary: 'serve this workspace to an MCP client (an agent CLI, VS Code) over stdio: sessions, jobs, loops, plans, the merge queue as tools',
  options: MCP_OPTIONS,
  details: [
    'Reads MCP messages on stdin and writes them on stdout; logs go to stderr. Run by the client, not by hand:',
    '  claude: .mcp.json {"mcpServers": {"mam": {"command": "node", "args": ["<abs>/dist/cli.js", "mcp"]}}}',
    '  codex:  ~/.codex/config.toml [mcp_servers.mam] command = "node", args = ["<abs>/dist/cli.js", "mcp"]',
    'Without a workspace, or in one without .mam/, it still answers, and every call says why it does nothing.',
    'docs/mcp.md lists the tools. Exit status: 0 when the client closes the connection.',
  ].join('\n'),
  async run(ctx) {
    const { serve } = require(path.join(__dirname, 'mcp.js')) as typeof import('../../mcp/main');
    return serve({ workspaceFlag: ctx.args.options.workspace, untrusted: Boolean(ctx.args.options.untrusted), io: ctx.io, logger: ctx.logger, cliPath: ctx.cliPath() });
  },
});
