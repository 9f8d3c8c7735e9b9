import { UsageError } from '../base/errors';
import { printable } from '../base/ids';
import { custom, reject, str, type Schema } from '../base/schema';
import { splitWords } from '../base/shellWords';

/** The plan file's single fields: what each may hold, and how a wrong one is worded. */

/** A task's id: also safe in a branch, a folder and a session name the runner derives from it. */
export const TASK_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,39}$/;
/** A task's text is a brief's first paragraph, not a specification: longer goes in a file it names. */
export const TASK_TEXT_LIMIT = 20_000;

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

export function oneLine(max: number): Schema<string> {
  return custom((v, at) => {
    const s = str({ min: 1, max }).read(v, at);
    if (!s.trim()) return reject(at, 'is empty');
    const bad = CONTROL.exec(s);
    return bad ? reject(at, `must be one line without control characters (holds '${printable(bad[0])}')`) : s;
  });
}

export const taskText: Schema<string> = custom((v, at) => {
  const s = str({ why: 'must be text: what to do' }).read(v, at);
  if (s.length > TASK_TEXT_LIMIT) return reject(at, `is ${s.length} characters long; the limit is ${TASK_TEXT_LIMIT}: put longer details in a file the task names`);
  if (!s.trim()) return reject(at, 'is empty; say what to do');
  const bad = CONTROL_BUT_LINES.exec(s);
  return bad ? reject(at, `holds a control character ('${printable(bad[0])}')`) : s;
});

/** `id: 1` reads as the number 1 in YAML: a whole number stands for its digits, as an id and as a need. */
export function idText(v: unknown): unknown {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : v;
}

export const taskId: Schema<string> = custom((raw, at) => {
  const v = idText(raw);
  if (typeof v === 'string' && TASK_ID_PATTERN.test(v)) return v;
  const shown = typeof v === 'string' ? `'${printable(v, 60)}'` : printable(String(v), 40);
  return reject(at, `${shown} is not a task id: up to 40 lowercase letters, digits, '.', '_' and '-', starting with a letter or a digit`);
});

/** A branch name as git takes it (git check-ref-format's rules, for one branch): whether it exists is the runner's to see. */
export const branchName: Schema<string> = custom((v, at) => {
  const s = str({ min: 1, max: 200 }).read(v, at);
  const bad = /[\s~^:?*[\\]|\.\.|@\{|\/\/|^[-/.]|[/.]$|\.lock$|^@$/.test(s) || CONTROL.test(s);
  return bad ? reject(at, `'${printable(s, 60)}' is not a branch name`) : s;
});

/** A command line, kept as written: the merge queue splits it into words (quotes as in a shell) and runs no shell. */
export const commandLine: Schema<string> = custom((v, at) => {
  const s = str({ why: 'must be a command line, e.g. npm test' }).read(v, at);
  let words: string[];
  try {
    words = splitWords(s);
  } catch (err) {
    return reject(at, err instanceof UsageError ? `${err.message.replace(/: [\s\S]*$/, '')} (quotes as in a shell)` : String(err));
  }
  return words.length === 0 ? reject(at, 'is empty; name a program, or leave validate out') : s;
});

/** `unknown key 'need'; did you mean 'needs'?`, or the keys there are. */
export function unknownKey(key: string, known: readonly string[]): string {
  const close = known.find((k) => distance(k, key) <= (k.length >= 5 ? 2 : 1));
  return close ? `unknown key '${printable(key, 40)}'; did you mean '${close}'?` : `unknown key '${printable(key, 40)}' (known: ${known.join(', ')})`;
}

/** Edit distance (Levenshtein), for a typo's suggestion. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    row = next;
  }
  return row[b.length]!;
}
