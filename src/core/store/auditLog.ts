import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorruptStoreError, isErrnoException } from '../base/errors';
import { parseJsonLines } from '../base/jsonLines';
import { anything, int, lit, nullable, obj, optional, parse, record, str, variant, type Schema } from '../base/schema';
import { fsyncDirectory, fsyncOffLoop, readIfExists, writeFileAtomic } from './atomicFile';
import type { ControlPlanePaths } from './paths';
import { checkJobId } from './jobStore';

/** One line of `events.ndjson`: an accepted event, a state transition, or a note (seq gap, rejection). */
export type AuditEntry =
  | { type: 'event'; at: string; event: string; seq: number; sender?: string; detail?: string | null; /** The event's own time, as its sender stamped it. */ ts?: string; [extra: string]: unknown }
  | { type: 'transition'; at: string; from: string | null; to: string; reason?: string | null; [extra: string]: unknown }
  | { type: 'note'; at: string; note: string; [extra: string]: unknown };

const text = str();
const auditEntry: Schema<AuditEntry> = variant('type', {
  event: obj({ type: lit('event'), at: text, event: text, seq: int(), sender: optional(text), detail: optional(nullable(text)), ts: optional(text) }),
  transition: obj({ type: lit('transition'), at: text, from: nullable(text), to: text, reason: optional(nullable(text)) }),
  note: obj({ type: lit('note'), at: text, note: text }),
});
const anyObject = record(anything);

export interface AuditRead {
  entries: AuditEntry[];
  /** Lines that could not be parsed (a torn last line after a crash is not counted). */
  badLines: number;
}

/**
 * The append-only audit log of a job: `delegate_job_logs/<id>/{meta.json, events.ndjson,
 * status.json}`. Appends are serialized by the caller holding the job's lock.
 */
export class AuditLog {
  constructor(private readonly paths: ControlPlanePaths) {}

  /** Writes meta.json once, when the job is registered. */
  writeMeta(jobId: string, meta: Record<string, unknown>): void {
    const dir = this.dir(jobId);
    fs.mkdirSync(dir, { recursive: true });
    writeFileAtomic(path.join(dir, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
  }

  /** Replaces status.json, the latest state of the job. */
  writeStatus(jobId: string, status: Record<string, unknown>): void {
    const dir = this.dir(jobId);
    fs.mkdirSync(dir, { recursive: true });
    // Derived from the record and the log: replaced whole, not fsynced (it is rewritten on every event).
    writeFileAtomic(path.join(dir, 'status.json'), `${JSON.stringify(status, null, 2)}\n`, { durable: false });
  }

  /**
   * Appends one entry as one line and fsyncs. If a previous writer died mid-line, the torn tail is
   * cut off first, so every complete line stays parseable. Call under the job's lock.
   */
  append(jobId: string, entry: AuditEntry): Promise<void> {
    return this.appendAll(jobId, [entry]);
  }

  /**
   * Appends entries that belong together (a gap note, an event, its transition) in one write and
   * one fsync. The fsync runs off the event loop: a process applying events of many jobs (the
   * broker's warden beside its broker, an engine) goes on with the others while the disk
   * answers, and fsyncs that overlap share the filesystem's journal commit.
   */
  async appendAll(jobId: string, entries: readonly AuditEntry[]): Promise<void> {
    await this.appendUnlessLogged(jobId, undefined, entries);
  }

  /**
   * `appendAll`, unless an event with `seq` is among the log's last lines (its last `tailBytes`):
   * then nothing is written and this resolves false. The job's record is written after its audit
   * line without an fsync of its own; after a power cut the record may miss what the log holds,
   * and this is how an event applied again is known. One open of the log for both (each event
   * looked and appended on two before).
   */
  async appendUnlessLogged(jobId: string, seq: number | undefined, entries: readonly AuditEntry[], tailBytes = 16 * 1024): Promise<boolean> {
    if (entries.length === 0 && seq === undefined) return true;
    const dir = this.dir(jobId);
    const file = path.join(dir, 'events.ndjson');
    let fd: number;
    try {
      fd = fs.openSync(file, 'a+');
    } catch (err) {
      if (!isErrnoException(err, 'ENOENT')) throw err;
      fs.mkdirSync(dir, { recursive: true });
      fd = fs.openSync(file, 'a+');
    }
    let created = false;
    try {
      const size = fs.fstatSync(fd).size;
      created = size === 0;
      const tail = size === 0 ? Buffer.alloc(0) : Buffer.alloc(seq === undefined ? 1 : Math.min(size, tailBytes));
      if (tail.length > 0) fs.readSync(fd, tail, 0, tail.length, size - tail.length);
      if (seq !== undefined && tailHasEvent(tail.toString('utf8'), seq)) return false;
      if (entries.length === 0) return true;
      if (tail.length > 0 && tail[tail.length - 1] !== 0x0a) cutTornTail(fd);
      fs.writeSync(fd, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
      await fsyncOffLoop(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (created) fsyncDirectory(dir);
    return true;
  }

  readEntries(jobId: string): AuditRead {
    const bytes = readIfExists(path.join(this.dir(jobId), 'events.ndjson'));
    if (bytes === undefined) return { entries: [], badLines: 0 };
    // A torn last line (a writer died mid-line; the next append cuts it) is not a bad line.
    const { values, bad } = parseJsonLines(bytes.toString('utf8'), auditEntry, { completeOnly: true });
    return { entries: values, badLines: bad };
  }

  readMeta(jobId: string): Record<string, unknown> | undefined {
    return this.readJson(jobId, 'meta.json');
  }

  readStatus(jobId: string): Record<string, unknown> | undefined {
    return this.readJson(jobId, 'status.json');
  }

  private readJson(jobId: string, name: string): Record<string, unknown> | undefined {
    const file = path.join(this.dir(jobId), name);
    const bytes = readIfExists(file);
    return bytes === undefined ? undefined : parse(anyObject, JSON.parse(bytes.toString('utf8')), (problem) => new CorruptStoreError(`${file}: ${problem}`), 'the file');
  }

  private dir(jobId: string): string {
    checkJobId(jobId);
    return this.paths.auditJobDir(jobId);
  }
}

/** Whether the log's tail holds an event line with `seq` (its first, partial line aside). */
function tailHasEvent(tail: string, seq: number): boolean {
  // Lines are written by JSON.stringify with `type` first and `seq` after `event`: found by text, confirmed by parsing that line.
  const needle = `"seq":${seq},`;
  for (let at = tail.indexOf(needle); at >= 0; at = tail.indexOf(needle, at + 1)) {
    const start = tail.lastIndexOf('\n', at) + 1;
    const end = tail.indexOf('\n', at);
    if (end < 0) break;
    try {
      const entry = JSON.parse(tail.slice(start, end)) as { type?: unknown; seq?: unknown };
      if (entry.type === 'event' && entry.seq === seq) return true;
    } catch {
      // the first, partial line of the tail
    }
  }
  return false;
}

function cutTornTail(fd: number): void {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return;
  const last = Buffer.alloc(1);
  fs.readSync(fd, last, 0, 1, size - 1);
  if (last[0] === 0x0a) return;
  // Find the last newline and truncate after it.
  const chunk = 64 * 1024;
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk);
    const buf = Buffer.alloc(end - start);
    fs.readSync(fd, buf, 0, buf.length, start);
    const nl = buf.lastIndexOf(0x0a);
    if (nl >= 0) {
      fs.ftruncateSync(fd, start + nl + 1);
      return;
    }
    end = start;
  }
  fs.ftruncateSync(fd, 0);
}
