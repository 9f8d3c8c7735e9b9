import * as path from 'node:path';
import { errorMessage } from '../../core/base/errors';
import { findWorkspace } from '../../core/config/workspace';
import { defineCommand } from '../command';

/**
 * `mam mcp`: serves the workspace to an MCP client over stdio (docs/mcp.md). The server and the SDK
 * are their own bundle, dist/mcp.js, loaded here only: no other command pays for them.
 */
export const mcpCommand = defineCommand({
  path: ['mcp'],
  summary: 'serve this workspace to an MCP client (an agent CLI, VS Code) over stdio: sessions, jobs, loops, plans, the merge queue as tools',
  options: {
    untrusted: { kind: 'boolean', description: 'the client serves a folder it does not trust: answer reads only, refuse every tool that acts' },
  },
  details: [
    'Reads MCP messages on stdin and writes them on stdout; logs go to stderr. Run by the client, not by hand:',
    '  claude: .mcp.json {"mcpServers": {"mam": {"command": "node", "args": ["<abs>/dist/cli.js", "mcp"]}}}',
    '  codex:  ~/.codex/config.toml [mcp_servers.mam] command = "node", args = ["<abs>/dist/cli.js", "mcp"]',
    'Without a workspace, or in one without .mam/, it still answers, and every call says why it does nothing.',
    'Exit status: 0 when the client closes the connection.',
  ].join('\n'),
  async run(ctx) {
    let workspace: { root: string } | { problem: string };
    try {
      workspace = { root: findWorkspace({ flag: ctx.args.options.workspace, env: ctx.io.env, cwd: ctx.io.cwd }).root };
    } catch (err) {
      workspace = { problem: errorMessage(err) };
    }
    const { runMcpServer } = require(path.join(__dirname, 'mcp.js')) as typeof import('../../mcp/server');
    const code = await runMcpServer({ workspace, env: ctx.io.env, cliPath: ctx.cliPath(), trusted: !ctx.args.options.untrusted, logger: ctx.logger });
    // The client has gone: whatever is still open (a broker connection closing) must not keep this process.
    setTimeout(() => process.exit(code), 2000).unref();
    return code;
  },
});
