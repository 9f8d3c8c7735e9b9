import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { LockTimeoutError, errorMessage, isErrnoException } from '../base/errors';
import { custom, lazy, num, obj, parse, str, type Schema } from '../base/schema';
import type { Logger } from '../base/log';
import { isAlive, sleep } from '../base/process';

export interface LockOptions {
  /** How long to wait for the lock before giving up. */
  timeoutMs?: number;
  /**
   * A lock whose holder has not refreshed it for this long is taken over. Holders refresh it every
   * third of this; this is the rule that works across hosts (network filesystems).
   */
  staleMs?: number;
  /** What the lock protects, for error messages ("the session registry"). */
  what?: string;
  logger?: Logger;
}

interface Owner {
  pid: number;
  host: string;
  token: string;
  since: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_STALE_MS = 10_000;

/** Locks held by this process, released if it exits normally while holding them. */
const held = new Map<string, string>();
let exitHookInstalled = false;

/**
 * Runs `fn` while holding the cross-process lock `lockDir`.
 *
 * The lock is a directory that never exists without its owner record: a new one is built under a
 * temporary name with `owner` inside and renamed into place, which succeeds for exactly one
 * contender (rename onto a non-empty directory fails, on local and network filesystems alike), and
 * it is released by renaming it away. A lock whose holder died on this host is taken over at once;
 * one whose holder stopped refreshing it for `staleMs` is taken over from any host. A takeover
 * moves the directory aside with one rename, so of several waiters only one takes it.
 */
export async function withLock<T>(lockDir: string, fn: () => Promise<T> | T, options: LockOptions = {}): Promise<T> {
  const release = await acquire(lockDir, options);
  try {
    return await fn();
  } finally {
    release();
  }
}

/** Takes the lock and resolves with its release function. */
export async function acquire(lockDir: string, options: LockOptions = {}): Promise<() => void> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const deadline = Date.now() + timeoutMs;
  fs.mkdirSync(path.dirname(lockDir), { recursive: true });
  let backoff = 1;
  for (;;) {
    const me = tryCreate(lockDir);
    if (me) return holdUntilReleased(lockDir, me, staleMs, options.logger);
    if (takeOverAbandoned(lockDir, staleMs)) continue;
    if (Date.now() >= deadline) {
      const owner = readOwner(lockDir);
      const who = owner ? `process ${owner.pid} on ${owner.host} since ${owner.since}` : 'another process';
      throw new LockTimeoutError(`${options.what ?? lockDir} is locked by ${who}; waited ${Math.round(timeoutMs / 1000)} s (lock: ${lockDir})`);
    }
    await sleep(backoff + Math.random() * backoff);
    backoff = Math.min(backoff * 2, 20);
  }
}

function tryCreate(lockDir: string): Owner | undefined {
  const owner: Owner = { pid: process.pid, host: os.hostname(), token: randomBytes(8).toString('hex'), since: new Date().toISOString() };
  const staging = `${lockDir}.new-${owner.token}`;
  fs.mkdirSync(staging);
  try {
    fs.writeFileSync(path.join(staging, 'owner'), JSON.stringify(owner));
    fs.renameSync(staging, lockDir);
    return owner;
  } catch (err) {
    if (!isErrnoException(err, 'ENOTEMPTY') && !isErrnoException(err, 'EEXIST')) throw err;
    return undefined;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

function holdUntilReleased(lockDir: string, me: Owner, staleMs: number, logger: Logger | undefined): () => void {
  const ownerFile = path.join(lockDir, 'owner');
  const refresh = setInterval(() => {
    const now = new Date();
    try {
      if (readOwner(lockDir)?.token !== me.token) throw new Error('another process holds it now');
      fs.utimesSync(ownerFile, now, now);
    } catch (err) {
      logger?.warn(`lock ${lockDir} was lost while held: ${errorMessage(err)}`);
      clearInterval(refresh);
    }
  }, Math.max(250, Math.floor(staleMs / 3)));
  refresh.unref();
  held.set(lockDir, me.token);
  installExitHook();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    clearInterval(refresh);
    held.delete(lockDir);
    if (!releaseIfMine(lockDir, me.token)) logger?.warn(`lock ${lockDir} changed hands while held; left it to its new holder`);
  };
}

/** Renames the lock away (so it disappears atomically) if `token` still holds it. */
function releaseIfMine(lockDir: string, token: string): boolean {
  if (readOwner(lockDir)?.token !== token) return false;
  const gone = `${lockDir}.released-${token}`;
  try {
    fs.renameSync(lockDir, gone);
  } catch {
    return false;
  }
  fs.rmSync(gone, { recursive: true, force: true });
  return true;
}

/** Moves aside a lock whose holder is dead (this host) or silent past `staleMs` (any host). */
function takeOverAbandoned(lockDir: string, staleMs: number): boolean {
  const seen = readOwner(lockDir);
  if (!isAbandoned(lockDir, seen, staleMs)) return false;
  const aside = `${lockDir}.abandoned-${randomBytes(8).toString('hex')}`;
  try {
    fs.renameSync(lockDir, aside);
  } catch {
    return false; // someone else moved it first
  }
  const moved = readOwner(aside);
  if (moved?.token === seen?.token) {
    fs.rmSync(aside, { recursive: true, force: true });
    return true;
  }
  // The lock changed hands between our look and our rename: give it back to its live holder.
  try {
    fs.renameSync(aside, lockDir);
  } catch {
    fs.rmSync(aside, { recursive: true, force: true });
  }
  return false;
}

function isAbandoned(lockDir: string, owner: Owner | undefined, staleMs: number): boolean {
  if (owner && owner.host === os.hostname() && !isAlive(owner.pid)) return true;
  try {
    // The holder refreshes its owner file; a lock with no owner file (not made by us) is judged by the directory.
    const stat = fs.statSync(owner ? path.join(lockDir, 'owner') : lockDir);
    return stat.mtimeMs < Date.now() - staleMs;
  } catch {
    return false; // released meanwhile: just try again
  }
}

// Read only when the lock is held by another process: built then.
const ownerSchema: Schema<Owner> = /* @__PURE__ */ lazy(() => obj({ pid: num(), host: str(), token: str(), since: custom((v) => String(v ?? '?')) }));

function readOwner(lockDir: string): Owner | undefined {
  try {
    return parse(ownerSchema, JSON.parse(fs.readFileSync(path.join(lockDir, 'owner'), 'utf8')));
  } catch {
    return undefined; // missing or unreadable: unknown holder
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [lockDir, token] of held) releaseIfMine(lockDir, token);
  });
}
