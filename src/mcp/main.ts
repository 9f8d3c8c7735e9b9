/**
 * dist/mcp.js: `mam mcp` whole — its flags, the workspace lookup, the server. boot.ts loads it
 * straight away for `mam mcp` (the rest of the CLI, dist/cli-main.js, is not needed to serve);
 * `mam mcp --help` goes through the CLI's own help, which reads MCP_OPTIONS.
 */
import { ExitCode, MamError, errorMessage } from '../core/base/errors';
import type { Logger } from '../core/base/log';
import { findWorkspace } from '../core/config/workspace';
import { parseCommandArgs } from '../cli/args';
import type { CliIo } from '../cli/command';
import { oneLine, stderrLogger } from '../cli/stderrLogger';
import { MCP_OPTIONS } from './options';
import { runMcpServer } from './server';

export interface ServeOptions {
  /** `--workspace DIR`, if given. */
  workspaceFlag: string | undefined;
  untrusted: boolean;
  io: CliIo;
  logger: Logger;
  /** dist/cli.js, which agents are told to run. */
  cliPath: string;
}

/** `mam mcp ARGV…` in this process: its flags read as the CLI reads every command's. */
export async function runMcp(argv: readonly string[], io: CliIo, cliPath: string): Promise<number> {
  try {
    const args = parseCommandArgs('mcp', argv, MCP_OPTIONS, []);
    return await serve({ workspaceFlag: args.options.workspace, untrusted: Boolean(args.options.untrusted), io, logger: stderrLogger(io), cliPath });
  } catch (err) {
    io.stderr(`mam: ${err instanceof MamError ? oneLine(err.message) : `internal error: ${oneLine(errorMessage(err))}`}\n`);
    return err instanceof MamError ? err.exitCode : ExitCode.internal;
  }
}

/** Serves until the client closes the connection. Without a workspace it still serves, and every call says why it does nothing. */
export async function serve(options: ServeOptions): Promise<number> {
  let workspace: { root: string } | { problem: string };
  try {
    workspace = { root: findWorkspace({ flag: options.workspaceFlag, env: options.io.env, cwd: options.io.cwd }).root };
  } catch (err) {
    workspace = { problem: errorMessage(err) };
  }
  const code = await runMcpServer({ workspace, env: options.io.env, cliPath: options.cliPath, trusted: !options.untrusted, logger: options.logger });
  // The client has gone: whatever is still closing (the broker connection) must not keep this process.
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
}
