import { dateOn, systemClock } from './clock';
import { UsageError } from './errors';
import { printable } from './printable';

/** Session and agent names: `[A-Za-z0-9._-]{1,64}` (SPEC §4). */
export const NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** Explains why `name` is not a valid name, or returns undefined when it is. */
export function nameProblem(name: string, what = 'name'): string | undefined {
  if (name.length === 0) return `${what} is empty`;
  if (name.length > 64) return `${what} is ${name.length} characters long; the limit is 64`;
  if (name === '.' || name === '..') return `${what} '${name}' is reserved`;
  const bad = [...name].find((c) => !/[A-Za-z0-9._-]/.test(c));
  if (bad !== undefined) {
    return `${what} '${printable(name)}' contains '${printable(bad)}'; use only letters, digits, '.', '_' and '-'`;
  }
  return undefined;
}

/**
 * A job ID: sortable by creation time, unguessable, and safe as a file name and an MQTT topic level.
 * Example: `j-20261129T201923Z-3f9a1c2b`.
 */
export function newJobId(now: Date = dateOn(systemClock)): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `j-${stamp}-${Buffer.from(crypto.getRandomValues(new Uint8Array(4))).toString('hex')}`;
}

export const JOB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/;

/**
 * A job or loop ID that is safe as one file name and one MQTT topic level: no path separator,
 * nothing a shell or a topic filter would read, never `.` or `..`. Checked before any path or
 * topic is built from an ID, wherever it came from (a flag, a payload, a dispatch, a webview).
 */
export function checkId(id: string, what: 'job' | 'loop' = 'job'): void {
  if (typeof id !== 'string' || !JOB_ID_PATTERN.test(id)) throw new UsageError(`'${printable(String(id))}' is not a ${what} ID`, `bad_${what}_id`);
}

// Kept in a file of their own, free of Node's APIs, so the report webview and the schema kit can use them too.
export { printable, printableLines } from './printable';
