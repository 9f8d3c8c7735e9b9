/**
 * A real Mosquitto for the bus contract and the benchmarks: its own config, password file and log in
 * a temp folder, listening on a free port of 127.0.0.1 only. CI installs it (`.ci/run`); where it is
 * missing, `mosquittoMissing()` says why and the suites that need it skip.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { MAX_PACKET_BYTES, type BrokerEndpoint } from '../../src/core/messaging/brokerRecord';
import { probeBroker } from '../../src/core/messaging/mqttProbe';
import { stopChild } from './helpers';

export interface MosquittoOptions {
  /** Accept clients without credentials (default false: a user and password are required). */
  anonymous?: boolean;
  /**
   * Per-client queue and in-flight limits. Mosquitto's defaults (1000 queued, 20 in flight) drop
   * QoS 1 messages silently once exceeded (NOTES.md), so tests choose them on purpose.
   */
  maxQueuedMessages?: number;
  maxInflightMessages?: number;
  /** `set_tcp_nodelay` (default true); false is Mosquitto's own default, for the Nagle reference benchmark. */
  tcpNoDelay?: boolean;
  /** Serve TLS with this certificate and key (PEM files); the endpoint then carries `ca`. */
  tls?: { cert: string; key: string; ca: string };
  /** Where its files go (default: a fresh folder under the test run's temp root, or the OS temp dir). */
  dir?: string;
}

export interface MosquittoBroker {
  endpoint: BrokerEndpoint;
  /** Its pid right now (changes on restart). */
  readonly pid: number;
  dir: string;
  /** Kills it and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again after `stop`, on the same port with the same config (no-op while it runs). */
  start(): Promise<void>;
  /** `stop` then `start`. */
  restart(): Promise<void>;
}

/** Why Mosquitto cannot be used here, or undefined when it can. */
export function mosquittoMissing(): string | undefined {
  for (const tool of ['mosquitto', 'mosquitto_passwd']) {
    const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', tool], { encoding: 'utf8' });
    if (found.status !== 0) return `${tool} is not installed (apt-get install -y mosquitto)`;
  }
  return undefined;
}

export async function startMosquitto(options: MosquittoOptions = {}): Promise<MosquittoBroker> {
  const missing = mosquittoMissing();
  if (missing) throw new Error(missing);
  const dir = options.dir ?? fs.mkdtempSync(path.join(process.env.MAM_TEST_ROOT ?? os.tmpdir(), 'mosquitto-'));
  fs.mkdirSync(dir, { recursive: true });
  const credentials = options.anonymous ? undefined : mosquittoCredentials(dir);
  const port = await freePort();
  const config = path.join(dir, 'mosquitto.conf');
  fs.writeFileSync(config, mosquittoConfig({ listener: `${port} 127.0.0.1`, passwordFile: credentials?.passwordFile, logFile: path.join(dir, 'mosquitto.log'), ...options }));
  const endpoint: BrokerEndpoint = {
    host: '127.0.0.1',
    port,
    tls: Boolean(options.tls),
    ...(options.tls ? { ca: options.tls.ca } : {}),
    ...(credentials ? { username: credentials.username, password: credentials.password } : {}),
    embedded: false,
  };
  let child = await launch(config, endpoint, dir);
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const stop = async (): Promise<void> => {
    await stopChild(child, 5_000);
  };
  const start = async (): Promise<void> => {
    if (!running()) child = await launch(config, endpoint, dir);
  };
  return {
    endpoint,
    dir,
    get pid() {
      return child.pid!;
    },
    stop,
    start,
    restart: async () => {
      await stop();
      await start();
    },
  };
}

async function launch(config: string, endpoint: BrokerEndpoint, dir: string): Promise<ChildProcess> {
  const child = spawn('mosquitto', ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited (${signal ?? code})`));
  const deadline = Date.now() + 10_000;
  // Ready when it answers a CONNECT (anonymous or with the test's credentials).
  for (;;) {
    if (exited) throw new Error(`mosquitto ${exited}: ${stderr.trim()} ${readLog(dir)}`);
    const probe = await probeBroker(endpoint, 1_000);
    if (probe.ok) return child;
    if (Date.now() > deadline) {
      await stopChild(child, 5_000);
      throw new Error(`mosquitto did not accept connections within 10 s (${probe.detail}): ${readLog(dir)}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

function readLog(dir: string): string {
  try {
    return fs.readFileSync(path.join(dir, 'mosquitto.log'), 'utf8').split('\n').slice(-5).join(' | ');
  } catch {
    return '';
  }
}

/** A port nobody listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Adds a user with a fresh password to a Mosquitto password file. */
export function addMosquittoUser(passwordFile: string, username: string): { username: string; password: string } {
  const password = randomBytes(12).toString('base64url');
  const made = spawnSync('mosquitto_passwd', ['-b', passwordFile, username, password], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr.trim()}`);
  return { username, password };
}

/** A user and password for a test broker, in a Mosquitto password file under `dir`. */
export function mosquittoCredentials(dir: string): { username: string; password: string; passwordFile: string } {
  const username = `mam-test-${randomBytes(3).toString('hex')}`;
  const password = randomBytes(12).toString('base64url');
  const passwordFile = path.join(dir, 'passwd');
  const made = spawnSync('mosquitto_passwd', ['-b', '-c', passwordFile, username, password], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr.trim()}`);
  return { username, password, passwordFile };
}

/**
 * The config every test Mosquitto runs with: Nagle off, no persistence, queue limits chosen on
 * purpose, the embedded broker's packet limit, and a log of connections and timeouts.
 */
export function mosquittoConfig(o: MosquittoOptions & { listener: string; passwordFile: string | undefined; logFile: string; logConnections?: boolean; aclFile?: string }): string {
  return [
    // As root, Mosquitto drops to the user `mosquitto`, who cannot read our 0700 temp folder; naming
    // the current user keeps it as it is (and is ignored when not root).
    `user ${os.userInfo().username}`,
    `listener ${o.listener}`,
    `allow_anonymous ${o.passwordFile ? 'false' : 'true'}`,
    ...(o.passwordFile ? [`password_file ${o.passwordFile}`] : []),
    ...(o.aclFile ? [`acl_file ${o.aclFile}`] : []),
    ...(o.tls ? [`certfile ${o.tls.cert}`, `keyfile ${o.tls.key}`] : []),
    // Nagle off: otherwise every PUBACK waits ~40 ms (NOTES.md).
    `set_tcp_nodelay ${o.tcpNoDelay === false ? 'false' : 'true'}`,
    'persistence false',
    `max_queued_messages ${o.maxQueuedMessages ?? 100_000}`,
    `max_inflight_messages ${o.maxInflightMessages ?? 1_000}`,
    `max_packet_size ${MAX_PACKET_BYTES + 5}`, // the same payload limit as the embedded broker (+ fixed header)
    ...(o.logConnections ? ['connection_messages true', 'log_timestamp_format %Y-%m-%dT%H:%M:%S'] : []),
    `log_dest file ${o.logFile}`,
    'log_type error',
    'log_type warning',
    'log_type notice',
    'log_type information',
    '',
  ].join('\n');
}
