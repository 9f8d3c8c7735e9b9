/**
 * aedes has no maximum packet size: its parser buffers whatever length a packet header announces. We
 * watch the bytes a client sends, read each MQTT fixed header, and drop the connection as soon as a
 * header announces more than the limit — before the body is buffered.
 */
import type { Socket } from 'node:net';
import { RemainingLength } from './mqttWire';

/** Follows MQTT frame boundaries through a byte stream, chunk by chunk. */
export class PacketSizeScanner {
  private state: 'header' | 'length' | 'body' = 'header';
  private length = new RemainingLength();
  private bodyLeft = 0;

  constructor(private readonly maxBytes: number) {}

  /** Feeds the next chunk; returns why the stream must be dropped, or undefined while it is fine. */
  feed(chunk: Uint8Array): string | undefined {
    let i = 0;
    while (i < chunk.length) {
      switch (this.state) {
        case 'header':
          i++;
          this.state = 'length';
          this.length = new RemainingLength();
          break;
        case 'length': {
          const read = this.length.push(chunk[i++]!);
          const length = this.length.value;
          if (length > this.maxBytes) return `a packet of ${length} bytes exceeds the limit of ${this.maxBytes}`;
          if (read === 'malformed') return 'a malformed packet length';
          if (read === 'more') break;
          if (length === 0) {
            this.state = 'header';
          } else {
            this.bodyLeft = length;
            this.state = 'body';
          }
          break;
        }
        case 'body': {
          const take = Math.min(this.bodyLeft, chunk.length - i);
          i += take;
          this.bodyLeft -= take;
          if (this.bodyLeft === 0) this.state = 'header';
          break;
        }
      }
    }
    return undefined;
  }
}

/**
 * Destroys `socket` when the client sends a packet over `maxBytes`. Attach after `broker.handle`:
 * aedes reads the socket in paused mode (`'readable'` + `read()`), and `read()` also emits `'data'`
 * for each chunk it returns, so listening here sees every byte without switching the stream to
 * flowing mode.
 */
export function limitPacketSize(socket: Socket, maxBytes: number, onDrop: (why: string) => void): void {
  const scanner = new PacketSizeScanner(maxBytes);
  socket.on('data', (chunk: Buffer) => {
    if (socket.destroyed) return;
    const why = scanner.feed(chunk);
    if (why) {
      onDrop(why);
      socket.destroy();
    }
  });
}
