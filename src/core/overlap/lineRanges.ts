import type { LineRange } from './overlapReport';

/**
 * The base-side line ranges of each file in `git diff -U0` output: per hunk `@@ -start,count …`,
 * `[start, start + count - 1]`, or `[start, start]` for a pure insertion after line `start`.
 * Old-side numbers, so that two checkouts' ranges from the same base can be compared. A binary
 * file has a header and no hunks: it maps to [].
 */
export function parseLineRanges(diff: string): Map<string, LineRange[]> {
  const files = new Map<string, LineRange[]>();
  let current: LineRange[] | undefined;
  for (const line of diff.split('\n')) {
    if (line.startsWith('diff --git ')) {
      const file = headerPath(line.slice('diff --git '.length));
      current = file === undefined ? undefined : [];
      if (file !== undefined && current) files.set(file, current);
      continue;
    }
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/.exec(line);
    if (hunk && current) {
      const start = Number(hunk[1]);
      const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
      current.push(count === 0 ? [start, start] : [start, start + count - 1]);
    }
  }
  return files;
}

/**
 * The path of a `diff --git a/P b/P` header (no renames, so both sides name one path). git quotes a
 * path with special characters C-style (`"a/t\303\244b"`); both forms are read.
 */
function headerPath(rest: string): string | undefined {
  if (rest.startsWith('"')) {
    const end = closingQuote(rest);
    const a = end < 0 ? undefined : unquote(rest.slice(1, end));
    return a?.startsWith('a/') ? a.slice(2) : undefined;
  }
  // Unquoted: "a/P b/P" with the same P twice, so the middle is at half the length.
  if (!rest.startsWith('a/') || rest.length % 2 !== 1) return undefined;
  const half = (rest.length - 1) / 2;
  const a = rest.slice(2, half);
  return rest.slice(half + 1) === `b/${a}` ? a : undefined;
}

function closingQuote(s: string): number {
  for (let i = 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i;
  }
  return -1;
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** git's C-style quoting undone: escapes and octal bytes, read back as UTF-8. */
function unquote(body: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = body[++i] ?? '';
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else {
      bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
