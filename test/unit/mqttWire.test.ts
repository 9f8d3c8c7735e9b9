import { strict as assert } from 'node:assert';
import { connectPacket, publishPacket, readPackets, RemainingLength, remainingLengthBytes } from '../../src/core/messaging/mqttWire';

describe('the one-shot publisher’s MQTT 3.1.1 packets', () => {
  it('encodes CONNECT with clean session, keepalive and credentials as the standard lays out', () => {
    const p = connectPacket({ clientId: 'c1', keepaliveS: 30, username: 'u', password: 'pw' });
    assert.deepEqual([...p], [0x10, 21, 0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 0xc2, 0, 30, 0, 2, 0x63, 0x31, 0, 1, 0x75, 0, 2, 0x70, 0x77]);
  });

  it('encodes PUBLISH at QoS 1 with a multi-byte remaining length', () => {
    const payload = Buffer.alloc(200, 0x61);
    const p = publishPacket('a/b', payload, 7, true);
    assert.equal(p[0], 0x33);
    assert.deepEqual([p[1], p[2]], [(2 + 3 + 2 + 200) % 128 | 0x80, Math.floor((2 + 3 + 2 + 200) / 128)]);
    assert.deepEqual([...p.subarray(3, 10)], [0, 3, 0x61, 0x2f, 0x62, 0, 7]);
    assert.equal(p.length, 3 + 207);
  });

  it('reads CONNACK and PUBACK however the bytes are split', () => {
    const bytes = Buffer.from([0x20, 2, 0, 0, 0x40, 2, 0x01, 0x02, 0x40, 2, 0, 3]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const first = readPackets(bytes.subarray(0, cut));
      const second = readPackets(Buffer.concat([first.rest, bytes.subarray(cut)]));
      assert.deepEqual([...first.packets, ...second.packets], [
        { type: 'connack', returnCode: 0 },
        { type: 'puback', messageId: 0x0102 },
        { type: 'puback', messageId: 3 },
      ]);
      assert.equal(second.rest.length, 0);
    }
  });

  it('refuses a remaining length longer than four bytes', () => {
    assert.throws(() => readPackets(Buffer.from([0x40, 0xff, 0xff, 0xff, 0xff, 0x01])), /malformed remaining length/);
  });

  it('reads back every remaining length it writes, one byte at a time, at each size boundary', () => {
    for (const n of [0, 1, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152, 268_435_455]) {
      const bytes = [...remainingLengthBytes(n)];
      assert.equal(bytes.length, n < 128 ? 1 : n < 16_384 ? 2 : n < 2_097_152 ? 3 : 4, `${n} takes the fewest bytes`);
      const length = new RemainingLength();
      const reads = bytes.map((b) => length.push(b));
      assert.deepEqual(reads, [...bytes.slice(1).map(() => 'more'), 'done'], `${n}`);
      assert.equal(length.value, n);
    }
  });

  it('calls a fourth length byte with the continuation bit malformed', () => {
    const length = new RemainingLength();
    assert.deepEqual([0x80, 0x80, 0x80, 0x80].map((b) => length.push(b)), ['more', 'more', 'more', 'malformed']);
  });
});
