import type { PathStatuses } from './nameStatus';

/** A path's entry on one side of a diff: its mode (100644, 120000, 160000, …) and object ID. */
export interface Entry {
  mode: string;
  oid: string;
}

/** One changed path of a diff without renames: git's status letter (M, A, D, T) and both sides (absent: no such path there). */
export interface RawChange {
  status: string;
  from?: Entry;
  to?: Entry;
}

/** The paths that differ between two trees, in git's order (bytewise by path). */
export type RawDiff = ReadonlyMap<string, RawChange>;

/** `git diff-tree -r -z --no-renames` (raw format) output: `:MODE MODE OID OID STATUS\0PATH\0…`. */
export function parseRaw(out: string): Map<string, RawChange> {
  const changes = new Map<string, RawChange>();
  const fields = out.split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const change = rawRecord(fields[i]!);
    if (change && fields[i + 1] !== '') changes.set(fields[i + 1]!, change);
  }
  return changes;
}

/**
 * `git diff-tree --stdin --always -r -z …` output for N lines of `TREE TREE`: per line, a header
 * `TREE TREE\n`, then that diff's records (raw: `:…\0PATH\0`; with -p, patch text). Returns each
 * line's part, in order, or throws when the output does not have N headers in order.
 */
export function splitStdinDiffs(out: string, pairs: ReadonlyArray<readonly [string, string]>): string[] {
  const parts: string[] = [];
  let at = 0;
  for (let n = 0; n < pairs.length; n++) {
    const header = `${pairs[n]![0]} ${pairs[n]![1]}\n`;
    if (!out.startsWith(header, at)) throw new Error(`unexpected git diff-tree --stdin output at diff ${n + 1} of ${pairs.length}`);
    at += header.length;
    const next = n + 1 < pairs.length ? nextHeader(out, at, `${pairs[n + 1]![0]} ${pairs[n + 1]![1]}\n`) : out.length;
    parts.push(out.slice(at, next));
    at = next;
  }
  return parts;
}

/** Where the next header starts: at `from` itself (an empty diff) or after a record's terminator (`\0` raw, `\n` patch). */
function nextHeader(out: string, from: number, header: string): number {
  if (out.startsWith(header, from)) return from;
  for (let i = out.indexOf(header, from); i >= 0; i = out.indexOf(header, i + 1)) {
    if (out[i - 1] === '\0' || out[i - 1] === '\n') return i;
  }
  throw new Error('unexpected git diff-tree --stdin output: a diff header is missing');
}

/** The status letters alone (what mergeCarry.ts and the report's file lists need). */
export function statusesOf(diff: RawDiff): PathStatuses {
  return new Map([...diff].map(([p, c]) => [p, c.status]));
}

/**
 * The diff `base → to` from the diff `base → from` and the diff `from → to`, without asking git:
 * a path that did not move between `from` and `to` keeps its change against the base; for one that
 * moved, the base side is known from `base → from` when it changed there, and else is its `from`
 * side (unchanged against the base). Exact: the sides are compared by mode and object ID, as git does.
 */
export function composeRaw(baseToFrom: RawDiff, fromToTo: RawDiff): Map<string, RawChange> {
  const out = new Map(baseToFrom);
  for (const [p, moved] of fromToTo) {
    const earlier = baseToFrom.get(p);
    const base = earlier ? earlier.from : moved.from;
    const change = compare(base, moved.to);
    if (change) out.set(p, change);
    else out.delete(p);
  }
  return new Map([...out].sort(([x], [y]) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
}

/** The change from `a` to `b`, as git names it, or undefined when they are the same. */
function compare(a: Entry | undefined, b: Entry | undefined): RawChange | undefined {
  if (!a && !b) return undefined;
  if (!a) return { status: 'A', to: b! };
  if (!b) return { status: 'D', from: a };
  if (a.mode === b.mode && a.oid === b.oid) return undefined;
  return { status: kind(a.mode) === kind(b.mode) ? 'M' : 'T', from: a, to: b };
}

/** Regular file (any permission), symlink, or gitlink: a change between kinds is git's T. */
function kind(mode: string): string {
  return mode.startsWith('100') ? 'file' : mode;
}

function rawRecord(meta: string): RawChange | undefined {
  const m = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) ([A-Z])\d*$/.exec(meta);
  if (!m) return undefined;
  const [, fromMode, toMode, fromOid, toOid, status] = m;
  const absent = (mode: string): boolean => /^0+$/.test(mode);
  return {
    status: status!,
    ...(absent(fromMode!) ? {} : { from: { mode: fromMode!, oid: fromOid! } }),
    ...(absent(toMode!) ? {} : { to: { mode: toMode!, oid: toOid! } }),
  };
}
