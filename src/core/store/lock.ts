import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockTimeoutError, errorMessage, isErrnoException } from '../base/errors';
import { custom, lazy, num, obj, parse, str, type Schema } from '../base/schema';
import type { Logger } from '../base/log';
import { isAlive, sleep } from '../base/process';
import { isoOn, systemClock } from '../base/clock';

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
  /**
   * Runs once the lock is held, when this caller took it over from a holder that died or went
   * silent while it waited: what that holder left half done (a temp file) can be cleared then.
   */
  afterTakeover?: () => void;
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
 * Runs `fn` while holding the cross-process lock `lockFile`.
 *
 * The lock is a file created with O_CREAT|O_EXCL, which succeeds for exactly one contender (on
 * local filesystems and on NFS v3 and later), holding its owner record; its holder removes it. A
 * lock whose holder died on this host is taken over at
 * once; one whose holder stopped refreshing it for `staleMs` is taken over from any host. A
 * takeover moves the file aside with one rename, so of several waiters only one takes it.
 *
 * A lock costs ~0.04 ms to take and release (a directory built and renamed into place, as it was
 * before, cost 0.3–2 ms, most of an event's path: docs/benchmarks.md). A lock directory an older
 * MAM left behind is still understood (its owner record inside) and taken over by the same rules.
 */
export async function withLock<T>(lockFile: string, fn: () => Promise<T> | T, options: LockOptions = {}): Promise<T> {
  const hold = await take(lockFile, options);
  let result: Promise<T> | T;
  try {
    result = fn();
  } catch (err) {
    hold.release();
    throw err;
  }
  // Done before the event loop turned: no refresh could have run meanwhile, and none is set up
  // (a cold `mam event`'s first timer costs it ~0.4 ms: docs/benchmarks.md).
  if (!isThenable(result)) {
    hold.release();
    return result;
  }
  hold.keepFresh();
  try {
    return await result;
  } finally {
    hold.release();
  }
}

/** Takes the lock and resolves with its release function; the lock is kept fresh until then. */
export async function acquire(lockFile: string, options: LockOptions = {}): Promise<() => void> {
  const hold = await take(lockFile, options);
  hold.keepFresh();
  return hold.release;
}

/** A lock held by this process: `keepFresh` starts refreshing it (while held for long), `release` lets it go. */
interface Hold {
  release(): void;
  keepFresh(): void;
}

/**
 * Per lock file, the turn of this process's last caller: the next one waits for it before it looks
 * at the file, so this process's callers take a lock in the order they asked for it. Without it a
 * caller that has backed off loses to every newcomer that tries while the lock is free: a runner's
 * delivery waited out its 30 s behind its own process's heartbeats and outbox checks (CI, stop 37).
 */
const turns = new Map<string, Promise<void>>();

async function take(lockFile: string, options: LockOptions): Promise<Hold> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  const before = turns.get(lockFile);
  let ended!: () => void;
  const mine = new Promise<void>((resolve) => (ended = resolve));
  turns.set(lockFile, mine);
  const passTurn = (): void => {
    if (turns.get(lockFile) === mine) turns.delete(lockFile);
    ended();
  };
  let hold: Hold;
  try {
    if (before && !(await turnWithin(before, timeoutMs))) throw timedOut(lockFile, timeoutMs, options);
    hold = await takeFile(lockFile, deadline, options);
  } catch (err) {
    // Whoever asked after this caller still waits for those who asked before it.
    if (before) void before.then(passTurn);
    else passTurn();
    throw err;
  }
  return {
    keepFresh: hold.keepFresh,
    release: () => {
      hold.release();
      passTurn();
    },
  };
}

