import * as fs from 'node:fs';
import * as path from 'node:path';
import { isErrnoException } from '../base/errors';
import type { ManifestEntry } from './manifest';

/** Helpers of `mam init` that several of its files use. */

/** Creates `rel` and its missing parents; returns those it created, outermost first. */
export function makeDirs(workspace: string, rel: string): ManifestEntry[] {
  const missing: string[] = [];
  for (let d = rel; d !== '.' && d !== '' && !fs.existsSync(path.join(workspace, d)); d = path.posix.dirname(d)) missing.unshift(d);
  fs.mkdirSync(path.join(workspace, rel), { recursive: true });
  return missing.map((p) => ({ kind: 'dir', path: p }));
}

/** A file's text, or undefined when there is none. */
export function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (isErrnoException(err, 'ENOENT')) return undefined;
    throw err;
  }
}

