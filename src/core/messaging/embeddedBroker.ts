/**
 * The embedded broker's lifecycle as seen from outside the daemon: start it (once, however many
 * processes ask at the same moment), stop it, and report on it. The daemon itself is
 * `brokerDaemon.ts`, run by `mam broker serve`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { CorruptStoreError, MamError, ExitCode, errorMessage } from '../base/errors';
import type { Logger } from '../base/log';
import { int, lazy, obj, parse } from '../base/schema';
import { withLock } from '../store/lock';
import { isAlive, sleep } from '../base/process';
import type { ControlPlanePaths } from '../store/paths';
import {
  BrokerUnusableError,
  brokerFiles,
  embeddedEndpoint,
  isBrokerDaemon,
  newBrokerRecord,
  readBrokerRecord,
  runningEmbeddedBroker,
  writeBrokerRecord,
  type BrokerEndpoint,
  type BrokerRecord,
} from './brokerRecord';
import { probeBroker } from './mqttProbe';

export interface StartEmbeddedBrokerOptions {
  /** The bundled CLI that runs `broker serve` (default: `cli.js` beside the running bundle). */
  cliPath?: string;
  /** The daemon's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for a new daemon to accept connections (default 10 s). */
  timeoutMs?: number;
}

export interface EmbeddedBrokerHandle {
  endpoint: BrokerEndpoint;
  pid: number;
  /** False when a running daemon was found and reused. */
  started: boolean;
}

export interface EmbeddedBrokerStatus {
  running: boolean;
  pid: number | null;
  /** The port it listens on (running) or will try first (stopped); null before the first start. */
  port: number | null;
  started_at: string | null;
  /** Connected clients, as the daemon last reported them. */
  clients?: number;
  /** Why broker.json could not be read, if it could not. */
  problem?: string;
}

const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;
const LOG_ROTATE_BYTES = 1024 * 1024;

/**
 * Starts the workspace's broker daemon unless it already runs, and resolves once it accepts an MQTT
 * connection with the credentials in `.mam/broker.json`. Concurrent calls from many processes start
 * one daemon: the check and the spawn happen under the `broker` lock.
 */
export async function startEmbeddedBroker(paths: ControlPlanePaths, logger: Logger, options: StartEmbeddedBrokerOptions = {}): Promise<EmbeddedBrokerHandle> {
  const reused = await reuseRunning(paths, 2_000);
  if (reused) return reused;
  const timeoutMs = options.timeoutMs ?? START_TIMEOUT_MS;
  return withLock(
    paths.lock('broker'),
    async () => {
      const running = runningEmbeddedBroker(paths);
      if (running) {
        const again = await reuseRunning(paths, timeoutMs);
        if (again) return again;
        throw new BrokerUnusableError(
          `the embedded broker (pid ${running.record.pid}) is running but does not accept connections on 127.0.0.1:${running.record.port}; see ${brokerFiles(paths).log}, then run 'mam broker stop' and 'mam broker start'`,
        );
      }
      const record = recordForStart(paths, logger);
      const child = spawnDaemon(paths, record, options);
      return waitUntilAccepting(paths, child, timeoutMs);
    },
    { what: 'the embedded broker', timeoutMs: 60_000, logger },
  );
}

/** The running daemon's handle if it answers a CONNECT within `timeoutMs`. */
async function reuseRunning(paths: ControlPlanePaths, timeoutMs: number): Promise<EmbeddedBrokerHandle | undefined> {
  const running = runningEmbeddedBroker(paths);
  if (!running) return undefined;
  const probe = await probeBroker(running.endpoint, timeoutMs);
  return probe.ok ? { endpoint: running.endpoint, pid: running.record.pid!, started: false } : undefined;
}

