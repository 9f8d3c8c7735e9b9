import * as fs from 'node:fs';
import * as path from 'node:path';
import { isRecord } from '../base/schema';
import type { StoredConversation } from './adapter';

/** Reads the first line of a file without reading all of it (codex's first line alone is ~25 KB). */
export function readFirstLine(file: string, maxBytes = 1 << 20): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(Math.min(maxBytes, Math.max(1, fs.fstatSync(fd).size)));
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString('utf8');
    const nl = text.indexOf('\n');
    return nl >= 0 ? text.slice(0, nl) : text;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return isRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

export function mtimeOf(file: string): Date {
  try {
    return fs.statSync(file).mtime;
  } catch {
    return new Date(0);
  }
}

export function parseDate(value: unknown): Date | undefined {
  if (typeof value === 'number') return new Date(value);
  if (typeof value !== 'string') return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : new Date(t);
}

/** The directory an agent records: the physical path (agents call getcwd(), which resolves symlinks). */
export function physicalPath(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

export function newestFirst(list: StoredConversation[]): StoredConversation[] {
  return list.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}

export function homeDir(ctx: { home: string }, ...parts: string[]): string {
  return path.join(ctx.home, ...parts);
}
