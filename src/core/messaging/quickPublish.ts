import * as fs from 'node:fs';
import * as net from 'node:net';
import * as tls from 'node:tls';
import * as mqttPacket from 'mqtt-packet';

/** Where to publish: the subset of a broker endpoint this one-shot client needs. */
export interface QuickEndpoint {
  host: string;
  port: number;
  tls: boolean;
  ca?: string;
  username?: string;
  password?: string;
}

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
 * is the whole life of a `mam event` process, so it uses only MQTT.js's packet codec
 * (`mqtt-packet`) over a raw socket with TCP_NODELAY instead of the full client: loading MQTT.js
 * costs more than the rest of the command. Resolves with the seqs of nothing; rejects with
 * QuickPublishError.
 */
export function publishOnce(endpoint: QuickEndpoint, clientId: string, messages: readonly QuickMessage[], timeoutMs = 5000): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const socket = endpoint.tls
      ? tls.connect({ host: endpoint.host, port: endpoint.port, ...(endpoint.ca ? { ca: fs.readFileSync(endpoint.ca) } : {}), servername: endpoint.host })
      : net.createConnection({ host: endpoint.host, port: endpoint.port, noDelay: true });
    if (endpoint.tls) socket.setNoDelay(true);
    const parser = mqttPacket.parser({ protocolVersion: 4 });
    const unacked = new Set<number>();
    let settled = false;
    const finish = (err?: QuickPublishError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) socket.destroy();
      else socket.end(mqttPacket.generate({ cmd: 'disconnect' }));
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => finish(new QuickPublishError(`no answer from ${endpoint.host}:${endpoint.port} within ${timeoutMs} ms`, 'timeout')), timeoutMs);

    socket.once(endpoint.tls ? 'secureConnect' : 'connect', () => {
      socket.write(
        mqttPacket.generate({
          cmd: 'connect',
          protocolId: 'MQTT',
          protocolVersion: 4,
          clean: true,
          clientId,
          keepalive: 30,
          ...(endpoint.username ? { username: endpoint.username } : {}),
          ...(endpoint.password ? { password: Buffer.from(endpoint.password) } : {}),
        }),
      );
    });
    parser.on('packet', (packet: mqttPacket.Packet) => {
      if (packet.cmd === 'connack') {
        const code = (packet as mqttPacket.IConnackPacket).returnCode ?? 0;
        if (code !== 0) return finish(new QuickPublishError(`the broker refused the connection: ${CONNACK_REASONS[code] ?? `code ${code}`}`, 'refused'));
        if (messages.length === 0) return finish();
        // Pipelined: the broker handles one connection's packets in order, so order is kept.
        messages.forEach((m, i) => {
          const messageId = i + 1;
          unacked.add(messageId);
          socket.write(mqttPacket.generate({ cmd: 'publish', topic: m.topic, payload: m.payload, qos: 1, messageId, retain: m.retain ?? false, dup: false }));
        });
      } else if (packet.cmd === 'puback') {
        unacked.delete((packet as mqttPacket.IPubackPacket).messageId ?? -1);
        if (unacked.size === 0) finish();
      }
    });
    parser.on('error', (err: Error) => finish(new QuickPublishError(`bad packet from the broker: ${err.message}`, 'refused')));
    socket.on('data', (chunk: Buffer) => parser.parse(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => finish(new QuickPublishError(`cannot reach the broker at ${endpoint.host}:${endpoint.port}: ${err.code ?? err.message}`, 'unreachable')));
    socket.on('close', () => finish(new QuickPublishError(`the broker at ${endpoint.host}:${endpoint.port} closed the connection`, 'unreachable')));
  });
}
