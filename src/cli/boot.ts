/**
 * What every `mam` process does first (dist/cli.js, and the seeds' `multi-agent-mux-delegate-job`):
 * an io that never writes control sequences nor dies on a closed pipe, then the command — loading
 * only what it needs: dist/cli-event.js for `mam event`, which agents run once per event,
 * dist/mcp.js for `mam mcp` (the MCP server), and dist/cli-main.js for everything else. Keeping them apart keeps both cold starts short.
 */
import * as path from 'node:path';
import { version } from '../../package.json';
import { ExitCode } from '../core/base/errors';
import { requireWithCodeCache } from './codeCache';
import type { CliIo } from './command';

export function boot(argv: readonly string[], run: (io: CliIo, argv: readonly string[]) => Promise<number> = runMam): void {
  // `mam job list | head`: once the reader has gone, writing more is pointless, but the command
  // itself (a submit, a loop) must still finish its work; so stop writing instead of dying on EPIPE.
  const closed = { stdout: false, stderr: false };
  for (const name of ['stdout', 'stderr'] as const) {
    process[name].on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      closed[name] = true;
    });
  }
  // The last line of defence: nothing `mam` prints is obeyed by the terminal as a control sequence
  // (agents' text is rendered visibly where it is formatted; this drops whatever slipped through).
  const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
  const io: CliIo = {
    stdout: (text: string) => void (closed.stdout || process.stdout.write(text.replace(CONTROLS, ''))),
    stderr: (text: string) => void (closed.stderr || process.stderr.write(text.replace(CONTROLS, ''))),
    cwd: process.cwd(),
    env: process.env,
  };
  run(io, argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`mam: internal error: ${String(err)}\n`);
      process.exitCode = ExitCode.internal;
    },
  );
}

/** `mam ARGV…` in this process. */
export function runMam(io: CliIo, argv: readonly string[]): Promise<number> {
  // With V8's code cache (codeCache.ts): agents start this once per event, so its start-up is theirs.
  if (argv[0] === 'event') return (requireWithCodeCache(path.join(__dirname, 'cli-event.js')) as typeof import('./event')).runEventCommand(argv.slice(1), io);
  // `mam mcp` is a server that lives as long as its client: its bundle holds all it needs (and the MCP SDK).
  if (argv[0] === 'mcp' && !argv.includes('--help') && !argv.includes('-h')) {
    return (require(path.join(__dirname, 'mcp.js')) as typeof import('../mcp/main')).runMcp(argv.slice(1), io, path.join(__dirname, 'cli.js'));
  }
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    io.stdout(`${version}\n`);
    return Promise.resolve(0);
  }
  // SQLite (sql.js) is WebAssembly. Besides its baseline (Liftoff) code, V8 here also compiles the
  // whole module with TurboFan as it loads, and that holds a short `mam` process up by ~60 ms
  // (`mam session status`: 0.21 s → 0.14 s). Baseline code is plenty for a registry of sessions.
  // A flag of this process only: the extension host never runs this file.
  (require('node:v8') as typeof import('node:v8')).setFlagsFromString('--liftoff-only');
  return (require(path.join(__dirname, 'cli-main.js')) as typeof import('./app')).runCli(argv, io);
}
