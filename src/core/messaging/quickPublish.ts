import * as fs from 'node:fs';
import * as net from 'node:net';
import type { BrokerEndpoint } from './brokerRecord';
import { connectPacket, DISCONNECT, publishPacket, readPackets } from './mqttWire';
import { errorMessage } from '../base/errors';

/** Where to publish: the subset of a broker endpoint this one-shot client needs. */
export type QuickEndpoint = Omit<BrokerEndpoint, 'embedded'>;

export interface QuickMessage {
  topic: string;
  payload: Buffer | string;
  retain?: boolean;
}

/** Why a one-shot publish failed: `refused` (credentials, protocol) is final, the rest may pass. */
export class QuickPublishError extends Error {
  constructor(
    message: string,
    readonly kind: 'unreachable' | 'refused' | 'timeout',
  ) {
    super(message);
    this.name = 'QuickPublishError';
  }
}

const CONNACK_REASONS: Record<number, string> = {
  1: 'unacceptable protocol version',
  2: 'client identifier rejected',
  3: 'server unavailable',
  4: 'bad user name or password',
  5: 'not authorized',
};

/**
 * Connects, publishes `messages` at QoS 1 in order, waits for every PUBACK, and disconnects. This
 * is the whole life of a `mam event` process, so it speaks the handful of packets it needs itself
 * (mqttWire.ts) over a raw socket with TCP_NODELAY: loading MQTT.js costs more than the rest of
 * the command. Rejects with QuickPublishError.
 */
export function publishOnce(endpoint: QuickEndpoint, clientId: string, messages: readonly QuickMessage[], timeoutMs = 5000): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const socket = endpoint.tls
      ? (require('node:tls') as typeof import('node:tls')).connect({ host: endpoint.host, port: endpoint.port, ...(endpoint.ca ? { ca: fs.readFileSync(endpoint.ca) } : {}), servername: endpoint.host })
      : net.createConnection({ host: endpoint.host, port: endpoint.port, noDelay: true });
    if (endpoint.tls) socket.setNoDelay(true);
    let received: Buffer = Buffer.alloc(0);
    const unacked = new Set<number>();
    let settled = false;
    const finish = (err?: QuickPublishError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) socket.destroy();
      // Closed once DISCONNECT is written, without waiting for the broker to close its side: a
      // `mam event` process would otherwise wait on the broker's turn to exit (a few ms under load).
      else socket.end(DISCONNECT, () => socket.destroy());
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => finish(new QuickPublishError(`no answer from ${endpoint.host}:${endpoint.port} within ${timeoutMs} ms`, 'timeout')), timeoutMs);

    socket.once(endpoint.tls ? 'secureConnect' : 'connect', () => {
      socket.write(connectPacket({ clientId, keepaliveS: 30, ...(endpoint.username ? { username: endpoint.username } : {}), ...(endpoint.password ? { password: endpoint.password } : {}) }));
    });
    socket.on('data', (chunk: Buffer) => {
      let packets;
      try {
        ({ packets, rest: received } = readPackets(Buffer.concat([received, chunk])));
      } catch (err) {
        return finish(new QuickPublishError(`bad packet from the broker: ${errorMessage(err)}`, 'refused'));
      }
      for (const packet of packets) {
        if (packet.type === 'connack') {
          if (packet.returnCode !== 0) return finish(new QuickPublishError(`the broker refused the connection: ${CONNACK_REASONS[packet.returnCode] ?? `code ${packet.returnCode}`}`, 'refused'));
          if (messages.length === 0) return finish();
          // Pipelined: the broker handles one connection's packets in order, so order is kept.
          messages.forEach((m, i) => {
            unacked.add(i + 1);
            socket.write(publishPacket(m.topic, Buffer.isBuffer(m.payload) ? m.payload : Buffer.from(m.payload), i + 1, m.retain ?? false));
          });
        } else if (packet.type === 'puback') {
          unacked.delete(packet.messageId);
          if (unacked.size === 0) return finish();
        }
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => finish(new QuickPublishError(`cannot reach the broker at ${endpoint.host}:${endpoint.port}: ${err.code ?? err.message}`, 'unreachable')));
    socket.on('close', () => finish(new QuickPublishError(`the broker at ${endpoint.host}:${endpoint.port} closed the connection`, 'unreachable')));
  });
}
