/**
 * Every MQTT connection MAM makes goes through `connectClient`: MQTT 3.1.1 (aedes speaks no MQTT 5),
 * Nagle off on the socket (with it on, each QoS 1 publish waits ~40 ms for its PUBACK; NOTES.md), and
 * a first connection that either succeeds or fails with one BrokerUnusableError saying what to do.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as tls from 'node:tls';
import { randomBytes } from 'node:crypto';
import type MqttClient from 'mqtt/lib/client';
import type { IClientOptions } from 'mqtt/lib/client';
import { errorCode, errorMessage } from '../base/errors';
import type { Logger } from '../base/log';
import { BrokerUnusableError, describeEndpoint, type BrokerEndpoint } from './brokerRecord';

export interface ConnectClientOptions {
  /** Unique per process and role: see `uniqueClientId`. */
  clientId: string;
  /** Start without a stored session (default true). */
  clean?: boolean;
  will?: { topic: string; payload: string | Buffer; qos?: 0 | 1 | 2; retain?: boolean };
  /** Pause between reconnect attempts once connected (default 1000 ms); 0 never reconnects. */
  reconnectPeriodMs?: number;
  /** The bound on the first connection, retries included (default 10 s). */
  connectTimeoutMs?: number;
  /**
   * false (default): the first failure (refused, unreachable, no CONNACK) rejects at once.
   * true: keep trying every `reconnectPeriodMs` until `connectTimeoutMs`. Refused credentials reject at
   * once either way — retrying cannot fix them.
   */
  keepRetrying?: boolean;
  /** Seconds between PINGREQs when idle (default 30). */
  keepaliveS?: number;
  logger?: Logger;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_RECONNECT_PERIOD_MS = 1_000;

/**
 * Connects to `endpoint` and resolves with the connected client, or rejects with a
 * BrokerUnusableError (connection refused, bad credentials, timeout, TLS failure). After the first
 * connection the client reconnects by itself every `reconnectPeriodMs`; QoS 1 publishes made while
 * it is offline wait in its memory and go out on reconnect (lost if the process exits first).
 */
export async function connectClient(endpoint: BrokerEndpoint, options: ConnectClientOptions): Promise<MqttClient> {
  const logger = options.logger;
  const reconnectPeriod = options.reconnectPeriodMs ?? DEFAULT_RECONNECT_PERIOD_MS;
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const keepRetrying = options.keepRetrying === true && reconnectPeriod > 0;
  let ca: Buffer | undefined;
  if (endpoint.tls && endpoint.ca) {
    try {
      ca = fs.readFileSync(endpoint.ca);
    } catch (err) {
      throw new BrokerUnusableError(`cannot read the broker's CA certificate ${endpoint.ca}: ${errorMessage(err)}; check MQTT_CA`, 'broker_tls');
    }
  }
  const mqttOptions: IClientOptions = {
    protocolVersion: 4,
    clientId: options.clientId,
    clean: options.clean ?? true,
    keepalive: options.keepaliveS ?? 30,
    // Until the first CONNACK, reconnect only if asked to keep retrying; afterwards `reconnectPeriod`.
    reconnectPeriod: keepRetrying ? reconnectPeriod : 0,
    connectTimeout: timeoutMs,
    ...(endpoint.username !== undefined ? { username: endpoint.username } : {}),
    ...(endpoint.password !== undefined ? { password: endpoint.password } : {}),
    ...(options.will ? { will: { topic: options.will.topic, payload: Buffer.from(options.will.payload), qos: options.will.qos ?? 1, retain: options.will.retain ?? false } } : {}),
  };
  // The client class alone, loaded on first use: a command that never connects (most of them)
  // starts ~10 ms sooner, and the package's entry would also load WebSocket and SOCKS support.
  const { default: Client } = require('mqtt/lib/client') as typeof import('mqtt/lib/client');
  const client = new Client(() => openSocket(endpoint, ca), mqttOptions);
  const where = describeEndpoint(endpoint);

  return new Promise<MqttClient>((resolve, reject) => {
    let settled = false;
    const fail = (err: BrokerUnusableError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.end(true);
      reject(err);
    };
    const timer = setTimeout(() => fail(new BrokerUnusableError(`no answer from the MQTT broker at ${where} within ${Math.round(timeoutMs / 1000)} s; ${advice(endpoint)}`, 'broker_timeout')), timeoutMs);
    // Once connected, a broker that goes away is said once (the job is followed from disk meanwhile),
    // not at every reconnect attempt; and once more when it is back.
    let warned = false;
    client.on('error', (err) => {
      if (settled) {
        if (warned) logger?.debug(`MQTT ${options.clientId}: ${errorMessage(err)}`);
        else logger?.warn(`MQTT ${options.clientId}: ${errorMessage(err)}; following jobs from disk until it is back`);
        warned = true;
        return;
      }
      const failure = classify(err, endpoint, where);
      if (failure.code === 'broker_credentials' || !keepRetrying) fail(failure);
      else logger?.debug(`MQTT ${options.clientId}: ${errorMessage(err)}; retrying`);
    });
    client.on('close', () => {
      if (!settled && !keepRetrying) fail(new BrokerUnusableError(`the MQTT broker at ${where} closed the connection before accepting it; ${advice(endpoint)}`, 'broker_closed'));
    });
    client.once('connect', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.options.reconnectPeriod = reconnectPeriod;
      client.on('offline', () => logger?.info(`MQTT ${options.clientId}: lost the connection to ${where}${reconnectPeriod > 0 ? '; reconnecting' : ''}`));
      client.on('connect', () => {
        logger?.[warned ? 'warn' : 'info'](`MQTT ${options.clientId}: reconnected to ${where}`);
        warned = false;
      });
      resolve(client);
    });
  });
}

