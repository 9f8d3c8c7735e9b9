import * as fs from 'node:fs';
// node:net (and node:stream under it) is loaded when the first connection opens: a `mam event`
// that hands its event to the host's relay never loads it (docs/benchmarks.md).
import type * as net from 'node:net';
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
export async function publishOnce(endpoint: QuickEndpoint, clientId: string, messages: readonly QuickMessage[], timeoutMs = 5000): Promise<void> {
  const connection = new QuickConnection(endpoint, clientId);
  try {
    await connection.publish(messages, timeoutMs);
  } finally {
    connection.close();
  }
}

/**
 * One MQTT connection kept open across publishes, for a long-lived publisher (the heartbeat
 * service): no TCP handshake or MQTT session per event. Publishes may overlap (each waits for its
 * own PUBACKs; one connection's packets reach the broker in order). A connection that fails or
 * times out is dropped, failing what waited on it; the next publish connects again. No keepalive:
 * a broker that vanished is found by a publish's own timeout, and an idle publisher costs nothing.
 */
export class QuickConnection {
  private socket: net.Socket | undefined;
  /** The socket being connected, until its CONNACK. */
  private opening: net.Socket | undefined;
  private connecting: Promise<net.Socket> | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve(): void; fail(err: QuickPublishError): void }>();

  constructor(
    private readonly endpoint: QuickEndpoint,
    private readonly clientId: string,
  ) {}

  /**
   * Starts connecting now, so that the TCP and MQTT handshakes run beside what the caller does next
   * (`mam event` writes its outbox meanwhile). The first publish takes this attempt's outcome, a
   * refusal included (it is not asked again); later ones connect again when they must.
   */
  open(): void {
    const attempt = this.connect();
    attempt.catch(() => undefined);
    this.early = attempt;
  }

  /** The attempt `open` started, until a publish takes it. */
  private early: Promise<net.Socket> | undefined;

  /** Publishes `messages` at QoS 1 in order; resolves once the broker acknowledged every one. */
  async publish(messages: readonly QuickMessage[], timeoutMs = 5000): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new QuickPublishError(`no answer from ${this.endpoint.host}:${this.endpoint.port} within ${timeoutMs} ms`, 'timeout'));
        this.drop();
      }, timeoutMs);
    });
    try {
      const attempt = this.early ?? this.connect();
      this.early = undefined;
      const socket = await Promise.race([attempt, timeout]);
      const acks = messages.map((m) => {
        const id = this.allocateId();
        const acked = new Promise<void>((resolve, fail) => this.waiting.set(id, { resolve, fail }));
        socket.write(publishPacket(m.topic, Buffer.isBuffer(m.payload) ? m.payload : Buffer.from(m.payload), id, m.retain ?? false));
        return acked;
      });
      await Promise.race([Promise.all(acks), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Disconnects cleanly; anything still waiting fails. */
  close(): void {
    const socket = this.socket;
    this.opening?.destroy();
    this.socket = this.opening = undefined;
    this.connecting = undefined;
    this.failAll(new QuickPublishError('the connection was closed', 'unreachable'));
    // Closed once DISCONNECT is written, without waiting for the broker to close its side: a
    // `mam event` process would otherwise wait on the broker's turn to exit (a few ms under load).
    socket?.end(DISCONNECT, () => socket.destroy());
  }

  private allocateId(): number {
    // Packet identifiers are 1..65535 and must not be reused while their PUBACK is awaited.
    do this.nextId = (this.nextId % 0xffff) + 1;
    while (this.waiting.has(this.nextId));
    return this.nextId;
  }

  private connect(): Promise<net.Socket> {
    if (this.socket) return Promise.resolve(this.socket);
    this.connecting ??= new Promise<net.Socket>((resolve, reject) => {
      const { endpoint } = this;
      const tcp: typeof import('node:net') = require('node:net');
      const tls: typeof import('node:tls') | undefined = endpoint.tls ? require('node:tls') : undefined;
      const socket = tls
        ? tls.connect({ host: endpoint.host, port: endpoint.port, ...(endpoint.ca ? { ca: fs.readFileSync(endpoint.ca) } : {}), servername: endpoint.host })
        : tcp.createConnection({ host: endpoint.host, port: endpoint.port, noDelay: true });
      if (tls) socket.setNoDelay(true);
      this.opening = socket;
      let received: Buffer = Buffer.alloc(0);
      let open = false;
      const fail = (err: QuickPublishError): void => {
        socket.destroy();
        if (this.opening === socket) {
          this.opening = undefined;
          this.connecting = undefined;
        }
        if (this.socket === socket) this.socket = undefined;
        if (open) this.failAll(err);
        else reject(err);
      };
      socket.once(endpoint.tls ? 'secureConnect' : 'connect', () => {
        socket.write(connectPacket({ clientId: this.clientId, keepaliveS: 0, ...(endpoint.username ? { username: endpoint.username } : {}), ...(endpoint.password ? { password: endpoint.password } : {}) }));
      });
      socket.on('data', (chunk: Buffer) => {
        let packets;
        try {
          ({ packets, rest: received } = readPackets(Buffer.concat([received, chunk])));
        } catch (err) {
          return fail(new QuickPublishError(`bad packet from the broker: ${errorMessage(err)}`, 'refused'));
        }
        for (const packet of packets) {
          if (packet.type === 'connack' && !open) {
            if (packet.returnCode !== 0) return fail(new QuickPublishError(`the broker refused the connection: ${CONNACK_REASONS[packet.returnCode] ?? `code ${packet.returnCode}`}`, 'refused'));
            open = true;
            this.socket = socket;
            this.opening = undefined;
            this.connecting = undefined;
            resolve(socket);
          } else if (packet.type === 'puback') {
            const waiter = this.waiting.get(packet.messageId);
            this.waiting.delete(packet.messageId);
            waiter?.resolve();
          }
        }
      });
      socket.on('error', (err: NodeJS.ErrnoException) => fail(new QuickPublishError(`cannot reach the broker at ${endpoint.host}:${endpoint.port}: ${err.code ?? err.message}`, 'unreachable')));
      socket.on('close', () => fail(new QuickPublishError(`the broker at ${endpoint.host}:${endpoint.port} closed the connection`, 'unreachable')));
    });
    return this.connecting;
  }

  /** Forgets a connection that stopped answering; the next publish makes a new one. */
  private drop(): void {
    const sockets = [this.socket, this.opening];
    this.socket = this.opening = undefined;
    this.connecting = undefined;
    for (const s of sockets) s?.destroy();
  }

  private failAll(err: QuickPublishError): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.fail(err);
  }
}
