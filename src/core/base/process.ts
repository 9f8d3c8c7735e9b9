import * as fs from 'node:fs';
import * as path from 'node:path';
import { isErrnoException } from './errors';

/** Whether a process with this pid exists (one we may not signal still counts). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return isErrnoException(err, 'EPERM');
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Whether any live process of process group `pgid` is left (one we may not signal still counts).
 * A zombie does not: tmux, for one, reaps a closed pane's program only a second or two later.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return isErrnoException(err, 'EPERM');
  }
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return true; // no /proc: a signal is all there is to go by
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses: read after the last ')'.
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') return true;
    } catch {
      // exited meanwhile
    }
  }
  return false;
}

/**
 * Ends every process of group `pgid`: SIGTERM, and SIGKILL for whatever is left after `graceMs`.
 * Resolves once none is left, or after the SIGKILL.
 */
export async function endProcessGroup(pgid: number, graceMs = 3000): Promise<void> {
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-pgid, sig);
    } catch {
      // gone, or not ours
    }
  };
  if (!groupAlive(pgid)) return;
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return signal('SIGKILL');
    await sleep(50);
  }
}

/** The first executable file called `name` in the folders of `searchPath`, like `command -v`. */
export function whichProgram(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
