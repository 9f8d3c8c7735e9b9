import * as fs from 'node:fs';
import type { Database } from 'sql.js';
import { loadSqlJs } from '../store/sqlite';

/**
 * A read-only snapshot of another program's SQLite database in WAL mode (opencode's store), as
 * SQLite itself would read it: the main file with the write-ahead log's committed frames laid over
 * it. A database in WAL mode keeps its recent writes only in `<file>-wal` until a checkpoint, and
 * sql.js reads no WAL; copying the files aside and opening them with a real SQLite is what this
 * saves. Nothing is written, no lock is taken: the owner may write on while we read.
 *
 * WAL format (sqlite.org/fileformat2.html#walformat): a 32-byte header (magic 0x377f0682/3: the
 * low bit says whether checksums are big-endian; page size; two salts; a checksum of the header),
 * then frames of a 24-byte header (page number; the database size in pages after a commit, else
 * 0; the two salts; a running checksum over every frame so far) and one page. Frames count up to
 * the last commit frame whose salts match the header's and whose checksum chain holds: a frame
 * being written, or left from before a reset, is not read.
 */
export function snapshotImage(file: string): Uint8Array | undefined {
  let db: Buffer;
  try {
    db = fs.readFileSync(file);
  } catch {
    return undefined;
  }
  let wal: Buffer | undefined;
  try {
    wal = fs.readFileSync(`${file}-wal`);
  } catch {
    wal = undefined;
  }
  const image = wal ? applyWal(db, wal) : db;
  // Bytes 18-19 say "WAL mode"; the snapshot is a plain database file, so say "rollback journal".
  if (image.length >= 20 && image[18] === 2 && image[19] === 2) {
    image[18] = 1;
    image[19] = 1;
  }
  return image;
}

/** The snapshot opened with sql.js (close it), or undefined when the file cannot be read as a database. */
export async function openSnapshot(file: string): Promise<Database | undefined> {
  const image = snapshotImage(file);
  if (!image || image.length === 0) return undefined;
  const SQL = await loadSqlJs();
  try {
    const db = new SQL.Database(image);
    db.exec('SELECT 1 FROM sqlite_master LIMIT 1'); // a file that is no database fails here, not later
    return db;
  } catch {
    return undefined;
  }
}

/** `db` with the committed frames of `wal` applied (a copy). */
export function applyWal(db: Buffer, wal: Buffer): Buffer {
  if (wal.length < 32) return Buffer.from(db);
  const magic = wal.readUInt32BE(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return Buffer.from(db);
  const bigEndian = (magic & 1) === 1;
  const pageSize = wal.readUInt32BE(8) === 1 ? 65536 : wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  let [s0, s1] = checksum(wal, 0, 24, 0, 0, bigEndian);
  if (s0 !== wal.readUInt32BE(24) || s1 !== wal.readUInt32BE(28)) return Buffer.from(db);

  const pages = new Map<number, number>(); // page number → offset of its newest committed frame
  let pending = new Map<number, number>();
  let size = Math.floor(db.length / pageSize);
  const frameSize = 24 + pageSize;
  for (let off = 32; off + frameSize <= wal.length; off += frameSize) {
    if (wal.readUInt32BE(off + 8) !== salt1 || wal.readUInt32BE(off + 12) !== salt2) break;
    [s0, s1] = checksum(wal, off, 8, s0, s1, bigEndian);
    [s0, s1] = checksum(wal, off + 24, pageSize, s0, s1, bigEndian);
    if (s0 !== wal.readUInt32BE(off + 16) || s1 !== wal.readUInt32BE(off + 20)) break;
    pending.set(wal.readUInt32BE(off), off + 24);
    const commitSize = wal.readUInt32BE(off + 4);
    if (commitSize > 0) {
      for (const [page, at] of pending) pages.set(page, at);
      pending = new Map();
      size = commitSize;
    }
  }
  const out = Buffer.alloc(size * pageSize);
  db.copy(out, 0, 0, Math.min(db.length, out.length));
  for (const [page, at] of pages) if (page >= 1 && page <= size) wal.copy(out, (page - 1) * pageSize, at, at + pageSize);
  return out;
}

/** SQLite's WAL checksum over `length` bytes (a multiple of 8) from `start`, continuing from (s0, s1). */
function checksum(buf: Buffer, start: number, length: number, s0: number, s1: number, bigEndian: boolean): [number, number] {
  for (let i = start; i < start + length; i += 8) {
    const x0 = bigEndian ? buf.readUInt32BE(i) : buf.readUInt32LE(i);
    const x1 = bigEndian ? buf.readUInt32BE(i + 4) : buf.readUInt32LE(i + 4);
    s0 = (s0 + x0 + s1) >>> 0;
    s1 = (s1 + x1 + s0) >>> 0;
  }
  return [s0, s1];
}
