import * as fs from 'node:fs';
import * as path from 'node:path';
import { fsyncOffLoop, readIfExists } from '../store/atomicFile';
import { isErrnoException } from '../base/errors';
import { parseJsonLines } from '../base/jsonLines';
import { lazy, lit, obj } from '../base/schema';
import { eventSchema, isFinal, type EventPayload } from './protocol';

/** A line of the outbox: one event as it was sent (built on first use, as read only with a backlog). */
const outboxLine = /* @__PURE__ */ lazy(() => obj({ t: lit('event'), payload: eventSchema }));

/**
 * A job's outbox, `.mam/jobs/<id>/outbox.ndjson`: every event its publishers sent, appended (and
 * fsynced) before it goes to the broker. Two small files beside it are caches, rebuilt from the
 * outbox if they are ever lost or torn: `seq`, the highest seq allocated, and `acked`, the seq up
 * to which the broker has acknowledged every event. A third, `ended`, holds the seq of the agent's
 * last word on the job (completed, error) once one was appended. Publishers hold the job's outbox lock across
 * allocate → append → publish → acknowledge and always send any backlog first, so acknowledged
 * events form a prefix and one job's events reach the broker in seq order.
 */
export class JobOutbox {
  readonly file: string;
  private readonly seqFile: string;
  private readonly ackedFile: string;
  private readonly endedFile: string;

  constructor(readonly jobDir: string) {
    this.file = path.join(jobDir, 'outbox.ndjson');
    this.seqFile = path.join(jobDir, 'seq');
    this.ackedFile = path.join(jobDir, 'acked');
    this.endedFile = path.join(jobDir, 'ended');
  }

  /** The highest seq ever allocated (0 when none). */
  allocatedSeq(): number {
    const cached = readNumber(this.seqFile);
    return cached ?? this.events().reduce((max, p) => Math.max(max, p.seq), 0);
  }

  /**
   * The next seq, without the backlog: the caller holds the outbox lock, appends the event next
   * and leaves the publishing to another (the host's relay publishes whatever is waiting).
   */
  allocateSeq(): number {
    const next = this.allocatedSeq() + 1;
    inFolder(this.jobDir, () => writeCounter(this.seqFile, next));
    return next;
  }

  /**
   * The next seq, and the events the broker has not acknowledged yet (sent first): what a
   * publisher asks under the outbox lock, with each counter read once.
   */
  allocate(): { seq: number; backlog: EventPayload[] } {
    const allocated = this.allocatedSeq();
    const backlog = this.unacknowledged(allocated);
    const next = allocated + 1;
    // A cache, not the record: a crash before the append just leaves a gap the subscriber notes.
    inFolder(this.jobDir, () => writeCounter(this.seqFile, next));
    return { seq: next, backlog };
  }

  /** Appends the event and resolves once it is on disk (fsynced on libuv's pool: the process goes on meanwhile). */
  async append(payload: EventPayload): Promise<void> {
    const fd = inFolder(this.jobDir, () => writeLine(this.file, lineOf(payload)));
    try {
      await fsyncOffLoop(fd);
    } finally {
      fs.closeSync(fd);
    }
    this.noteFinal(payload);
  }

  /**
   * `append` for a process with nothing else to do meanwhile (a `mam event`): the fsync blocks, and
   * no thread of libuv's pool is started for it (with the lock's refresh timer it spares, ~3 ms of
   * a cold process: docs/benchmarks.md).
   */
  appendNow(payload: EventPayload): void {
    const fd = inFolder(this.jobDir, () => writeLine(this.file, lineOf(payload)));
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    this.noteFinal(payload);
  }

  /**
   * Whether the outbox holds the agent's last word on the job (asked under the outbox lock). The
   * `ended` counter is written after such an event's append and before anything publishes it, so
   * an event it missed (a process that died between the two) is still unacknowledged: the backlog
   * read then, only when there is one, finds it.
   */
  hasEnded(): boolean {
    return fs.existsSync(this.endedFile) || this.pending().some(isFinal);
  }

  private noteFinal(payload: EventPayload): void {
    if (isFinal(payload)) writeCounter(this.endedFile, payload.seq);
  }

  /** Records that the broker acknowledged every event up to `seq`. */
  markAcked(seq: number): void {
    writeCounter(this.ackedFile, seq);
  }

  /** Events the broker has not acknowledged, in seq order (read only when there are any). */
  pending(): EventPayload[] {
    return this.unacknowledged(this.allocatedSeq());
  }

  private unacknowledged(allocated: number): EventPayload[] {
    const acked = readNumber(this.ackedFile) ?? 0;
    return allocated <= acked ? [] : this.events().filter((p) => p.seq > acked);
  }

  /** Every event in the outbox, in seq order. */
  events(): EventPayload[] {
    // A line torn by a crash is skipped: the event in it was never published either.
    const text = readIfExists(this.file)?.toString('utf8') ?? '';
    return parseJsonLines(text, outboxLine)
      .values.map((line) => line.payload)
      .sort((a, b) => a.seq - b.seq);
  }
}

/** Runs `write` (a file in `dir`); creates `dir` only if it is missing, and runs `write` again. */
function inFolder<T>(dir: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    if (!isErrnoException(err, 'ENOENT')) throw err;
    fs.mkdirSync(dir, { recursive: true });
    return write();
  }
}

function readNumber(file: string): number | undefined {
  const text = readIfExists(file)?.toString('utf8').trim();
  if (!text || !/^\d+$/.test(text)) return undefined;
  return Number(text);
}

/** Digits of a counter file: every write of it has the same length. */
const COUNTER_WIDTH = 15;

/**
 * Writes a counter (`seq`, `acked`) over its old value in place, zero-padded to one width, so the
 * file is never truncated: ext4 (auto_da_alloc) flushes a file truncated to zero and written again
 * when it is closed, which made the two counters cost more than the outbox's fsync (0.65 → 0.24 ms
 * for counter, fsync'd append, counter: docs/benchmarks.md). Publishers read the counters under the
 * outbox lock; anyone else reads `seq` only as a hint of whether the outbox is worth reading (a read
 * racing a write may see a torn number, and the next look at the outbox corrects it).
 */
function writeCounter(file: string, value: number): void {
  const text = `${String(value).padStart(COUNTER_WIDTH, '0')}\n`;
  let fd: number;
  try {
    fd = fs.openSync(file, 'r+');
  } catch {
    fd = fs.openSync(file, 'w');
  }
  try {
    // (A file written wider by hand keeps a tail that makes it unreadable: then the outbox is read.)
    fs.writeSync(fd, text, 0);
  } finally {
    fs.closeSync(fd);
  }
}

function lineOf(payload: EventPayload): string {
  return JSON.stringify({ t: 'event', payload });
}

/**
 * Appends one whole line, a torn last line from a crash terminated first, and answers the open
 * file for the caller to fsync and close.
 */
function writeLine(file: string, line: string): number {
  const fd = fs.openSync(file, 'a+');
  try {
    const size = fs.fstatSync(fd).size;
    let prefix = '';
    if (size > 0) {
      const last = Buffer.alloc(1);
      fs.readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) prefix = '\n';
    }
    fs.writeSync(fd, `${prefix}${line}\n`);
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}
