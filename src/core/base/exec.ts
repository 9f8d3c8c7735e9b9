import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { errorCode } from './errors';

export interface ExecOptions {
  cwd?: string;
  /** Extra environment, merged over process.env (or, with `extendEnv: false`, the whole environment). */
  env?: Record<string, string | undefined>;
  extendEnv?: boolean;
  /** Text written to the child's stdin. */
  input?: string;
  timeoutMs?: number;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The status of a program that ended without one (killed by a signal), as a shell's `$?` is non-zero then. */
const NO_EXIT_STATUS = 1;

/** Thrown when a program cannot be started at all (not installed, not executable). */
export class ProgramNotFoundError extends Error {
  constructor(readonly file: string) {
    super(`${file} is not installed or not on PATH`);
    this.name = 'ProgramNotFoundError';
  }
}

/**
 * Runs `file` with an argument array — never through a shell — and resolves with its exit code and
 * output whatever the exit code is. Rejects only when the program cannot be started or times out.
 */
export async function exec(file: string, args: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  // Loaded on first use: commands that run no program (list, status of jobs) start faster.
  const { execa } = require('execa') as typeof import('execa');
  try {
    const result = await execa(file, args, {
      cwd: options.cwd,
      env: options.env,
      extendEnv: options.extendEnv ?? true,
      input: options.input,
      timeout: options.timeoutMs,
      reject: false,
      stripFinalNewline: false,
      shell: false,
    });
    if (result.failed && result.exitCode === undefined) {
      if (isEnoent(result.cause)) throw notStarted(file, options.cwd);
      throw result.cause instanceof Error ? result.cause : new Error(result.message);
    }
    return { exitCode: result.exitCode ?? NO_EXIT_STATUS, stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? '') };
  } catch (err) {
    if (isEnoent(err)) throw notStarted(file, options.cwd);
    throw err;
  }
}

/**
 * exec() on node's own execFile, for a short program run often (a tmux client: `mam session
 * status` and every monitor tick ask tmux once per server): the same result and errors, at ~3 ms of
 * this process's CPU per call instead of execa's ~7 (and without loading execa). What it lacks:
 * execa's killing of the program when this process exits, which a program that ends in
 * milliseconds does not need; output past 100 MB rejects.
 */
export function execQuick(file: string, args: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  const env = options.extendEnv === false ? options.env : { ...process.env, ...options.env };
  return new Promise((resolve, reject) => {
    const child = execFile(file, [...args], { cwd: options.cwd, env, timeout: options.timeoutMs, maxBuffer: 100 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err) return resolve({ exitCode: 0, stdout, stderr });
      if (typeof err.code === 'number') return resolve({ exitCode: err.code, stdout, stderr });
      if (isEnoent(err)) return reject(notStarted(file, options.cwd));
      if (err.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return reject(new Error(`${file} ${args[0] ?? ''} wrote more than 100 MB`));
      reject(err.signal ? new Error(`${file} ${args[0] ?? ''} was stopped by ${err.signal}${err.killed && options.timeoutMs !== undefined ? ` after ${options.timeoutMs} ms` : ''}`) : err);
    });
    child.stdin?.on('error', () => undefined); // the program may exit before reading all of `input`
    child.stdin?.end(options.input);
  });
}

/** ENOENT from a spawn means the program, or the folder it was to run in, is missing: say which. */
export function notStarted(file: string, cwd: string | undefined): Error {
  if (!fs.existsSync(cwd ?? '.')) return new Error(`cannot run ${file}: its working folder ${cwd ?? '(the current one)'} is gone`);
  return new ProgramNotFoundError(file);
}

function isEnoent(err: unknown): boolean {
  return errorCode(err) === 'ENOENT';
}
