/**
 * One MQTT 3.1.1 CONNECT / CONNACK exchange over a raw socket: "does this broker accept these
 * credentials right now?". It speaks through mqttWire's packets, so that starting the embedded
 * broker and `mam broker status` need neither mqtt.js nor aedes loaded.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { randomBytes } from 'node:crypto';
import type { BrokerEndpoint } from './brokerRecord';
import { connectPacket, DISCONNECT, readPackets } from './mqttWire';
import { errorMessage } from '../base/errors';

export type ProbeResult =
  | { ok: true }
  | { ok: false; reason: 'unreachable' | 'credentials' | 'timeout' | 'protocol'; detail: string };

export function probeBroker(endpoint: BrokerEndpoint, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    let received: Buffer = Buffer.alloc(0);
    let socket: net.Socket;
    const finish = (result: ProbeResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (result.ok) socket.end(DISCONNECT); // so the broker logs a clean goodbye
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
      resolve({ ok: false, reason: 'unreachable', detail: errorMessage(err) });
      return;
    }
    socket.setNoDelay(true);
    // Clean session, keepalive 10 s: a probe leaves nothing behind.
    const hello = connectPacket({ clientId: `mam-probe-${process.pid}-${randomBytes(4).toString('hex')}`, keepaliveS: 10, ...(endpoint.username !== undefined ? { username: endpoint.username } : {}), ...(endpoint.password !== undefined ? { password: endpoint.password } : {}) });
    socket.once(endpoint.tls ? 'secureConnect' : 'connect', () => socket.write(hello));
    socket.on('data', (chunk: Buffer) => {
      let read: ReturnType<typeof readPackets>;
      try {
        read = readPackets(Buffer.concat([received, chunk]));
      } catch (err) {
        return finish({ ok: false, reason: 'protocol', detail: errorMessage(err) });
      }
      received = read.rest;
      const answer = read.packets[0];
      if (!answer) return;
      if (answer.type !== 'connack') return finish({ ok: false, reason: 'protocol', detail: 'the answer to CONNECT was not a CONNACK' });
      const code = answer.returnCode;
      if (code === 0) finish({ ok: true });
      else if (code === 4 || code === 5) finish({ ok: false, reason: 'credentials', detail: code === 4 ? 'bad user name or password' : 'not authorized' });
      else finish({ ok: false, reason: 'protocol', detail: `CONNACK return code ${code}` });
    });
    socket.on('error', (err) => finish({ ok: false, reason: 'unreachable', detail: err.message }));
    socket.on('close', () => finish({ ok: false, reason: 'unreachable', detail: 'the broker closed the connection' }));
  });
}
