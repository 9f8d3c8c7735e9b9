import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import { BrokerUnusableError } from '../../src/core/messaging/brokerRecord';
import { connectClient, uniqueClientId } from '../../src/core/messaging/mqttClient';
import { freePort } from '../support/mosquitto';

describe('MQTT client factory: failures', function () {
  this.timeout(20_000);
  let silent: net.Server | undefined;
  const sockets = new Set<net.Socket>();
  afterEach(async () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    if (silent) await new Promise((resolve) => silent!.close(resolve));
    silent = undefined;
  });

  const endpoint = (port: number) => ({ host: '127.0.0.1', port, tls: false, embedded: false });
  const expectUnusable = (code: string, message: RegExp) => (err: unknown) => {
    assert.ok(err instanceof BrokerUnusableError, String(err));
    assert.equal(err.exitCode, 3);
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  };

  it('a port nobody listens on is "refused" at the first attempt', async () => {
    const port = await freePort();
    await assert.rejects(
      connectClient(endpoint(port), { clientId: uniqueClientId('t') }),
      expectUnusable('broker_refused', new RegExp(`the MQTT broker at 127\\.0\\.0\\.1:${port} refused the connection; check that it runs`)),
    );
    const embedded = { ...endpoint(port), embedded: true };
    await assert.rejects(connectClient(embedded, { clientId: uniqueClientId('t') }), expectUnusable('broker_refused', /\(embedded\) refused the connection; start it with 'mam broker start'/));
  });

  it('with keepRetrying, keeps trying until connectTimeoutMs, then reports the time-out', async () => {
    const port = await freePort();
    const started = Date.now();
    await assert.rejects(
      connectClient(endpoint(port), { clientId: uniqueClientId('t'), keepRetrying: true, reconnectPeriodMs: 50, connectTimeoutMs: 600 }),
      expectUnusable('broker_timeout', /no answer from the MQTT broker at 127\.0\.0\.1:\d+ within 1 s/),
    );
    assert.ok(Date.now() - started >= 550, 'it waited for its bound');
  });

  it('a server that accepts TCP but never answers CONNECT is a time-out', async () => {
    silent = net.createServer((s) => sockets.add(s));
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    await assert.rejects(connectClient(endpoint(port), { clientId: uniqueClientId('t'), connectTimeoutMs: 300 }), expectUnusable('broker_timeout', /did not answer|no answer/));
  });

  it('a server that hangs up before CONNACK is reported at once', async () => {
    silent = net.createServer((s) => s.destroy());
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    await assert.rejects(connectClient(endpoint(port), { clientId: uniqueClientId('t') }), (err: unknown) => err instanceof BrokerUnusableError && err.exitCode === 3);
  });
});
