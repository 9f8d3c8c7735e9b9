import * as fs from 'node:fs';
import * as path from 'node:path';
import { readIfExists, writeFileAtomic } from '../store/atomicFile';
import type { EventPayload } from './protocol';

/**
 * A job's outbox, `.mam/jobs/<id>/outbox.ndjson`: every event its publishers sent, appended before
 * it goes to the broker, and a `delivered` mark once the broker acknowledged it. Entries without a
 * mark are drained later (re-published, or applied from disk while the broker is down). The seq
 * counter lives beside it (`seq`). All writes happen under the job's outbox lock, held by the
 * caller across allocate → append → publish → mark, so one job's events reach the broker in `seq`
 * order even from several publishers.
 */
export class JobOutbox {
  readonly file: string;
  private readonly seqFile: string;

  constructor(readonly jobDir: string) {
    this.file = path.join(jobDir, 'outbox.ndjson');
    this.seqFile = path.join(jobDir, 'seq');
  }

  /** The next seq: one more than the highest ever allocated (counter file or outbox, whichever is higher). */
  allocateSeq(): number {
    const counter = Number(readIfExists(this.seqFile)?.toString().trim() ?? '0');
    const inOutbox = this.entries().reduce((max, e) => Math.max(max, e.payload.seq), 0);
    const next = Math.max(Number.isSafeInteger(counter) ? counter : 0, inOutbox) + 1;
    fs.mkdirSync(this.jobDir, { recursive: true });
    writeFileAtomic(this.seqFile, `${next}\n`);
    return next;
  }

  append(payload: EventPayload): void {
    fs.mkdirSync(this.jobDir, { recursive: true });
    appendLine(this.file, JSON.stringify({ t: 'event', payload }));
  }

  markDelivered(seq: number): void {
    appendLine(this.file, JSON.stringify({ t: 'delivered', seq }));
  }

  /** The highest seq ever allocated (0 when none). */
  allocatedSeq(): number {
    const counter = Number(readIfExists(this.seqFile)?.toString().trim() ?? '0');
    return Number.isSafeInteger(counter) ? counter : 0;
  }

  /** Every event in the outbox, in seq order. */
  events(): EventPayload[] {
    return this.entries().map((e) => e.payload).sort((a, b) => a.seq - b.seq);
  }

  /** Events not yet acknowledged by a broker, in seq order. */
  pending(): EventPayload[] {
    const delivered = new Set<number>();
    const events: EventPayload[] = [];
    for (const e of this.entries(true)) {
      if (e.t === 'delivered') delivered.add(e.seq);
      else events.push(e.payload);
    }
    return events.filter((p) => !delivered.has(p.seq)).sort((a, b) => a.seq - b.seq);
  }

  private entries(): Array<{ t: 'event'; payload: EventPayload }>;
  private entries(withMarks: true): Array<{ t: 'event'; payload: EventPayload } | { t: 'delivered'; seq: number }>;
  private entries(withMarks = false): Array<{ t: 'event'; payload: EventPayload } | { t: 'delivered'; seq: number }> {
    const text = readIfExists(this.file)?.toString('utf8') ?? '';
    const out: Array<{ t: 'event'; payload: EventPayload } | { t: 'delivered'; seq: number }> = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const e = JSON.parse(line) as { t?: string; payload?: EventPayload; seq?: number };
        if (e.t === 'event' && e.payload) out.push({ t: 'event', payload: e.payload });
        else if (withMarks && e.t === 'delivered' && typeof e.seq === 'number') out.push({ t: 'delivered', seq: e.seq });
      } catch {
        // a line torn by a crash: the event in it was never published either
      }
    }
    return out;
  }
}

/** Appends one whole line and fsyncs; a torn last line from a crash is terminated first. */
function appendLine(file: string, line: string): void {
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
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
