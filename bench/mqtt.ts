/**
 * QoS 1 publish → PUBACK round trips with raw mqtt.js (no MAM code in the path), on the embedded
 * broker and on Mosquitto. Measured here: one publish at a time is fast whatever Nagle does; the
 * trap (NOTES.md) is on the broker side and shows once several PUBACKs go back to back — Mosquitto
 * with its default `set_tcp_nodelay false` takes ~44 ms per burst of 3. That default is the reference.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { MqttClient } from 'mqtt';
import { MemoryLogger } from '../src/core/base/log';
import type { BrokerEndpoint } from '../src/core/messaging/brokerRecord';
import { startEmbeddedBroker, stopEmbeddedBroker } from '../src/core/messaging/embeddedBroker';
import { ControlPlanePaths } from '../src/core/store/paths';
import { mosquittoMissing, startMosquitto } from '../test/support/mosquitto';
import { percentile, type Row } from './stats';

export interface RoundTripOptions {
  /** TCP_NODELAY on the client socket (default true). */
  noDelay?: boolean;
  /** Publishes in flight at once; each sample is then the time for the whole burst (default 1). */
  inFlight?: number;
  /** Idle time before each sample (default none: back to back), as events that come apart. */
  gapMs?: number;
}

/** `n` QoS 1 round trips (publish, wait for the PUBACK), in ms each, after 20 warm-up ones. */
export async function benchRawRoundTrip(endpoint: BrokerEndpoint, n: number, options: RoundTripOptions = {}): Promise<number[]> {
  const noDelay = options.noDelay ?? true;
  const inFlight = options.inFlight ?? 1;
  const client = new MqttClient(() => net.createConnection({ host: endpoint.host, port: endpoint.port, noDelay }), {
    protocolVersion: 4,
    clientId: `mam-bench-${process.pid}-${Math.random().toString(16).slice(2, 10)}`,
    reconnectPeriod: 0,
    ...(endpoint.username !== undefined ? { username: endpoint.username } : {}),
    ...(endpoint.password !== undefined ? { password: endpoint.password } : {}),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
    });
    const samples: number[] = [];
    for (let i = 0; i < n + 20; i++) {
      if (options.gapMs) await new Promise((resolve) => setTimeout(resolve, options.gapMs));
      const t = performance.now();
      await Promise.all(Array.from({ length: inFlight }, (_, k) => client.publishAsync('mam/bench/roundtrip', `${i}.${k}`, { qos: 1 })));
      if (i >= 20) samples.push(performance.now() - t);
    }
    return samples;
  } finally {
    await client.endAsync(true);
  }
}

/** Rows for bench/run.ts: one at a time and bursts of 3, on both brokers, against default Mosquitto. */
export async function benchMqtt(root: string, cli: string, n = 500): Promise<Row[]> {
  const ws = path.join(root, 'ws-mqtt');
  fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
  const paths = new ControlPlanePaths(ws);
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const embedded = await startEmbeddedBroker(paths, new MemoryLogger(), { cliPath: cli });
    stops.push(() => stopEmbeddedBroker(paths));
    const brokers: Array<{ name: string; endpoint: BrokerEndpoint }> = [{ name: 'embedded (aedes)', endpoint: embedded.endpoint }];
    let reference: { p50: number; p99: number } | undefined;
    if (!mosquittoMissing()) {
      const naive = await startMosquitto({ dir: path.join(root, 'mosquitto-default'), tcpNoDelay: false });
      stops.push(() => naive.stop());
      const samples = await benchRawRoundTrip(naive.endpoint, 30, { noDelay: false, inFlight: 3 });
      reference = { p50: percentile(samples, 50), p99: percentile(samples, 99) };
      const tuned = await startMosquitto({ dir: path.join(root, 'mosquitto') });
      stops.push(() => tuned.stop());
      brokers.push({ name: 'Mosquitto', endpoint: tuned.endpoint });
    }
    const rows: Row[] = [];
    if (reference) rows.push({ name: 'raw mqtt.js QoS 1, burst of 3 in flight, Mosquitto defaults (Nagle on; reference)', ...reference });
    for (const b of brokers) {
      const one = await benchRawRoundTrip(b.endpoint, n);
      const burst = await benchRawRoundTrip(b.endpoint, Math.ceil(n / 3), { inFlight: 3 });
      rows.push({ name: `raw mqtt.js QoS 1 round trip, one at a time, ${b.name}, TCP_NODELAY`, p50: percentile(one, 50), p99: percentile(one, 99) });
      rows.push({
        name: `raw mqtt.js QoS 1, burst of 3 in flight, ${b.name}, TCP_NODELAY`,
        p50: percentile(burst, 50),
        p99: percentile(burst, 99),
        ...(reference ? { reference: 'Mosquitto defaults', ratio: `${(percentile(burst, 50) / reference.p50).toFixed(3)}×` } : {}),
      });
    }
    return rows;
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}
