/**
 * The embedded broker daemon (`mam broker serve`): aedes on 127.0.0.1, with the credentials of
 * `.mam/broker.json`, Nagle off on every connection, a 1 MB packet limit, and retained messages kept
 * on disk across restarts. It stops on SIGTERM/SIGINT/SIGHUP, and by itself when its workspace's
 * `.mam/` folder is deleted or `broker.json` stops naming it, so a removed temp workspace never
 * leaves an orphan daemon behind.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { createHash, timingSafeEqual } from 'node:crypto';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import { ExitCode, MamError, errorMessage, isErrnoException } from '../base/errors';
import type { Logger } from '../base/log';
import type { ControlPlanePaths } from '../store/paths';
import { EMBEDDED_HOST, MAX_PACKET_BYTES, brokerFiles, isBrokerDaemon, readBrokerRecord, writeBrokerRecord, type BrokerRecord } from './brokerRecord';
import { limitPacketSize } from './packetLimit';
import { RetainedStore } from './retainedStore';

export interface BrokerDaemonOptions {
  /** How often to check that `.mam/` and `broker.json` still exist and name this daemon. */
  watchIntervalMs?: number;
  /**
   * Runs once the broker accepts connections (the job warden starts here); what it returns is
   * disposed first when the daemon stops.
   */
  onListening?: () => Promise<{ dispose(): void } | undefined>;
}

/** Runs the daemon until it is told to stop; resolves with the exit status. */
export async function runBrokerDaemon(paths: ControlPlanePaths, logger: Logger, options: BrokerDaemonOptions = {}): Promise<number> {
  const files = brokerFiles(paths);
  const initial = readBrokerRecord(paths);
  if (!initial) throw new MamError(`${paths.brokerFile} does not exist; start the broker with 'mam broker start'`, 'broker_no_record', ExitCode.usage);
  if (initial.pid !== null && initial.pid !== process.pid && isBrokerDaemon(initial.pid, paths.workspace)) {
    throw new MamError(`the embedded broker is already running (pid ${initial.pid})`, 'broker_running', ExitCode.usage);
  }
  const folder = identity(paths.dir);

  const retained = new RetainedStore(files.retained, logger);
  const broker = await Aedes.createBroker({
    id: `mam-${process.pid}`,
    authenticate: (_client, username, password, done) => {
      if (credentialsMatch(initial, username, password)) return done(null, true);
      done(Object.assign(new Error('bad user name or password'), { returnCode: 4 }) as AuthenticateError, false);
    },
    connectTimeout: 10_000,
    // One frozen subscriber must not stall delivery to everyone else for long.
    drainTimeout: 30_000,
    // Packets a client may send before its CONNECT is handled; aedes' default of 42 is tight for a burst.
    queueLimit: 1_000,
  });
  const saved = retained.load();
  for (const m of saved) await publishInternal(broker, m.topic, m.payload, m.qos);
  if (saved.length > 0) logger.info(`restored ${saved.length} retained message(s)`);
  broker.on('publish', (packet) => {
    if (packet.retain && !packet.topic.startsWith('$SYS/')) retained.update(packet.topic, Buffer.from(packet.payload), packet.qos);
  });
  broker.on('clientError', (client: Client, err: Error) => logger.debug(`client ${client.id}: ${err.message}`));
  broker.on('connectionError', (client: Client, err: Error) => logger.debug(`connection ${client.id ?? '?'}: ${err.message}`));

  const server = net.createServer({ noDelay: true }, (socket) => {
    // Nagle off on the accepted socket too: with it on, every PUBACK waits ~40 ms (NOTES.md).
    socket.setNoDelay(true);
    broker.handle(socket);
    limitPacketSize(socket, MAX_PACKET_BYTES, (why) => logger.warn(`dropped a connection from ${socket.remoteAddress}:${socket.remotePort}: ${why}`));
  });
  const port = await listenPreferring(server, initial.port, logger);
  const record: BrokerRecord = { ...initial, port, pid: process.pid, started_at: new Date().toISOString() };
  writeBrokerRecord(paths, record);
  logger.info(`listening on ${EMBEDDED_HOST}:${port} (pid ${process.pid})`);

  const stats = statsWriter(files.stats, () => ({ pid: process.pid, clients: broker.connectedClients, retained: retained.size }));
  broker.on('clientReady', stats.schedule);
  broker.on('clientDisconnect', stats.schedule);
  stats.schedule();

  let companion: { dispose(): void } | undefined;
  let stopping = false;
  const started = options.onListening?.().then(
    (c) => {
      if (stopping) c?.dispose();
      else companion = c;
    },
    (err: unknown) => logger.error(`could not start the job warden: ${errorMessage(err)}`),
  );
  void started;

  return new Promise<number>((resolve) => {
    const stop = (reason: string, workspaceGone = false): void => {
      if (stopping) return;
      stopping = true;
      logger.info(`stopping: ${reason}`);
      try {
        companion?.dispose();
      } catch (err) {
        logger.warn(`stopping the job warden: ${errorMessage(err)}`);
      }
      clearInterval(watch);
      for (const s of SIGNALS) process.removeListener(s, onSignal);
      stats.dispose();
      server.close();
      const closed = new Promise<void>((done) => broker.close(() => done()));
      const bound = new Promise<void>((done) => setTimeout(done, 3_000).unref());
      void Promise.race([closed, bound]).then(() => {
        if (workspaceGone) {
          retained.discard();
        } else {
          retained.flush();
          clearOwnPid(paths, logger);
          fs.rmSync(files.stats, { force: true });
        }
        logger.info('stopped');
        resolve(0);
      });
    };
    const onSignal = (signal: NodeJS.Signals): void => stop(`received ${signal}`);
    for (const s of SIGNALS) process.on(s, onSignal);
    const watch = setInterval(() => {
      if (identity(paths.dir) !== folder) return stop(`${paths.dir} was removed`, true);
      let now: BrokerRecord | undefined;
      try {
        now = readBrokerRecord(paths);
      } catch {
        now = undefined;
      }
      if (now?.pid !== process.pid) stop(`${paths.brokerFile} no longer names this daemon`);
    }, options.watchIntervalMs ?? 2_000);
  });
}

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Compares both fields in constant time (over digests, so lengths leak nothing either). */
function credentialsMatch(expected: BrokerRecord, username: string | undefined, password: Buffer | undefined): boolean {
  const same = (a: string | Buffer, b: string): boolean =>
    timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
  const userOk = same(username ?? '', expected.username);
  const passOk = same(password ?? Buffer.alloc(0), expected.password);
  return userOk && passOk && username !== undefined && password !== undefined;
}