/** The record to start with: the existing credentials and port, or new ones. Call under the lock. */
function recordForStart(paths: ControlPlanePaths, logger: Logger): BrokerRecord {
  let record: BrokerRecord | undefined;
  try {
    record = readBrokerRecord(paths);
  } catch (err) {
    if (!(err instanceof CorruptStoreError)) throw err;
    const aside = `${paths.brokerFile}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    fs.renameSync(paths.brokerFile, aside);
    logger.warn(`${errorMessage(err).split(';')[0]}; moved it to ${aside} and made new credentials`);
  }
  if (!record) {
    record = newBrokerRecord();
    writeBrokerRecord(paths, record);
  } else if (record.pid !== null) {
    // The daemon it names is gone (it crashed or was killed): forget it, keep port and credentials.
    record = { ...record, pid: null, started_at: null };
    writeBrokerRecord(paths, record);
  }
  return record;
}

function spawnDaemon(paths: ControlPlanePaths, record: BrokerRecord, options: StartEmbeddedBrokerOptions): ChildProcess {
  const cliPath = path.resolve(options.cliPath ?? path.join(__dirname, 'cli.js'));
  if (!fs.existsSync(cliPath)) {
    throw new MamError(`cannot start the embedded broker: ${cliPath} does not exist (build with 'npm run build')`, 'broker_cli_missing', ExitCode.internal);
  }
  const { log } = brokerFiles(paths);
  rotateLog(log);
  const fd = fs.openSync(log, 'a', 0o600);
  const env = { ...(options.env ?? process.env) };
  // Inside VS Code, execPath is Electron: this makes it behave as plain Node.
  if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = '1';
  try {
    fs.writeSync(fd, `${new Date().toISOString()} starting the broker daemon (port ${record.port || 'any'})\n`);
    // Detached (its own session) and unreferenced, so it outlives this process and its terminal.
    const child = spawn(process.execPath, [cliPath, 'broker', 'serve', '--workspace', paths.workspace], {
      detached: true,
      stdio: ['ignore', fd, fd],
      cwd: path.parse(paths.workspace).root, // hold no folder busy
      env,
    });
    child.unref();
    return child;
  } finally {
    fs.closeSync(fd);
  }
}

function rotateLog(log: string): void {
  try {
    if (fs.statSync(log).size > LOG_ROTATE_BYTES) fs.renameSync(log, `${log}.1`);
  } catch {
    // no log yet
  }
}

/** Waits until the new daemon has written its pid and port and answers a CONNECT; bounded. */
async function waitUntilAccepting(paths: ControlPlanePaths, child: ChildProcess, timeoutMs: number): Promise<EmbeddedBrokerHandle> {
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = signal ? `was killed by ${signal}` : `exited with status ${code}`;
  });
  child.once('error', (err) => {
    exited = `could not be started: ${err.message}`;
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new BrokerUnusableError(`the embedded broker ${exited}: ${lastLogLine(paths)}; see ${brokerFiles(paths).log}`);
    let record: BrokerRecord | undefined;
    try {
      record = readBrokerRecord(paths);
    } catch {
      record = undefined; // being replaced; look again
    }
    if (record && record.pid === child.pid && record.port > 0) {
      const endpoint = embeddedEndpoint(record);
      const probe = await probeBroker(endpoint, Math.max(100, Math.min(2_000, deadline - Date.now())));
      if (probe.ok) return { endpoint, pid: child.pid, started: true };
    }
    if (Date.now() > deadline) {
      if (child.pid !== undefined && isAlive(child.pid)) process.kill(child.pid, 'SIGKILL');
      throw new BrokerUnusableError(`the embedded broker did not accept connections within ${Math.round(timeoutMs / 1000)} s; see ${brokerFiles(paths).log}`);
    }
    await sleep(20);
  }
}

function lastLogLine(paths: ControlPlanePaths): string {
  try {
    const text = fs.readFileSync(brokerFiles(paths).log, 'utf8');
    const lines = text.slice(-4096).split('\n').map((l) => l.trim()).filter(Boolean);
    return lines.at(-1) ?? 'no log output';
  } catch {
    return 'no log output';
  }
}

/**
 * Stops the daemon named in `.mam/broker.json` — only if that pid really is this workspace's daemon —
 * and waits for it to exit (SIGTERM, then SIGKILL after `timeoutMs`). Keeps the credentials and port
 * for the next start; clears the pid.
 */
export async function stopEmbeddedBroker(paths: ControlPlanePaths, options: { timeoutMs?: number; logger?: Logger } = {}): Promise<{ stopped: boolean; pid: number | null }> {
  if (!fs.existsSync(paths.brokerFile)) return { stopped: false, pid: null };
  return withLock(
    paths.lock('broker'),
    async () => {
      let record: BrokerRecord | undefined;
      try {
        record = readBrokerRecord(paths);
      } catch {
        return { stopped: false, pid: null }; // nothing we can trust to signal
      }
      if (!record || record.pid === null) return { stopped: false, pid: null };
      const pid = record.pid;
      let stopped = false;
      if (isBrokerDaemon(pid, paths.workspace)) {
        signal(pid, 'SIGTERM');
        if (!(await waitGone(pid, paths.workspace, options.timeoutMs ?? STOP_TIMEOUT_MS))) {
          options.logger?.warn(`the embedded broker (pid ${pid}) did not stop within ${Math.round((options.timeoutMs ?? STOP_TIMEOUT_MS) / 1000)} s; killed it`);
          signal(pid, 'SIGKILL');
          await waitGone(pid, paths.workspace, 5_000);
        }
        stopped = true;
      }
      // The daemon clears its pid on a clean exit; after a kill, or for a stale pid, we do.
      const now = readBrokerRecord(paths);
      if (now && now.pid === pid) writeBrokerRecord(paths, { ...now, pid: null, started_at: null });
      return { stopped, pid };
    },
    { what: 'the embedded broker', timeoutMs: 60_000, ...(options.logger ? { logger: options.logger } : {}) },
  );
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // exited meanwhile
  }
}

async function waitGone(pid: number, workspace: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isBrokerDaemon(pid, workspace)) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** What `.mam/broker.json` and the process table say, without connecting. */
export function embeddedBrokerStatus(paths: ControlPlanePaths): EmbeddedBrokerStatus {
  let record: BrokerRecord | undefined;
  try {
    record = readBrokerRecord(paths);
  } catch (err) {
    return { running: false, pid: null, port: null, started_at: null, problem: errorMessage(err) };
  }
  if (!record) return { running: false, pid: null, port: null, started_at: null };
  const running = record.pid !== null && record.port > 0 && isBrokerDaemon(record.pid, paths.workspace);
  const status: EmbeddedBrokerStatus = {
    running,
    pid: running ? record.pid : null,
    port: record.port > 0 ? record.port : null,
    started_at: running ? record.started_at : null,
  };
  if (running) {
    const clients = readClientCount(paths, record.pid!);
    if (clients !== undefined) status.clients = clients;
  }
  return status;
}

/** `broker-stats.json`, which the daemon rewrites as clients come and go. */
const brokerStats = /* @__PURE__ */ lazy(() => obj({ pid: int(), clients: int({ min: 0 }) }));

function readClientCount(paths: ControlPlanePaths, pid: number): number | undefined {
  try {
    const stats = parse(brokerStats, JSON.parse(fs.readFileSync(brokerFiles(paths).stats, 'utf8')));
    return stats.pid === pid ? stats.clients : undefined;
  } catch {
    return undefined;
  }
}
