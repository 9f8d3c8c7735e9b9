// Processes, ports and waits for scripts/vscode/run.mjs: Linux only (reads /proc).
import * as fs from 'node:fs';
import * as http from 'node:http';

/** The environment variable that marks every process of one run. */
export const MARKER = 'MAM_VSCODE_RUN';

/** Resolves with the first match of `pattern` in `file` (a growing log), or a message when `timeoutMs` passes. */
export async function waitForLine(file, pattern, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = fs.existsSync(file) ? pattern.exec(fs.readFileSync(file, 'utf8')) : null;
    if (match) return match;
    await new Promise((r) => setTimeout(r, 50));
  }
  return `no line matching ${pattern} in ${file} within ${timeoutMs / 1000} s`;
}

/** Resolves true once `url` answers HTTP at all, or a message when `timeoutMs` passes. */
export async function waitForHttp(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise((resolve) => {
      const req = http.get(url, { timeout: 2_000 }, (res) => {
        res.resume();
        resolve(res.statusCode < 500);
      });
      req.once('error', () => resolve(false));
      req.once('timeout', () => req.destroy());
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return `no answer from ${url} within ${timeoutMs / 1000} s`;
}

/** Live members of a process group; zombies are dead already (whoever adopted them reaps them). */
function groupMembers(pgid) {
  const members = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return members;
}

export async function waitUntil(predicate, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return predicate();
}

/**
 * SIGTERM to the whole process group, SIGKILL what is left after 5 s; waits until it is empty.
 * Returns the pids still alive after all that (none, unless the kernel is stuck on one).
 */
export async function killGroup(pgid) {
  for (const [signal, graceMs] of [['SIGTERM', 5_000], ['SIGKILL', 5_000]]) {
    try {
      process.kill(-pgid, signal);
    } catch {
      return []; // the group is gone
    }
    if (await waitUntil(() => groupMembers(pgid).length === 0, graceMs)) return [];
  }
  return groupMembers(pgid);
}

/** Live processes, other than this one, whose environment carries MAM_VSCODE_RUN=<id>. */
export function markedProcesses(id) {
  const marker = `${MARKER}=${id}`;
  const found = [];
  for (const name of fs.readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(marker)) continue;
      if (/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))) continue; // a zombie: already dead
      found.push({ pid, cmd: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 200) });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** SIGKILLs every process carrying MAM_VSCODE_RUN=<id>; returns what it found. */
export function killMarked(id) {
  const found = markedProcesses(id);
  for (const p of found) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

export function withTimeout(promise, ms) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms)))]).finally(() => clearTimeout(timer));
}
