import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { MqttClient } from 'mqtt';
import { BrokerUnusableError } from '../../src/core/messaging/brokerRecord';
import { connectClient, uniqueClientId } from '../../src/core/messaging/mqttClient';
import { tempDir } from '../support/helpers';
import { mosquittoMissing, startMosquitto, type MosquittoBroker } from '../support/mosquitto';
import { itNeeds, programMissing } from '../support/needs';
import { busContract, nextMessages } from './busContract';

const missing = mosquittoMissing();

if (missing) {
  describe('Mosquitto', () => itNeeds(missing, 'the bus contract and TLS', async () => undefined));
} else {
  busContract('Mosquitto', async () => {
    const broker = await startMosquitto();
    return { endpoint: broker.endpoint, stop: () => broker.stop(), start: () => broker.start() };
  });

  describe('Mosquitto over TLS', function () {
    this.timeout(60_000);
    let broker: MosquittoBroker | undefined;
    let client: MqttClient | undefined;
    afterEach(async () => {
      await client?.endAsync(true);
      client = undefined;
      await broker?.stop();
      broker = undefined;
    });

    itNeeds(programMissing('openssl', ['version'], 'apt-get install -y openssl'), 'connects with MQTT_CA trusted, and refuses a server it cannot verify (exit 3)', async () => {
      const pki = makeTestPki(tempDir('pki'));
      broker = await startMosquitto({ tls: pki });
      client = await connectClient(broker.endpoint, { clientId: uniqueClientId('tls'), reconnectPeriodMs: 0 });
      await client.subscribeAsync('mam/tls', { qos: 1 });
      const got = nextMessages(client, 1);
      await client.publishAsync('mam/tls', 'over TLS', { qos: 1 });
      assert.equal((await got)[0]!.payload, 'over TLS');

      const { ca: _trusted, ...untrusted } = broker.endpoint;
      await assert.rejects(connectClient(untrusted, { clientId: uniqueClientId('tls'), reconnectPeriodMs: 0 }), (err: unknown) => {
        assert.ok(err instanceof BrokerUnusableError);
        assert.equal(err.code, 'broker_tls');
        assert.match(err.message, /TLS with the MQTT broker at mqtts:\/\/127\.0\.0\.1:\d+ failed: .*; check MQTT_CA/);
        return true;
      });
    });
  });
}

/** A throwaway CA and a server certificate for 127.0.0.1, made with openssl. */
function makeTestPki(dir: string): { ca: string; cert: string; key: string } {
  const run = (args: string[]): boolean => spawnSync('openssl', args, { cwd: dir, stdio: 'ignore' }).status === 0;
  fs.writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  const ok =
    run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=mam-test-ca']) &&
    run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']) &&
    run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext']);
  if (!ok) throw new Error('openssl could not make the test certificates');
  return { ca: path.join(dir, 'ca.crt'), cert: path.join(dir, 'server.crt'), key: path.join(dir, 'server.key') };
}
