/**
 * What every `mam` process does first (dist/cli.js, and the seeds' `multi-agent-mux-delegate-job`):
 * an io that never writes control sequences nor dies on a closed pipe, then the command — loading
 * only what it needs: dist/cli-event.js for `mam event`, which agents run once per event,
 * dist/mcp.js for `mam mcp` (the MCP server), and dist/cli-main.js for everything else. Keeping them apart keeps both cold starts short.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { version } from '../../package.json';
import { ExitCode, isErrnoException } from '../core/base/errors';
import { requireWithCodeCache } from './codeCache';
import type { CliIo } from './command';

export function boot(argv: readonly string[], run: (io: CliIo, argv: readonly string[]) => Promise<number> = runMam): void {
  // `mam event` writes a line or two with no stream at all (a stream costs its cold start ~1-2 ms),
  // and leaves as soon as its work has settled (below).
  const event = argv[0] === 'event' && run === runMam;
  const io = event ? directIo() : streamIo();
  run(io, argv).then(
    (code) => {
      process.exitCode = code;
      // Its work is all done once its promise settles — the event fsynced in the outbox, published
      // and acknowledged or its warning written (synchronously), the outbox lock released — so it
      // does not wait for its broker socket to finish closing.
      if (event) process.exit(code);
    },
    (err: unknown) => {
      io.stderr(`mam: internal error: ${String(err)}\n`);
      process.exitCode = ExitCode.internal;
    },
  );
}

/** Nothing `mam` prints is obeyed by the terminal as a control sequence (agents' text is rendered visibly where it is formatted; this drops whatever slipped through). */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

function streamIo(): CliIo {
  // `mam job list | head`: once the reader has gone, writing more is pointless, but the command
  // itself (a submit, a loop) must still finish its work; so stop writing instead of dying on EPIPE.
  const closed = { stdout: false, stderr: false };
  for (const name of ['stdout', 'stderr'] as const) {
    process[name].on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      closed[name] = true;
    });
  }
  return {
    stdout: (text: string) => void (closed.stdout || process.stdout.write(text.replace(CONTROLS, ''))),
    stderr: (text: string) => void (closed.stderr || process.stderr.write(text.replace(CONTROLS, ''))),
    cwd: process.cwd(),
    env: process.env,
  };
}

/**
 * Writes straight to file descriptors 1 and 2, whole and at once: `process.stdout` would load and
 * build a stream for a line or two. A reader that has gone (EPIPE) stops the writing, as above; a
 * pipe some other process left non-blocking is waited on (EAGAIN) rather than given up.
 */
function directIo(): CliIo {
  const closed = new Set<number>();
  const write = (fd: number, text: string): void => {
    if (closed.has(fd)) return;
    const bytes = Buffer.from(text.replace(CONTROLS, ''));
    for (let done = 0; done < bytes.length; ) {
      try {
        done += fs.writeSync(fd, bytes, done);
      } catch (err) {
        if (isErrnoException(err, 'EPIPE')) return void closed.add(fd);
        if (!isErrnoException(err, 'EAGAIN')) throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      }
    }
  };
  return { stdout: (text) => write(1, text), stderr: (text) => write(2, text), cwd: process.cwd(), env: process.env };
}

/** `mam ARGV…` in this process. */
export function runMam(io: CliIo, argv: readonly string[]): Promise<number> {
  // With V8's code cache (codeCache.ts): agents start this once per event, so its start-up is theirs.
  if (argv[0] === 'event') return (requireWithCodeCache(path.join(__dirname, 'cli-event.js'), require) as typeof import('./event')).runEventCommand(argv.slice(1), io);
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
