import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { execa } from 'execa';
import { MemoryLogger } from '../../src/core/base/log';
import { ControlPlane } from '../../src/core/store/controlPlane';

export const REPO_ROOT = path.resolve(__dirname, '../..');
export const CLI = path.join(REPO_ROOT, 'dist/cli.js');
export const FAKE_AGENT = path.join(REPO_ROOT, 'test/fixtures/fake-agent.js');

export interface AgentLogEntry {
  event: string;
  pid: number;
  conversation: string;
  text?: string;
  argv?: string[];
  resumed?: boolean;
  code?: number;
  [key: string]: unknown;
}

/** The fake agent's log: one JSON object per line. */
export function readAgentLog(file: string): AgentLogEntry[] {
  return readJsonLines<AgentLogEntry>(file);
}

/**
 * The complete lines of a JSON-lines file another process may be appending to (none if it is not
 * there yet). A line still being written is left for the next read: a reader can see part of a long
 * append (a model server's log, in CI at stop 37).
 */
export function readJsonLines<T>(file: string): T[] {
  if (!fs.existsSync(file)) return [];
  const text = fs.readFileSync(file, 'utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((l) => JSON.parse(l) as T);
}

/** A fresh folder under the run's temp root (removed with it by the guard). */
export function tempDir(prefix = 'dir'): string {
  const root = process.env.MAM_TEST_ROOT;
  if (!root) throw new Error('the run-wide guard did not run (MAM_TEST_ROOT is unset)');
  return fs.mkdtempSync(path.join(root, `${prefix}-`));
}

/** A temp workspace: a git repository unless `git: false`. */
export function tempWorkspace(options: { git?: boolean } = {}): string {
  const dir = tempDir('ws');
  if (options.git !== false) fs.mkdirSync(path.join(dir, '.git'));
  return dir;
}

export function controlPlane(workspace: string, logger = new MemoryLogger()): ControlPlane {
  return new ControlPlane(workspace, { logger });
}

export interface MamResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`node dist/cli.js …`) as a user would, with an argument array. */
export async function mam(args: readonly string[], options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number }): Promise<MamResult> {
  const timeout = options.timeoutMs ?? 60_000;
  const r = await execa(process.execPath, [CLI, ...args], { cwd: options.cwd, env: options.env, reject: false, timeout });
  // A process the test had to kill says so, rather than leave an exit code of -1 to guess from.
  const killed = r.timedOut ? `\n(the test killed \`mam ${args.slice(0, 2).join(' ')}\` after ${timeout} ms)` : '';
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: `${String(r.stderr)}${killed}` };
}

/** Every file under `dir` with a hash of its contents: compare two to prove nothing changed. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string): void => {
    for (const entry of fs.readdirSync(p, { withFileTypes: true })) {
      const full = path.join(p, entry.name);
      const rel = path.relative(dir, full);
      if (entry.isDirectory()) {
        out[`${rel}/`] = 'dir';
        walk(full);
      } else {
        out[rel] = createHash('sha256').update(fs.readFileSync(full)).digest('hex');
      }
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out;
}

/** Resolves when `predicate` holds, checking every `everyMs`; rejects after `timeoutMs`. */
export async function until(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: string, everyMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}


export { jobRecord, sessionRow } from './rows';

/** Stops a child process: SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
export async function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A child process with its output collected as it comes. */
export interface WatchedProcess {
  readonly pid: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** The exit code once it has exited, else undefined. */
  readonly code: number | null | undefined;
  /** Waits (bounded) until stdout or stderr matches; rejects at once if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** SIGTERM, and SIGKILL if it has not gone within `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<number | null>;
}

/** Collects a child's output and exit, and waits (bounded) on what it prints. */
export function watchChild(child: ChildProcess, what: string): WatchedProcess {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (c, signal) => resolve((code = c ?? (signal ? null : -1))));
    child.once('error', (err) => {
      stderr += `${err.message}\n`;
      resolve((code = -1));
    });
  });
  return {
    get pid() {
      return child.pid ?? -1;
    },
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    get code() {
      return code;
    },
    exited,
    async waitFor(pattern, timeoutMs = 20_000) {
      await until(() => {
        if (pattern.test(stdout) || pattern.test(stderr)) return true;
        if (code !== undefined) throw new Error(`${what} exited (${code}) before printing ${pattern}:\n${stdout}\n${stderr}`);
        return false;
      }, timeoutMs, `${what} to print ${pattern}:\n${stdout}\n${stderr}`);
    },
    async stop(graceMs = 5_000) {
      if (code !== undefined) return code;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const c = await exited;
      clearTimeout(timer);
      return c;
    },
  };
}


/** The pids of the heartbeat services (`mam event __heartbeats`) running for `workspace`. */
export function heartbeatServices(workspace: string): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      const at = argv.indexOf('--workspace');
      if (argv.includes('__heartbeats') && at > 0 && argv[at + 1] === workspace && !/\) Z /.test(fs.readFileSync(`/proc/${name}/stat`, 'utf8'))) pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}
