/**
 * The contract every broker MAM talks to passes, through our own client factory: run by
 * brokerEmbedded.test.ts against the aedes daemon and by brokerMosquitto.test.ts against Mosquitto.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import type { MqttClient, IPublishPacket } from 'mqtt';
import { BrokerUnusableError, MAX_PACKET_BYTES, type BrokerEndpoint } from '../../src/core/messaging/brokerRecord';
import { connectClient, uniqueClientId, type ConnectClientOptions } from '../../src/core/messaging/mqttClient';

export interface BrokerUnderTest {
  endpoint: BrokerEndpoint;
  /** Stops the broker (clients see the connection drop). */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same credentials. */
  start(): Promise<void>;
}

export interface Received {
  topic: string;
  payload: string;
  packet: IPublishPacket;
}

/** Resolves with the next `count` messages `client` receives (matching `topic`, if given); bounded. */
export function nextMessages(client: MqttClient, count: number, options: { topic?: string; timeoutMs?: number } = {}): Promise<Received[]> {
  const got: Received[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.removeListener('message', onMessage);
      reject(new Error(`timed out with ${got.length} of ${count} messages${options.topic ? ` on ${options.topic}` : ''}`));
    }, options.timeoutMs ?? 10_000);
    const onMessage = (topic: string, payload: Buffer, packet: IPublishPacket): void => {
      if (options.topic !== undefined && topic !== options.topic) return;
      got.push({ topic, payload: payload.toString(), packet });
      if (got.length === count) {
        clearTimeout(timer);
        client.removeListener('message', onMessage);
        resolve(got);
      }
    };
    client.on('message', onMessage);
  });
}

