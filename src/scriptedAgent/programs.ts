/**
 * The programs a scripted agent runs while it does a job — the brief's `mam event` commands, git,
 * the project's tests — always with an argument array, never through a shell. node:child_process
 * is used directly rather than the engine's execa wrapper: a scripted agent is a small standalone
 * program and needs nothing more.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { eventArgs, type ParsedBrief } from './briefReader';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcess>();

/**
 * Ends the programs a job is running (an event publisher, git, the tests) when the agent exits:
 * an agent that is gone leaves nothing behind that could still write into the workspace.
 */
export function killRunning(): void {
  for (const child of running) child.kill('SIGTERM');
}

export function run(file: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(file, [...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'], shell: false });
    running.add(child);
    child.on('exit', () => running.delete(child));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', (err) => resolve({ code: 127, stdout, stderr: `${stderr}${err.message}` }));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** Runs one of the brief's event commands (`node "<cli>" event <name> …`) with the node running us. */
export function sendEvent(brief: Pick<ParsedBrief, 'cliPath' | 'jobId' | 'workspace'>, name: string, extra: readonly string[], cwd: string): Promise<RunResult> {
  return run(process.execPath, eventArgs(brief, name, extra), { cwd });
}