/** The stream builder: TCP (or TLS) with Nagle off before the first byte is written. */
function openSocket(endpoint: BrokerEndpoint, ca: Buffer | undefined): net.Socket {
  const socket = endpoint.tls
    ? tls.connect({ host: endpoint.host, port: endpoint.port, ...(ca ? { ca } : {}), ...(net.isIP(endpoint.host) ? {} : { servername: endpoint.host }) })
    : net.createConnection({ host: endpoint.host, port: endpoint.port, noDelay: true });
  // For TCP the option above already does it; TLS options have no `noDelay`, and the TLS socket passes
  // this call on to its TCP handle (libuv applies it once the socket exists). Tests spy on this call.
  socket.setNoDelay(true);
  return socket;
}

function classify(err: Error, endpoint: BrokerEndpoint, where: string): BrokerUnusableError {
  const code = errorCode(err);
  if (code === 4 || code === 5 || code === 134 || code === 135) {
    const fix = endpoint.embedded ? 'the embedded broker reads them from .mam/broker.json' : 'check MQTT_USERNAME and MQTT_PASSWORD';
    return new BrokerUnusableError(`the MQTT broker at ${where} refused the user name or password; ${fix}`, 'broker_credentials');
  }
  // OpenSSL's verification codes (UNABLE_TO_VERIFY_LEAF_SIGNATURE, SELF_SIGNED_CERT_IN_CHAIN, …) and Node's ERR_TLS_* / ERR_SSL_*.
  if (endpoint.tls && typeof code === 'string' && (/^ERR_(TLS|SSL)_/.test(code) || /CERT|SIGNATURE|ISSUER|SELF_SIGNED/.test(code))) {
    return new BrokerUnusableError(`TLS with the MQTT broker at ${where} failed: ${err.message}; check MQTT_CA and the host name`, 'broker_tls');
  }
  if (code === 'ECONNREFUSED') return new BrokerUnusableError(`the MQTT broker at ${where} refused the connection; ${advice(endpoint)}`, 'broker_refused');
  if (err.message === 'connack timeout') return new BrokerUnusableError(`the MQTT broker at ${where} did not answer CONNECT in time; ${advice(endpoint)}`, 'broker_timeout');
  return new BrokerUnusableError(`cannot use the MQTT broker at ${where}: ${err.message}; ${advice(endpoint)}`, 'broker_unreachable');
}

function advice(endpoint: BrokerEndpoint): string {
  return endpoint.embedded ? "start it with 'mam broker start'" : 'check that it runs and that MQTT_BROKER and MQTT_PORT name it';
}

/**
 * `mam-<role>-<host>-<pid>-<random>`: unique per process and connection. Two clients with one ID
 * make the broker drop each in turn, forever.
 */
export function uniqueClientId(role: string): string {
  const clean = (s: string, max: number): string => s.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, max) || 'x';
  return `mam-${clean(role, 24)}-${clean(os.hostname(), 24)}-${process.pid}-${randomBytes(4).toString('hex')}`;
}
