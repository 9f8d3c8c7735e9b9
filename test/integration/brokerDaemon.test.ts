/**
 * The daemon run in this process (no CLI, no fork), where a spy can see its side of each connection.
 * It stops itself once broker.json no longer names it, which is how each test ends it.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import type { MqttClient } from 'mqtt';
import { MemoryLogger } from '../../src/core/base/log';
import { runBrokerDaemon } from '../../src/core/messaging/brokerDaemon';
import { newBrokerRecord, readBrokerRecord, writeBrokerRecord, embeddedEndpoint } from '../../src/core/messaging/brokerRecord';
import { connectClient, uniqueClientId } from '../../src/core/messaging/mqttClient';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { tempWorkspace, until } from '../support/helpers';

describe('broker daemon (in process)', function () {
  this.timeout(30_000);
  let daemon: Promise<number> | undefined;
  let paths: ControlPlanePaths;
  let client: MqttClient | undefined;
  const original = net.Socket.prototype.setNoDelay;

  afterEach(async () => {
    net.Socket.prototype.setNoDelay = original;
    await client?.endAsync(true);
    client = undefined;
    if (daemon) {
      const record = readBrokerRecord(paths);
      if (record) writeBrokerRecord(paths, { ...record, pid: null }); // the daemon sees it is no longer named, and stops
      assert.equal(await daemon, 0);
      daemon = undefined;
    }
  });

  it('turns Nagle off on the sockets it accepts', async () => {
    paths = new ControlPlanePaths(tempWorkspace());
    writeBrokerRecord(paths, newBrokerRecord());
    const accepted: number[] = [];
    net.Socket.prototype.setNoDelay = function (this: net.Socket, enable?: boolean) {
      // The server's side of a connection has the broker's port as its local port.
      if (enable !== false && this.localPort !== undefined) accepted.push(this.localPort);
      return original.call(this, enable);
    };
    const logger = new MemoryLogger();
    daemon = runBrokerDaemon(paths, logger, { watchIntervalMs: 50 });
    await until(() => readBrokerRecord(paths)?.pid === process.pid, 10_000, 'the daemon to write its record');
    const endpoint = embeddedEndpoint(readBrokerRecord(paths)!);
    client = await connectClient(endpoint, { clientId: uniqueClientId('daemon-test'), reconnectPeriodMs: 0 });
    assert.ok(accepted.includes(endpoint.port), 'setNoDelay(true) on the accepted socket');
    assert.match(logger.messages('info').join('\n'), new RegExp(`listening on 127\\.0\\.0\\.1:${endpoint.port}`));
  });
});
