import * as fs from 'node:fs';

/**
 * Linux tells a process's file watchers through one inotify queue per event loop, of
 * `max_queued_events` entries (16,384 by default). When it fills, the kernel drops every further
 * event and queues one "overflow" marker — which libuv discards without telling Node. So a lost
 * event cannot be seen; its cause can: the queue only fills while the process does not read it,
 * and libuv then reads everything queued in one go, calling every watcher's listener before the
 * event loop turns. A turn that delivers a large share of the queue's size is a burst that may
 * have overflowed, and whoever watches must then read everything again.
 *
 * This is process-wide on purpose: the queue it mirrors is. Watchers of other code in the process
 * share the queue but are not counted here, so the threshold is a quarter of the queue (at most
 * 1,024 events): a burst that size costs one full look, which is cheap next to a missed change.
 */
const threshold = Math.min(1024, Math.max(1, Math.floor(queueSize() / 4)));

let count = 0;
let resetting = false;
const listeners = new Set<() => void>();

/** Counts one event delivered to a watcher; tells the listeners once per turn when the turn's count reaches the threshold. */
export function noteWatchEvent(): void {
  count++;
  if (!resetting) {
    resetting = true;
    // Runs after the poll phase, so after every listener libuv calls for what it read in this turn.
    setImmediate(() => {
      count = 0;
      resetting = false;
    });
  }
  if (count === threshold) for (const listener of [...listeners]) listener();
}

/** Calls `listener` after a burst that may have overflowed the queue. Returns the unsubscribe. */
export function onWatchFlood(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Events in one turn that count as a flood (tests make one of this size, and one far bigger than the queue). */
export function floodThreshold(): number {
  return threshold;
}

function queueSize(): number {
  try {
    const n = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : 16_384;
  } catch {
    return 16_384;
  }
}
