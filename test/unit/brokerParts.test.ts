import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryLogger } from '../../src/core/base/log';
import { uniqueClientId } from '../../src/core/messaging/mqttClient';
import { remainingLengthBytes } from '../../src/core/messaging/mqttWire';
import { PacketSizeScanner } from '../../src/core/messaging/packetLimit';
import { RetainedStore } from '../../src/core/messaging/retainedStore';
import { tempDir, until } from '../support/helpers';

/** An MQTT frame: fixed header byte, remaining length, body. */
function frame(bodyLength: number, header = 0x30): Buffer {
  return Buffer.concat([Buffer.from([header]), remainingLengthBytes(bodyLength), Buffer.alloc(bodyLength, 0x61)]);
}

describe('packet size limit', () => {
  it('passes frames up to the limit however the stream is cut', () => {
    const stream = Buffer.concat([frame(0, 0xc0), frame(10), frame(127), frame(128), frame(1000), frame(16_384)]);
    for (const cut of [1, 2, 3, 7, 64, stream.length]) {
      const scanner = new PacketSizeScanner(16_384);
      for (let i = 0; i < stream.length; i += cut) assert.equal(scanner.feed(stream.subarray(i, i + cut)), undefined, `cut ${cut}`);
    }
  });

  it('refuses a frame as soon as its header announces more than the limit, before the body', () => {
    const scanner = new PacketSizeScanner(1000);
    assert.equal(scanner.feed(frame(5)), undefined);
    assert.equal(scanner.feed(frame(1001).subarray(0, 3)), 'a packet of 1001 bytes exceeds the limit of 1000');
  });

  it('refuses a malformed length (a fifth length byte)', () => {
    assert.equal(new PacketSizeScanner(Number.MAX_SAFE_INTEGER).feed(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff])), 'a malformed packet length');
  });
});

describe('retained store', () => {
  it('saves retained messages (debounced), clears on an empty payload, and loads them again', async () => {
    const file = path.join(tempDir('retained'), 'broker-retained.json');
    const store = new RetainedStore(file, new MemoryLogger(), 10);
    store.update('a/1', Buffer.from('one'), 1);
    store.update('a/2', Buffer.from([0, 255]), 0);
    store.update('a/3', Buffer.from('three'), 1);
    store.update('a/3', Buffer.alloc(0), 1);
    await until(() => fs.existsSync(file), 5_000, 'the debounced write');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const loaded = new RetainedStore(file, new MemoryLogger()).load();
    assert.deepEqual(
      loaded.map((m) => [m.topic, [...m.payload], m.qos]),
      [['a/1', [...Buffer.from('one')], 1], ['a/2', [0, 255], 0]],
    );
  });

  it('moves a malformed file aside with a warning and starts empty', () => {
    const dir = tempDir('retained');
    const file = path.join(dir, 'broker-retained.json');
    fs.writeFileSync(file, '{"version":1,"retained":[{"topic":5}]}');
    const logger = new MemoryLogger();
    assert.deepEqual(new RetainedStore(file, logger).load(), []);
    assert.match(logger.messages('warn')[0]!, /retained\[0\]\.topic must be a string; moved it to .*corrupt-/);
    assert.equal(fs.existsSync(file), false);
  });
});

describe('MQTT client IDs', () => {
  it('are mam-<role>-<host>-<pid>-<random>, unique, and safe characters only', () => {
    const a = uniqueClientId('engine');
    const b = uniqueClientId('engine');
    assert.notEqual(a, b);
    const host = os.hostname().replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 24);
    assert.match(a, new RegExp(`^mam-engine-${host.replace(/[-]/g, '\\-')}-${process.pid}-[0-9a-f]{8}$`));
    assert.match(uniqueClientId('a role/with #+ chars'), /^mam-a-role-with----chars-[A-Za-z0-9_-]+-\d+-[0-9a-f]{8}$/);
  });
});
