import * as fs from 'node:fs';
import * as path from 'node:path';
import { ValidationError, errorMessage, isErrnoException } from '../base/errors';

export interface AtomicWriteOptions {
  /** File mode for a new file (e.g. 0o600 for credentials). */
  mode?: number;
  /**
   * false for files derived from others (status.json): still replaced whole by rename, so no
   * reader sees a torn file, but not fsynced, since losing the newest copy to a power cut loses
   * nothing that cannot be derived again. Default true.
   */
  durable?: boolean;
}

/**
 * Writes `data` to `file` so that readers see the old contents or the new, never a mix: write a temp
 * file beside it, fsync it, rename it over `file`, fsync the directory. A crash at any point leaves
 * at worst a stray temp file (see `removeStrayTemps`).
 */
export function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const dir = path.dirname(file);
  const temp = tempFileFor(file);
  let fd: number | undefined;
  try {
    fd = fs.openSync(temp, 'wx', options.mode ?? 0o644);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let offset = 0;
    while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
    if (options.durable !== false) fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    if (options.mode !== undefined) fs.chmodSync(temp, options.mode);
    fs.renameSync(temp, file);
  } catch (err) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw err;
  }
  if (options.durable !== false) fsyncDirectory(dir);
}

/**
 * `writeFileAtomic` for a file that need not be durable (`durable: false`), done on libuv's pool:
 * the process goes on while the temp file is written and renamed over `file` (a rename over an
 * existing file makes ext4 flush the new one's data: ~0.5 ms on these machines, docs/benchmarks.md).
 */
export async function replaceFileOffLoop(file: string, data: string): Promise<void> {
  const temp = tempFileFor(file);
  try {
    await fs.promises.writeFile(temp, data, { flag: 'wx', mode: 0o644 });
    await fs.promises.rename(temp, file);
  } catch (err) {
    await fs.promises.rm(temp, { force: true });
    throw err;
  }
}

/** Removes temp files left by writers of `file` that died between open and rename. Call under the file's lock. */
export function removeStrayTemps(file: string): void {
  const prefix = tempPrefix(file);
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(file));
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith(prefix)) fs.rmSync(path.join(path.dirname(file), name), { force: true });
  }
}

function tempPrefix(file: string): string {
  return `.${path.basename(file)}.tmp-`;
}

/** A temp file beside `file` that no other writer (this process or another) picks: `removeStrayTemps` finds it by its prefix. */
export function tempFileFor(file: string): string {
  return path.join(path.dirname(file), `${tempPrefix(file)}${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
}

export function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * fsync on libuv's thread pool: the process goes on (other jobs' events, a broker beside it) while
 * the disk answers, and fsyncs that overlap share one journal commit.
 */
export function fsyncOffLoop(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
}

/** Reads a file, or returns undefined when it does not exist. */
export function readIfExists(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if (isErrnoException(err, 'ENOENT')) return undefined;
    throw err;
  }
}

/**
 * A JSON file MAM keeps (a loop, a plan, the merge queue), read with `read` (a schema's parse that
 * names the field); undefined when it does not exist. A file that is not JSON throws a
 * ValidationError naming it: the user is told to fix or remove it, never shown a stack.
 */
export function readJsonFile<T>(file: string, read: (raw: unknown) => T): T | undefined {
  const bytes = readIfExists(file);
  if (!bytes) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new ValidationError(`${file}: not JSON (${errorMessage(err)}); fix or remove the file`);
  }
  return read(raw);
}