/** Resolves true once `turn` has passed, false after `ms` if it has not. */
async function turnWithin(turn: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([turn.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

function timedOut(lockFile: string, timeoutMs: number, options: LockOptions): LockTimeoutError {
  const owner = readOwner(lockFile);
  const who = owner ? `process ${owner.pid} on ${owner.host} since ${owner.since}` : 'another process';
  return new LockTimeoutError(`${options.what ?? lockFile} is locked by ${who}; waited ${Math.round(timeoutMs / 1000)} s (lock: ${lockFile})`);
}

/** Takes the lock file itself (its turn in this process come), or throws at `deadline`. */
async function takeFile(lockFile: string, deadline: number, options: LockOptions): Promise<Hold> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  let backoff = 1;
  let tookOver = false;
  for (;;) {
    const me = tryCreate(lockFile);
    if (me) {
      const hold = holdUntilReleased(lockFile, me, staleMs, options.logger);
      if (tookOver) runHeld(options.afterTakeover, hold.release);
      return hold;
    }
    if (takeOverAbandoned(lockFile, staleMs)) {
      tookOver = true;
      continue;
    }
    if (Date.now() >= deadline) throw timedOut(lockFile, timeoutMs, options);
    await sleep(backoff + Math.random() * backoff);
    backoff = Math.min(backoff * 2, 20);
  }
}

function isThenable<T>(value: Promise<T> | T): value is Promise<T> {
  return typeof value === 'object' && value !== null && 'then' in value && typeof value.then === 'function';
}

/** Runs `fn` with the lock held; should it throw, lets go of the lock before passing the error on. */
function runHeld(fn: (() => void) | undefined, release: () => void): void {
  try {
    fn?.();
  } catch (err) {
    release();
    throw err;
  }
}

/** This process's part of every token it writes; a counter tells its locks apart. */
let tokenPrefix: string | undefined;
let tokenCount = 0;
/** The host's name, read once: it is in every lock this process writes. */
let hostName: string | undefined;

function thisHost(): string {
  return (hostName ??= os.hostname());
}

/**
 * A token no other lock of this host has: this process's pid and the monotonic time it first took
 * a lock (a pid is reused only after its process is gone, at a later time), and a counter.
 */
function nextToken(): string {
  tokenPrefix ??= `${process.pid.toString(36)}.${process.hrtime.bigint().toString(36)}`;
  return `${tokenPrefix}-${++tokenCount}`;
}

function tryCreate(lockFile: string): Owner | undefined {
  const owner: Owner = { pid: process.pid, host: thisHost(), token: nextToken(), since: isoOn(systemClock) };
  let fd: number;
  try {
    fd = fs.openSync(lockFile, 'wx');
  } catch (err) {
    if (isErrnoException(err, 'EEXIST')) return undefined;
    if (!isErrnoException(err, 'ENOENT')) throw err;
    fs.mkdirSync(path.dirname(lockFile), { recursive: true });
    return tryCreate(lockFile);
  }
  try {
    fs.writeSync(fd, JSON.stringify(owner));
  } finally {
    fs.closeSync(fd);
  }
  return owner;
}

function holdUntilReleased(lockFile: string, me: Owner, staleMs: number, logger: Logger | undefined): Hold {
  const takenAt = process.hrtime.bigint();
  const refreshMs = Math.max(250, Math.floor(staleMs / 3));
  let refresh: ReturnType<typeof setInterval> | undefined;
  held.set(lockFile, me.token);
  installExitHook();
  let released = false;
  const keepFresh = (): void => {
    if (released || refresh) return;
    refresh = setInterval(() => {
      const now = new Date();
      try {
        if (readOwner(lockFile)?.token !== me.token) throw new Error('another process holds it now');
        fs.utimesSync(lockFile, now, now);
      } catch (err) {
        logger?.warn(`lock ${lockFile} was lost while held: ${errorMessage(err)}`);
        clearInterval(refresh);
      }
    }, refreshMs);
    refresh.unref();
  };
  const release = (): void => {
    if (released) return;
    released = true;
    if (refresh) clearInterval(refresh);
    held.delete(lockFile);
    // Held for less than a third of `staleMs` (by this process's monotonic clock, which runs on
    // while it is stopped): no process can have judged it stale — that takes `staleMs` of silence,
    // and even a host whose clock is ahead by the other two thirds would not — and this process is
    // alive, so the lock is still this one's. Removed without reading it back (an event's path
    // takes two locks: a read of each saved).
    if (Number(process.hrtime.bigint() - takenAt) / 1e6 < staleMs / 3) {
      try {
        fs.unlinkSync(lockFile);
      } catch {
        // already gone: nothing to release
      }
      return;
    }
    if (!releaseIfMine(lockFile, me.token)) logger?.warn(`lock ${lockFile} changed hands while held; left it to its new holder`);
  };
  return { release, keepFresh };
}

/**
 * Removes the lock if `token` still holds it. Between the look and the unlink only a takeover
 * could replace it, and a lock is taken over only from a holder that is dead or has not refreshed
 * it for `staleMs` — not one releasing it now.
 */
function releaseIfMine(lockFile: string, token: string): boolean {
  if (readOwner(lockFile)?.token !== token) return false;
  try {
    fs.unlinkSync(lockFile);
  } catch {
    return false;
  }
  return true;
}

/** Moves aside a lock whose holder is dead (this host) or silent past `staleMs` (any host). */
function takeOverAbandoned(lockFile: string, staleMs: number): boolean {
  const seen = readOwner(lockFile);
  if (!isAbandoned(lockFile, seen, staleMs)) return false;
  const aside = `${lockFile}.abandoned-${nextToken()}`;
  try {
    fs.renameSync(lockFile, aside);
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
    fs.renameSync(aside, lockFile);
  } catch {
    fs.rmSync(aside, { recursive: true, force: true });
  }
  return false;
}

function isAbandoned(lockFile: string, owner: Owner | undefined, staleMs: number): boolean {
  if (owner && owner.host === thisHost() && !isAlive(owner.pid)) return true;
  const cutoff = Date.now() - staleMs;
  try {
    // The holder refreshes the lock's mtime (an older MAM's lock directory: its owner file's).
    const stat = fs.statSync(lockFile);
    const refreshed = stat.isDirectory() ? fs.statSync(path.join(lockFile, 'owner')) : stat;
    return refreshed.mtimeMs < cutoff;
  } catch {
    // Released meanwhile (try again), or an old lock directory without an owner file: judged by the directory.
    try {
      return fs.statSync(lockFile).mtimeMs < cutoff;
    } catch {
      return false;
    }
  }
}

// Read only when the lock is held by another process: built then.
const ownerSchema: Schema<Owner> = /* @__PURE__ */ lazy(() => obj({ pid: num(), host: str(), token: str(), since: custom((v) => String(v ?? '?')) }));

function readOwner(lockFile: string): Owner | undefined {
  let text: string;
  try {
    text = fs.readFileSync(lockFile, 'utf8');
  } catch (err) {
    if (!isErrnoException(err, 'EISDIR')) return undefined; // missing: released meanwhile
    try {
      text = fs.readFileSync(path.join(lockFile, 'owner'), 'utf8'); // an older MAM's lock directory
    } catch {
      return undefined;
    }
  }
  try {
    return parse(ownerSchema, JSON.parse(text));
  } catch {
    return undefined; // unreadable (being written): unknown holder
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [lockFile, token] of held) releaseIfMine(lockFile, token);
  });
}