interface Listenable {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  removeListener(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** Resolves when `emitter` emits `event`, rejects after `timeoutMs`. Unlike events.once, an 'error' meanwhile is not a failure. */
export function eventWithin(emitter: Listenable, event: string, timeoutMs: number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.removeListener(event, listener);
      reject(new Error(`no '${event}' within ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (...args: unknown[]): void => {
      clearTimeout(timer);
      emitter.removeListener(event, listener);
      resolve(args);
    };
    emitter.on(event, listener);
  });
}

export function busContract(name: string, makeBroker: () => Promise<BrokerUnderTest>): void {
  describe(`bus contract: ${name}`, function () {
    this.timeout(60_000);
    let broker: BrokerUnderTest | undefined;
    let clients: MqttClient[] = [];
    let n = 0;
    const topic = (what: string): string => `mam/contract-${process.pid}-${n}/${what}`;
    const connect = async (role: string, options: Partial<ConnectClientOptions> = {}, endpoint?: BrokerEndpoint): Promise<MqttClient> => {
      const client = await connectClient(endpoint ?? broker!.endpoint, { clientId: uniqueClientId(role), reconnectPeriodMs: 0, ...options });
      clients.push(client);
      return client;
    };

    beforeEach(async () => {
      n++;
      broker = await makeBroker();
    });
    afterEach(async () => {
      await Promise.all(clients.map((c) => c.endAsync(true)));
      clients = [];
      await broker?.stop();
      broker = undefined;
    });

    it('connects with its credentials, over MQTT 3.1.1', async () => {
      const client = await connect('contract');
      assert.equal(client.connected, true);
      assert.equal(client.options.protocolVersion, 4);
    });

    it('refuses a wrong password, and no credentials, with BrokerUnusableError (exit 3)', async () => {
      const base = broker!.endpoint;
      for (const endpoint of [{ ...base, password: 'wrong' }, { ...base, username: undefined, password: undefined }]) {
        await assert.rejects(connect('contract', {}, endpoint), (err: unknown) => {
          assert.ok(err instanceof BrokerUnusableError, String(err));
          assert.equal(err.exitCode, 3);
          assert.equal(err.code, 'broker_credentials');
          assert.match(err.message, /refused the user name or password/);
          return true;
        });
      }
    });

    it('acknowledges a QoS 1 publish (PUBACK) and delivers it to a subscriber in another client', async () => {
      const sub = await connect('sub');
      await sub.subscribeAsync(topic('one'), { qos: 1 });
      const pub = await connect('pub');
      const acks: number[] = [];
      pub.on('packetreceive', (p) => p.cmd === 'puback' && acks.push(p.messageId!));
      const got = nextMessages(sub, 1);
      const sent = await pub.publishAsync(topic('one'), 'hello 한국어', { qos: 1 });
      assert.ok(sent && 'messageId' in sent && sent.messageId !== undefined);
      assert.deepEqual(acks, [sent.messageId]);
      const [m] = await got;
      assert.equal(m!.topic, topic('one'));
      assert.equal(m!.payload, 'hello 한국어');
      assert.equal(m!.packet.qos, 1);
    });

    it('keeps the order of 1,000 QoS 1 messages from one publisher to one subscriber', async () => {
      const sub = await connect('sub');
      await sub.subscribeAsync(topic('order'), { qos: 1 });
      const pub = await connect('pub');
      const got = nextMessages(sub, 1000, { timeoutMs: 30_000 });
      await Promise.all(Array.from({ length: 1000 }, (_, i) => pub.publishAsync(topic('order'), String(i), { qos: 1 })));
      const payloads = (await got).map((m) => Number(m.payload));
      assert.deepEqual(payloads, Array.from({ length: 1000 }, (_, i) => i));
    });

    it('delivers a retained message to a late subscriber, and an empty retained publish clears it', async () => {
      const state = topic('state');
      const sentinel = topic('sentinel');
      const pub = await connect('pub');
      await pub.publishAsync(state, 'v1', { qos: 1, retain: true });
      await pub.publishAsync(sentinel, 'here', { qos: 1, retain: true });
      // One SUBSCRIBE for [state, sentinel]: both brokers replay retained messages in the order of the
      // topics in the packet, so once the sentinel arrives, a retained `state` would have come first.
      const late = await connect('late');
      const replay = nextMessages(late, 2);
      await late.subscribeAsync({ [state]: { qos: 1 }, [sentinel]: { qos: 1 } });
      const first = await replay;
      assert.deepEqual(first.map((m) => [m.topic, m.payload, m.packet.retain]), [[state, 'v1', true], [sentinel, 'here', true]]);

      await pub.publishAsync(state, '', { qos: 1, retain: true });
      const later = await connect('later');
      const seen: string[] = [];
      later.on('message', (t) => seen.push(t));
      const sentinelOnly = nextMessages(later, 1, { topic: sentinel });
      await later.subscribeAsync({ [state]: { qos: 1 }, [sentinel]: { qos: 1 } });
      await sentinelOnly;
      assert.deepEqual(seen, [sentinel], 'the cleared retained message is not replayed');
    });

    it('reconnects after the broker restarts, and sends a QoS 1 publish queued during the outage', async () => {
      const sub = await connect('sub', { reconnectPeriodMs: 100 });
      await sub.subscribeAsync([topic('live'), topic('queued')], { qos: 1 });
      const pub = await connect('pub', { reconnectPeriodMs: 100 });
      const offline = Promise.all([eventWithin(sub, 'offline', 10_000), eventWithin(pub, 'offline', 10_000)]);
      await broker!.stop();
      await offline;

      assert.equal(pub.connected, false);
      // On reconnect mqtt.js sends its stored QoS 1 publishes *before* it resubscribes, and the two
      // clients reconnect in either order; published retained as well, the message reaches the
      // subscriber live or, if it resubscribes later, from the broker's retained store.
      const queued = pub.publishAsync(topic('queued'), 'sent while the broker was down', { qos: 1, retain: true });
      const arrives = nextMessages(sub, 1, { topic: topic('queued'), timeoutMs: 20_000 });
      const resubscribed = eventWithin(sub, 'connect', 20_000).then(() => waitForPacket(sub, 'suback', 10_000));
      await broker!.start();
      await queued;
      assert.equal((await arrives)[0]!.payload, 'sent while the broker was down');

      await resubscribed; // the subscriber's own resubscription, acknowledged
      const live = nextMessages(sub, 1, { topic: topic('live') });
      await pub.publishAsync(topic('live'), 'after the restart', { qos: 1 });
      assert.equal((await live)[0]!.payload, 'after the restart');
    });

    it('turns Nagle off on the client socket (TCP_NODELAY)', async () => {
      const calls: Array<{ socket: net.Socket; enable: boolean | undefined }> = [];
      const original = net.Socket.prototype.setNoDelay;
      net.Socket.prototype.setNoDelay = function (this: net.Socket, enable?: boolean) {
        calls.push({ socket: this, enable });
        return original.call(this, enable);
      };
      let client: MqttClient;
      try {
        client = await connect('nodelay');
      } finally {
        net.Socket.prototype.setNoDelay = original;
      }
      const socket = client.stream as unknown as net.Socket;
      assert.ok(socket instanceof net.Socket);
      assert.equal(socket.remotePort, broker!.endpoint.port);
      assert.ok(calls.some((c) => c.socket === socket && c.enable !== false), 'setNoDelay(true) was called on the client socket');
    });

    it(`drops a connection that sends a packet over ${MAX_PACKET_BYTES} bytes, and keeps serving others`, async () => {
      const sub = await connect('sub');
      await sub.subscribeAsync(topic('big'), { qos: 1 });
      const pub = await connect('pub');
      const half = 'x'.repeat(MAX_PACKET_BYTES / 2);
      const got = nextMessages(sub, 1, { topic: topic('big') });
      await pub.publishAsync(topic('big'), half, { qos: 1 });
      assert.equal((await got)[0]!.payload.length, half.length);

      const big = await connect('big');
      const closed = eventWithin(big, 'close', 10_000);
      big.publish(topic('big'), Buffer.alloc(MAX_PACKET_BYTES + 1024, 0x61), { qos: 0 });
      await closed;

      const after = nextMessages(sub, 1, { topic: topic('big') });
      await pub.publishAsync(topic('big'), 'still here', { qos: 1 });
      assert.equal((await after)[0]!.payload, 'still here');
    });
  });
}

function waitForPacket(client: MqttClient, cmd: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.removeListener('packetreceive', onPacket);
      reject(new Error(`no ${cmd} within ${timeoutMs} ms`));
    }, timeoutMs);
    const onPacket = (p: { cmd: string }): void => {
      if (p.cmd !== cmd) return;
      clearTimeout(timer);
      client.removeListener('packetreceive', onPacket);
      resolve();
    };
    client.on('packetreceive', onPacket);
  });
}
