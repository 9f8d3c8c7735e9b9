/**
 * Which broker to use: the one the settings name (MQTT_BROKER …), else the workspace's embedded
 * broker. There is no public-broker fallback, ever: events may carry job details.
 *
 * The lean `mam event` path imports this file for `readEmbeddedEndpoint`, so it must stay free of
 * mqtt, aedes, sql.js and yaml (test/unit/brokerEndpoint.test.ts checks).
 */
import * as fs from 'node:fs';
import { ConfigError } from '../base/errors';
import { printable } from '../base/ids';
import type { Logger } from '../base/log';
import type { ResolvedConfig } from '../config/settings';
import { ControlPlanePaths } from '../store/paths';
import { BrokerUnusableError, runningEmbeddedBroker, type BrokerEndpoint } from './brokerRecord';
import { startEmbeddedBroker } from './embeddedBroker';

export { BrokerUnusableError, type BrokerEndpoint } from './brokerRecord';

export interface ResolveBrokerInput {
  workspace: string;
  config: ResolvedConfig;
  env: NodeJS.ProcessEnv;
  /** Start the embedded broker if it is not running (else a stopped one is a BrokerUnusableError). */
  start: boolean;
  logger: Logger;
  /** The bundled CLI that runs the daemon (default: `cli.js` beside the running bundle). */
  cliPath?: string;
}

/**
 * The broker to talk to. An external broker is returned as configured (no connection is made); the
 * embedded broker is returned once it accepts connections, started first when `start` is true.
 */
export async function resolveBroker(input: ResolveBrokerInput): Promise<BrokerEndpoint> {
  const external = externalBroker(input.config, input.logger);
  if (external) return external;
  const v = input.config.values;
  if (v.brokerUsername !== '' || v.brokerPort !== 0 || v.brokerTls) {
    input.logger.warn('MQTT_USERNAME, MQTT_PORT or MQTT_TLS is set but MQTT_BROKER is not; using the embedded broker (set MQTT_BROKER to use your own)');
  }
  const paths = new ControlPlanePaths(input.workspace);
  if (!input.start) {
    const running = runningEmbeddedBroker(paths);
    if (!running) throw new BrokerUnusableError("the workspace's embedded MQTT broker is not running; start it with 'mam broker start'", 'broker_not_running');
    return running.endpoint;
  }
  const handle = await startEmbeddedBroker(paths, input.logger, { env: input.env, ...(input.cliPath ? { cliPath: input.cliPath } : {}) });
  return handle.endpoint;
}

/**
 * The embedded broker's endpoint when `.mam/broker.json` names a live daemon, else undefined.
 * Synchronous and connection-free: it reads one file and the process table.
 */
export function readEmbeddedEndpoint(paths: ControlPlanePaths): BrokerEndpoint | undefined {
  return runningEmbeddedBroker(paths)?.endpoint;
}

/**
 * The external broker the settings name, or undefined when MQTT_BROKER is empty. MQTT_BROKER is a
 * host name or address, or a URL `mqtt://host[:port]` / `mqtts://host[:port]`. Contradictions
 * (two ports, `mqtt://` with MQTT_TLS=true) are errors rather than guesses.
 */
export function externalBroker(config: ResolvedConfig, logger?: Logger): BrokerEndpoint | undefined {
  const v = config.values;
  const raw = v.brokerHost.trim();
  if (raw === '') return undefined;
  let host = raw;
  let port = v.brokerPort;
  let tls = v.brokerTls;
  if (raw.includes('://')) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError(`MQTT_BROKER '${printable(raw, 60)}' is not a valid URL; use a host name, mqtt://host:port or mqtts://host:port`);
    }
    if (url.protocol !== 'mqtt:' && url.protocol !== 'mqtts:') {
      throw new ConfigError(`MQTT_BROKER '${printable(raw, 60)}': only mqtt:// and mqtts:// are supported`);
    }
    if (url.username || url.password) throw new ConfigError('MQTT_BROKER must not hold credentials; set MQTT_USERNAME and MQTT_PASSWORD instead');
    if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
      throw new ConfigError(`MQTT_BROKER '${printable(raw, 60)}' has a path or query; give only mqtt[s]://host:port`);
    }
    const urlTls = url.protocol === 'mqtts:';
    if (config.sources.brokerTls !== 'default' && v.brokerTls !== urlTls) {
      throw new ConfigError(`MQTT_BROKER says ${url.protocol}// but MQTT_TLS is ${v.brokerTls}; make them agree or unset MQTT_TLS`);
    }
    tls = urlTls;
    host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (url.port !== '') {
      const urlPort = Number(url.port);
      if (v.brokerPort !== 0 && v.brokerPort !== urlPort) {
        throw new ConfigError(`MQTT_BROKER names port ${urlPort} but MQTT_PORT is ${v.brokerPort}; make them agree or unset MQTT_PORT`);
      }
      port = urlPort;
    }
  } else if (!isIP(host) && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(host)) {
    throw new ConfigError(`MQTT_BROKER '${printable(raw, 60)}' is not a host name; use a host name, mqtt://host:port or mqtts://host:port`);
  }
  if (port === 0) port = tls ? 8883 : 1883;
  if (v.brokerPassword !== '' && v.brokerUsername === '') throw new ConfigError('MQTT_PASSWORD is set without MQTT_USERNAME; set MQTT_USERNAME too, or unset MQTT_PASSWORD');
  const endpoint: BrokerEndpoint = { host, port, tls, embedded: false };
  if (v.brokerUsername !== '') endpoint.username = v.brokerUsername;
  if (v.brokerPassword !== '') endpoint.password = v.brokerPassword;
  if (v.brokerCa !== '') {
    if (!tls) {
      logger?.warn('MQTT_CA is set but the broker is not used over TLS; ignoring MQTT_CA');
    } else {
      try {
        fs.accessSync(v.brokerCa, fs.constants.R_OK);
      } catch {
        throw new ConfigError(`MQTT_CA names ${v.brokerCa}, which cannot be read; point it at the broker's CA certificate (PEM), or unset it`);
      }
      endpoint.ca = v.brokerCa;
    }
  }
  return endpoint;
}

/** node:net's isIP, loaded only for a configured host name: `mam event` publishing through the relay never loads node:net. */
function isIP(host: string): number {
  const net: typeof import('node:net') = require('node:net');
  return net.isIP(host);
}
