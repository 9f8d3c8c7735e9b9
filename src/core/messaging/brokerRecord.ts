/**
 * The embedded broker's record, `.mam/broker.json`, and the few facts about a broker that every
 * part of the messaging layer shares. Deliberately light: the lean `mam event` path reaches this file
 * through `readEmbeddedEndpoint`, so nothing here may pull in mqtt, aedes, sql.js or yaml.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CorruptStoreError, ExitCode, MamError, isErrnoException } from '../base/errors';
import { int, lit, nullable, obj, parse, str, type Schema } from '../base/schema';
import { writeFileAtomic } from '../store/atomicFile';
import type { ControlPlanePaths } from '../store/paths';

/** Where and how to reach an MQTT broker. */
export interface BrokerEndpoint {
  host: string;
  port: number;
  tls: boolean;
  /** Path of the CA certificate file (PEM) to trust, for TLS. */
  ca?: string;
  username?: string;
  password?: string;
  /** True for the workspace's own aedes daemon, false for a broker the settings name. */
  embedded: boolean;
}

/** The broker cannot be used: not running, unreachable, or it refused our credentials. Exit 3. */
export class BrokerUnusableError extends MamError {
  constructor(message: string, code = 'broker_unusable') {
    super(message, code, ExitCode.brokerUnusable);
  }
}

/** Packets larger than this are refused by the embedded broker (and by our Mosquitto test config). */
export const MAX_PACKET_BYTES = 1024 * 1024;

export const EMBEDDED_HOST = '127.0.0.1';

/** The contents of `.mam/broker.json` (mode 0600). */
export interface BrokerRecord {
  host: typeof EMBEDDED_HOST;
  /** 0 until the daemon has chosen one; then kept across restarts. */
  port: number;
  username: string;
  password: string;
  /** The daemon's pid while it runs; null once it stopped. */
  pid: number | null;
  started_at: string | null;
  version: 1;
}

/** The embedded broker's files beside `broker.json`. */
export function brokerFiles(paths: ControlPlanePaths): { record: string; log: string; retained: string; stats: string } {
  return {
    record: paths.brokerFile,
    log: path.join(paths.dir, 'broker.log'),
    retained: path.join(paths.dir, 'broker-retained.json'),
    stats: path.join(paths.dir, 'broker-stats.json'),
  };
}

/** Reads `.mam/broker.json`: undefined when there is none; CorruptStoreError when it is not a record. */
export function readBrokerRecord(paths: ControlPlanePaths): BrokerRecord | undefined {
  let text: string;
  try {
    text = fs.readFileSync(paths.brokerFile, 'utf8');
  } catch (err) {
    if (isErrnoException(err, 'ENOENT')) return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CorruptStoreError(`${paths.brokerFile} is not valid JSON; 'mam broker start' replaces it`);
  }
  return parse(brokerRecordSchema, parsed, (problem) => new CorruptStoreError(`${paths.brokerFile}: ${problem}; 'mam broker start' replaces it`), 'the record');
}

const brokerRecordSchema: Schema<BrokerRecord> = obj({
  version: lit(1),
  host: lit(EMBEDDED_HOST),
  port: int({ min: 0, max: 65535, why: 'is not a port number' }),
  username: str({ min: 1, why: 'is missing' }),
  password: str({ min: 1, why: 'is missing' }),
  pid: nullable(int({ min: 1 }), { why: 'is not a process id' }),
  started_at: nullable(str(), { why: 'is not a time' }),
});

export function writeBrokerRecord(paths: ControlPlanePaths, record: BrokerRecord): void {
  paths.ensureDir();
  writeFileAtomic(paths.brokerFile, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}

/** A new record with fresh credentials and no port yet. Credentials are made once and then kept. */
export function newBrokerRecord(): BrokerRecord {
  return {
    host: EMBEDDED_HOST,
    port: 0,
    username: `mam-${randomBytes(4).toString('hex')}`,
    password: randomBytes(24).toString('base64url'),
    pid: null,
    started_at: null,
    version: 1,
  };
}

export function embeddedEndpoint(record: BrokerRecord): BrokerEndpoint {
  return { host: record.host, port: record.port, tls: false, username: record.username, password: record.password, embedded: true };
}

/** "127.0.0.1:41883 (embedded)", for messages. */
export function describeEndpoint(endpoint: BrokerEndpoint): string {
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return `${endpoint.tls ? 'mqtts://' : ''}${host}:${endpoint.port}${endpoint.embedded ? ' (embedded)' : ''}`;
}

/**
 * Whether `pid` is this workspace's broker daemon: its command line holds `broker serve` and
 * `--workspace <workspace>`. A pid alone is not enough — after the daemon died, the OS may have given
 * its number to anything, and we must never signal that.
 */
export function isBrokerDaemon(pid: number, workspace: string): boolean {
  const args = commandLine(pid);
  if (!args) return false;
  const serve = args.findIndex((a, i) => a === 'broker' && args[i + 1] === 'serve');
  const ws = args.indexOf('--workspace');
  return serve >= 0 && ws >= 0 && args[ws + 1] !== undefined && path.resolve(args[ws + 1]!) === path.resolve(workspace);
}

/** The argv of a live process, or undefined when it is gone (a zombie has an empty command line). */
function commandLine(pid: number): string[] | undefined {
  if (process.platform === 'linux') {
    try {
      const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return raw === '' ? undefined : raw.split('\0').filter((a, i, all) => i < all.length - 1 || a !== '');
    } catch {
      return undefined;
    }
  }
  // No /proc (macOS, BSD): ask ps. Arguments with spaces get split here, which only matters for the
  // workspace path; compare the whole line for it instead.
  // Loaded here only: `mam event` reads this file on every event, and Linux never gets here.
  const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
  const r = spawnSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.trim()) return undefined;
  const line = r.stdout.trim();
  const at = line.indexOf(' --workspace ');
  return at < 0 ? line.split(' ') : [...line.slice(0, at).split(' '), '--workspace', line.slice(at + ' --workspace '.length)];
}

/**
 * The record and endpoint of this workspace's embedded broker if its daemon is running, judged from
 * `.mam/broker.json` and the process table only (no connection is made). A missing or malformed
 * record means not running.
 */
export function runningEmbeddedBroker(paths: ControlPlanePaths): { record: BrokerRecord; endpoint: BrokerEndpoint } | undefined {
  let record: BrokerRecord | undefined;
  try {
    record = readBrokerRecord(paths);
  } catch {
    return undefined;
  }
  if (!record || record.pid === null || record.port === 0 || !isBrokerDaemon(record.pid, paths.workspace)) return undefined;
  return { record, endpoint: embeddedEndpoint(record) };
}