function publishInternal(broker: Aedes, topic: string, payload: Buffer, qos: 0 | 1 | 2): Promise<void> {
  return new Promise((resolve, reject) =>
    broker.publish({ cmd: 'publish', topic, payload, qos, retain: true, dup: false }, (err) => (err ? reject(err) : resolve())),
  );
}

/** Listens on `preferred` (kept across restarts) on 127.0.0.1 only; if something else holds it, on a new port. */
async function listenPreferring(server: net.Server, preferred: number, logger: Logger): Promise<number> {
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      server.once('error', onError);
      server.listen({ port, host: EMBEDDED_HOST, exclusive: true }, () => {
        server.removeListener('error', onError);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  if (preferred === 0) return listen(0);
  try {
    return await listen(preferred);
  } catch (err) {
    if (!isErrnoException(err, 'EADDRINUSE')) throw err;
    const port = await listen(0);
    logger.warn(`port ${preferred} is taken by another program; listening on ${port} instead (clients read the port from .mam/broker.json)`);
    return port;
  }
}

function identity(dir: string): string | undefined {
  try {
    const st = fs.statSync(dir);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

function clearOwnPid(paths: ControlPlanePaths, logger: Logger): void {
  try {
    const now = readBrokerRecord(paths);
    if (now && now.pid === process.pid) writeBrokerRecord(paths, { ...now, pid: null, started_at: null });
  } catch (err) {
    logger.warn(`could not clear the pid in ${paths.brokerFile}: ${errorMessage(err)}`);
  }
}

/**
 * `broker-stats.json` for `mam broker status`: rewritten at most every half second when clients come
 * and go. Informational only, so no fsync — a temp file and a rename keep readers from a torn file.
 */
function statsWriter(file: string, read: () => object): { schedule: () => void; dispose: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const write = (): void => {
    timer = undefined;
    const temp = `${file}.tmp-${process.pid}`;
    try {
      fs.writeFileSync(temp, JSON.stringify({ ...read(), updated_at: new Date().toISOString() }), { mode: 0o600 });
      fs.renameSync(temp, file);
    } catch {
      fs.rmSync(temp, { force: true });
    }
  };
  return {
    schedule: () => {
      timer ??= setTimeout(write, 500);
    },
    dispose: () => clearTimeout(timer),
  };
}
