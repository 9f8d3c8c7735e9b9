/**
 * One MQTT 3.1.1 CONNECT / CONNACK exchange over a raw socket: "does this broker accept these
 * credentials right now?". Written by hand (~60 lines) so that starting the embedded broker and
 * `mam broker status` need neither mqtt.js nor aedes loaded.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { randomBytes } from 'node:crypto';
import type { BrokerEndpoint } from './brokerRecord';

export type ProbeResult =
  | { ok: true }
  | { ok: false; reason: 'unreachable' | 'credentials' | 'timeout' | 'protocol'; detail: string };

export function probeBroker(endpoint: BrokerEndpoint, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    let received = Buffer.alloc(0);
    let socket: net.Socket;
    const finish = (result: ProbeResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (result.ok) socket.end(Buffer.from([0xe0, 0x00])); // DISCONNECT, so the broker logs a clean goodbye
      else socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ ok: false, reason: 'timeout', detail: `no CONNACK within ${timeoutMs} ms` }), timeoutMs);
    try {
      socket = endpoint.tls
        ? tls.connect({ host: endpoint.host, port: endpoint.port, ...(endpoint.ca ? { ca: fs.readFileSync(endpoint.ca) } : {}), ...(net.isIP(endpoint.host) ? {} : { servername: endpoint.host }) })
        : net.createConnection({ host: endpoint.host, port: endpoint.port, noDelay: true });
    } catch (err) {
      clearTimeout(timer);
      resolve({ ok: false, reason: 'unreachable', detail: (err as Error).message });
      return;
    }
    socket.setNoDelay(true);
    socket.once(endpoint.tls ? 'secureConnect' : 'connect', () => socket.write(connectPacket(endpoint)));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4) return;
      if (received[0] !== 0x20 || received[1] !== 0x02) {
        finish({ ok: false, reason: 'protocol', detail: 'the answer to CONNECT was not a CONNACK' });
        return;
      }
      const code = received[3]!;
      if (code === 0) finish({ ok: true });
      else if (code === 4 || code === 5) finish({ ok: false, reason: 'credentials', detail: code === 4 ? 'bad user name or password' : 'not authorized' });
      else finish({ ok: false, reason: 'protocol', detail: `CONNACK return code ${code}` });
    });
    socket.on('error', (err) => finish({ ok: false, reason: 'unreachable', detail: err.message }));
    socket.on('close', () => finish({ ok: false, reason: 'unreachable', detail: 'the broker closed the connection' }));
  });
}

function connectPacket(endpoint: BrokerEndpoint): Buffer {
  let flags = 0x02; // clean session: a probe leaves nothing behind
  if (endpoint.username !== undefined) flags |= 0x80;
  if (endpoint.password !== undefined) flags |= 0x40;
  const body = Buffer.concat([
    utf8('MQTT'),
    Buffer.from([0x04, flags, 0x00, 0x0a]), // protocol level 4 (3.1.1), keepalive 10 s
    utf8(`mam-probe-${process.pid}-${randomBytes(4).toString('hex')}`),
    ...(endpoint.username !== undefined ? [utf8(endpoint.username)] : []),
    ...(endpoint.password !== undefined ? [utf8(endpoint.password)] : []),
  ]);
  return Buffer.concat([Buffer.from([0x10]), remainingLength(body.length), body]);
}

function utf8(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const length = Buffer.alloc(2);
  length.writeUInt16BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function remainingLength(n: number): Buffer {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return Buffer.from(out);
}
