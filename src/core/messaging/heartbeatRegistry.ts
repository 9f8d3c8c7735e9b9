import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JOB_ID_PATTERN } from '../base/ids';
import { isAlive } from '../base/process';
import { num, obj, parse, str } from '../base/schema';
import { readIfExists, writeFileAtomic } from '../store/atomicFile';
import { withLock } from '../store/lock';
import type { ControlPlanePaths } from '../store/paths';

/** A job whose agent asked for heartbeats (`mam event started`): what the host's heartbeat service keeps up. */
export interface HeartbeatRegistration {
  job: string;
  /** Seconds between heartbeats (the job's N). */
  every_s: number;
  /** The agent's own process (its pane's program): no heartbeat once it is gone. */
  watch_pid: number;
  /** Who the heartbeats are from: the agent's session, as its own events say. */
  sender: string;
}

const registrationSchema = obj({ job: str(), every_s: num(), watch_pid: num(), sender: str() });

/** This host's name as a file name: the service is one per workspace and host (a runner's host has its own). */
export function hostKey(hostname = os.hostname()): string {
  return hostname.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || 'host';
}

/** `.mam/heartbeats/<host>/`: this host's registrations, its service's pid and its relay. */
function hostDir(paths: ControlPlanePaths, host: string): string {
  return path.join(paths.dir, 'heartbeats', host);
}

/** The host's event relay, read by its heartbeat service (eventRelay.ts); what a `mam event` writes to without loading the registry. */
export function relayFileOf(paths: ControlPlanePaths, host = hostKey()): string {
  return path.join(hostDir(paths, host), 'relay.fifo');
}

/**
 * `.mam/heartbeats/<host>/`: one file per job that wants heartbeats from this host, `service.pid`,
 * the host's heartbeat service (`mam event __heartbeats`), and `relay.fifo`, its event relay.
 * Registering and the service's decision to exit both happen under the host's heartbeat lock, so
 * a job registered while the service winds down always finds a service to serve it.
 */
export class HeartbeatRegistry {
  readonly dir: string;
  readonly pidFile: string;
  readonly lock: string;
  /** The host's event relay, read by the service (eventRelay.ts). */
  readonly relayFile: string;

  constructor(
    readonly paths: ControlPlanePaths,
    readonly host = hostKey(),
  ) {
    this.dir = hostDir(paths, host);
    this.pidFile = path.join(this.dir, 'service.pid');
    this.relayFile = relayFileOf(paths, host);
    this.lock = paths.lock(`heartbeats-${host}`);
  }

  private file(job: string): string {
    if (!JOB_ID_PATTERN.test(job)) throw new Error(`not a job ID: ${job}`);
    return path.join(this.dir, `${job}.json`);
  }

  /** Writes (or replaces: a newer `started` of the job wins) a job's registration. */
  write(reg: HeartbeatRegistration): void {
    this.paths.ensureDir();
    fs.mkdirSync(this.dir, { recursive: true });
    writeFileAtomic(this.file(reg.job), `${JSON.stringify(reg)}\n`, { durable: false });
  }

  /** Every registration on disk; an unreadable one (torn, foreign) is removed, as it can never be served. */
  list(): HeartbeatRegistration[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    const regs: HeartbeatRegistration[] = [];
    for (const name of names) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const job = name.slice(0, -'.json'.length);
      if (!JOB_ID_PATTERN.test(job)) continue;
      const reg = this.read(job);
      if (reg) regs.push(reg);
      else fs.rmSync(path.join(this.dir, name), { force: true });
    }
    return regs;
  }

  read(job: string): HeartbeatRegistration | undefined {
    try {
      const reg = parse(registrationSchema, JSON.parse(readIfExists(this.file(job))?.toString('utf8') ?? 'null'));
      return reg.job === job ? reg : undefined;
    } catch {
      return undefined;
    }
  }

  /** Removes a job's registration if it is still `reg` (not replaced by a newer `started` meanwhile). */
  async remove(reg: HeartbeatRegistration): Promise<void> {
    await withLock(this.lock, () => {
      const now = this.read(reg.job);
      if (now && now.watch_pid === reg.watch_pid && now.every_s === reg.every_s) fs.rmSync(this.file(reg.job), { force: true });
    }, { what: 'the heartbeat registrations' });
  }

  /** The running service's pid, or undefined (none, dead, or the pid now someone else's). */
  servicePid(): number | undefined {
    const pid = Number(readIfExists(this.pidFile)?.toString('utf8').trim());
    if (!(pid > 0) || !isAlive(pid)) return undefined;
    // A pid is reused once its process is gone: only a heartbeat service counts.
    const cmdline = readIfExists(`/proc/${pid}/cmdline`)?.toString('utf8');
    return cmdline === undefined || cmdline.includes('__heartbeats') ? pid : undefined;
  }

  /**
   * Registers `reg` and makes sure the host's service runs (`start` spawns it and returns its pid).
   * Resolves with the service's pid.
   */
  async register(reg: HeartbeatRegistration, start: () => number): Promise<number> {
    return withLock(this.lock, () => {
      this.write(reg);
      return this.startIfNone(start);
    }, { what: 'the heartbeat registrations' });
  }

  /** Starts the service if none runs and something is registered (a service that died midway). */
  async ensureService(start: () => number): Promise<number | undefined> {
    return withLock(this.lock, () => (this.list().length > 0 ? this.startIfNone(start) : undefined), { what: 'the heartbeat registrations' });
  }

  private startIfNone(start: () => number): number {
    const running = this.servicePid();
    if (running !== undefined) return running;
    const pid = start();
    writeFileAtomic(this.pidFile, `${pid}\n`, { durable: false });
    return pid;
  }

  /**
   * The service asks to exit: true (and its pid file gone) when nothing is registered, decided
   * under the lock so that no registration can slip in between.
   */
  async releaseIfIdle(pid: number): Promise<boolean> {
    return withLock(this.lock, () => {
      if (this.list().length > 0) return false;
      if (Number(readIfExists(this.pidFile)?.toString('utf8').trim()) === pid) fs.rmSync(this.pidFile, { force: true });
      return true;
    }, { what: 'the heartbeat registrations' });
  }
}
