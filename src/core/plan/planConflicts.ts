import * as fs from 'node:fs';
import * as path from 'node:path';

/** A path-like word of a task's text: `src/signup.js`, `README.md`, `lib/util/` (trailing punctuation dropped). */
const PATH_WORD = /(?:^|[\s`'"(\[])((?:[\w@.-]+\/)*[\w@-][\w@.-]*\.[A-Za-z0-9]{1,8}|(?:[\w@.-]+\/)+[\w@.-]*)(?=$|[\s`'")\],;:!?]|\.(?:\s|$))/g;

/**
 * The files a task will likely change, as far as its text says: the paths it names that exist in
 * the repository's checkout (a folder counts for everything in it). Two tasks naming the same file
 * are predicted to conflict: the plan does not run them at once. What the text does not name is
 * not predicted (the merge queue still catches a real conflict and hands it to the creator).
 */
export function namedPaths(task: string, checkout: string): string[] {
  const root = path.resolve(checkout);
  const found = new Set<string>();
  for (const m of task.matchAll(PATH_WORD)) {
    const word = m[1]!.replace(/\/+$/, '');
    if (!word || word.startsWith('/') || word.split('/').includes('..')) continue;
    const full = path.resolve(root, word);
    if (!full.startsWith(`${root}${path.sep}`) || !fs.existsSync(full)) continue;
    found.add(word);
  }
  return [...found].sort();
}

/** Whether two sets of named paths touch the same file (a folder holds what is under it); the first shared one. */
export function sharedPath(a: readonly string[], b: readonly string[]): string | undefined {
  for (const x of a) for (const y of b) if (x === y || x.startsWith(`${y}/`) || y.startsWith(`${x}/`)) return x.length >= y.length ? x : y;
  return undefined;
}
