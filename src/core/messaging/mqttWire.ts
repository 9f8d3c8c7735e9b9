/**
 * The few MQTT 3.1.1 packets a one-shot publisher needs (CONNECT, PUBLISH at QoS 1, DISCONNECT out;
 * CONNACK and PUBACK in), encoded by hand. `mam event` runs once per event inside an agent's turn,
 * and MQTT.js's own codec (mqtt-packet) builds a 65,536-entry buffer cache when it is loaded, which
 * alone costs ~20 ms of a ~60 ms process; these packets are simple enough to write out (MQTT
 * 3.1.1, OASIS standard, §2 and §3). The full client (MQTT.js) is used everywhere else.
 */

export interface ConnectFields {
  clientId: string;
  keepaliveS: number;
  username?: string;
  password?: string;
}

export function connectPacket(f: ConnectFields): Buffer {
  const flags = 0x02 /* clean session */ | (f.username !== undefined ? 0x80 : 0) | (f.password !== undefined ? 0x40 : 0);
  const body = Buffer.concat([
    utf8('MQTT'),
    Buffer.from([4 /* protocol level 3.1.1 */, flags, (f.keepaliveS >> 8) & 0xff, f.keepaliveS & 0xff]),
    utf8(f.clientId),
    ...(f.username !== undefined ? [utf8(f.username)] : []),
    ...(f.password !== undefined ? [utf8(f.password)] : []),
  ]);
  return packet(0x10, body);
}

export function publishPacket(topic: string, payload: Buffer, messageId: number, retain: boolean): Buffer {
  const id = Buffer.from([(messageId >> 8) & 0xff, messageId & 0xff]);
  return packet(0x30 | 0x02 /* QoS 1 */ | (retain ? 0x01 : 0), Buffer.concat([utf8(topic), id, payload]));
}

export const DISCONNECT = Buffer.from([0xe0, 0x00]);

export type IncomingPacket = { type: 'connack'; returnCode: number } | { type: 'puback'; messageId: number } | { type: 'other'; code: number };

/**
 * Splits bytes received so far into whole packets; returns them and the unconsumed rest. Throws
 * on a malformed length.
 */
export function readPackets(buffer: Buffer): { packets: IncomingPacket[]; rest: Buffer } {
  const packets: IncomingPacket[] = [];
  let offset = 0;
  for (;;) {
    if (buffer.length - offset < 2) break;
    const length = new RemainingLength();
    let i = offset + 1;
    let complete = false;
    while (!complete && i < buffer.length) {
      const read = length.push(buffer[i++]!);
      if (read === 'malformed') throw new Error('malformed remaining length');
      complete = read === 'done';
    }
    if (!complete || buffer.length - i < length.value) break;
    const code = buffer[offset]! >> 4;
    const body = buffer.subarray(i, i + length.value);
    if (code === 2 && body.length >= 2) packets.push({ type: 'connack', returnCode: body[1]! });
    else if (code === 4 && body.length >= 2) packets.push({ type: 'puback', messageId: (body[0]! << 8) | body[1]! });
    else packets.push({ type: 'other', code });
    offset = i + length.value;
  }
  return { packets, rest: buffer.subarray(offset) };
}

/**
 * Reads a fixed header's remaining length (MQTT 3.1.1 §2.2.3) one byte at a time, as the bytes
 * arrive: 7 bits a byte, least significant first, the top bit set while more follow, at most four
 * bytes. `value` is the length read so far (complete once `push` says 'done').
 */
export class RemainingLength {
  value = 0;
  private multiplier = 1;
  private bytes = 0;

  push(byte: number): 'more' | 'done' | 'malformed' {
    this.value += (byte & 0x7f) * this.multiplier;
    this.multiplier *= 128;
    this.bytes++;
    if ((byte & 0x80) === 0) return 'done';
    return this.bytes === 4 ? 'malformed' : 'more';
  }
}

function packet(header: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([header]), remainingLengthBytes(body.length), body]);
}

/** A remaining length as a fixed header carries it (the inverse of `RemainingLength`). */
export function remainingLengthBytes(n: number): Buffer {
  const bytes: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    bytes.push(byte);
  } while (n > 0);
  return Buffer.from(bytes);
}

function utf8(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from([(bytes.length >> 8) & 0xff, bytes.length & 0xff]), bytes]);
}
