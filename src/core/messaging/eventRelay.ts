/**
 * The host's event relay: a FIFO, `.mam/heartbeats/<host>/relay.fifo`, read by the host's
 * heartbeat service. A `mam event` process appends its event to the job's outbox (fsynced, under
 * the outbox lock, as always) and writes the job's ID here; the service publishes whatever the
 * job's outbox holds beyond what the broker acknowledged, in order, on its long-lived connection.
 * The cold process then needs no MQTT connection of its own (nor node:net, which loading costs
 * more than the rest of its work: docs/benchmarks.md).
 *
 * A FIFO, not a socket: opening one for writing fails at once when nobody reads it (ENXIO: the
 * service is gone), and writing a line is a plain file write. A line is only a job ID: the relay
 * reads nothing else from it, and publishes only what is already signed in the job's outbox.
 * Nothing is lost if the relay dies with IDs unread: the events are in the outboxes, which the
 * workspace's subscribers drain from disk, and the service flushes its jobs' outboxes when it starts.
 */
import * as fs from 'node:fs';
import type * as net from 'node:net';
import type { Disposable } from '../base/disposable';
import { JOB_ID_PATTERN } from '../base/ids';
import type { EventPayload } from './protocol';
import { appendJobEvent, type AppendRequest } from './publisher';

/**
 * A `mam event`'s way through the relay at `relayFile`: appends the event to its job's outbox
 * (signed, fsynced, under the outbox lock) and names the job to the relay. Undefined when no relay
 * reads it (nothing is written: the caller publishes for itself); `relayed: false` when the relay
 * went away after the append (the event is in the outbox: the caller flushes it).
 */
export async function relayJobEvent(request: AppendRequest, relayFile: string): Promise<{ payload: EventPayload; relayed: boolean } | undefined> {
  const relay = openRelay(relayFile);
  if (relay === undefined) return undefined;
  let payload: EventPayload;
  try {
    payload = await appendJobEvent(request);
  } catch (err) {
    fs.closeSync(relay);
    throw err;
  }
  return { payload, relayed: handToRelay(relay, request.jobId) };
}

/**
 * Opens the relay for writing: its fd, or undefined when no relay reads it (no FIFO there, its
 * service gone, or something other than a FIFO in its place).
 */
export function openRelay(file: string): number | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  } catch {
    return undefined; // ENOENT: never made; ENXIO: nobody reads it; ELOOP: a symlink
  }
  try {
    if (fs.fstatSync(fd).isFIFO()) return fd;
  } catch {
    // unreadable: not ours
  }
  fs.closeSync(fd);
  return undefined;
}

/**
 * Names `jobId` to the relay opened as `fd`, and closes it. False when the relay did not take it
 * (its reader went away: EPIPE; its pipe is full: EAGAIN): the caller publishes the event itself.
 */
export function handToRelay(fd: number, jobId: string): boolean {
  try {
    // One line, far under PIPE_BUF: written whole or not at all, never interleaved with another writer's.
    return fs.writeSync(fd, `${jobId}\n`) > 0;
  } catch {
    return false;
  } finally {
    fs.closeSync(fd);
  }
}

/** The longest line the relay keeps reading before it drops what it has (no job ID is that long). */
const MAX_LINE = 256;

/**
 * The relay's reading end: makes the FIFO (mode 0600, in place of whatever was there) and calls
 * `onJob` with each job ID written to it; lines that are not a job ID are ignored. Undefined when
 * no FIFO can be made here (no `mkfifo`, a file system without FIFOs): then every `mam event`
 * publishes for itself, as it does with no service.
 */
export function listenRelay(file: string, onJob: (jobId: string) => void): Disposable | undefined {
  let fd: number;
  let ino: number;
  try {
    fs.rmSync(file, { force: true });
    // Node has no mkfifo(3); coreutils' is wherever tmux is. Arguments, no shell; the path is ours.
    // (node:child_process is loaded here, by the service: a `mam event` only writes to the FIFO.)
    const child: typeof import('node:child_process') = require('node:child_process');
    child.execFileSync('mkfifo', ['-m', '600', '--', file], { stdio: 'ignore' });
    // Read and write: the FIFO never reads as ended when the last writer closes, and opening it does not wait for one.
    fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
    const stat = fs.fstatSync(fd);
    if (!stat.isFIFO()) {
      fs.closeSync(fd);
      return undefined;
    }
    ino = stat.ino;
  } catch {
    return undefined;
  }
  // A pipe fd in a net.Socket is read by the event loop (epoll), not by a thread of libuv's pool.
  const { Socket }: typeof net = require('node:net');
  const socket = new Socket({ fd, readable: true, writable: false });
  let partial = '';
  socket.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('latin1')).split('\n');
    partial = lines.pop()!;
    if (partial.length > MAX_LINE) partial = '';
    for (const line of lines) if (JOB_ID_PATTERN.test(line)) onJob(line);
  });
  socket.on('error', () => undefined); // a read error ends the relay; events go the way they go without one
  return {
    dispose() {
      // Gone from its path first: a writer that opens it from now on publishes for itself.
      try {
        if (fs.lstatSync(file).ino === ino) fs.rmSync(file, { force: true });
      } catch {
        // already gone
      }
      socket.destroy();
    },
  };
}
