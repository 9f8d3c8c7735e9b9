import { UsageError } from './errors';

/**
 * Splits a command line into words the way a user expects from a shell — spaces separate words,
 * 'single quotes' keep everything literal, in "double quotes" a backslash escapes " \ $ and ` as in
 * a POSIX shell, elsewhere it escapes the next character — and nothing else: no variables, globs,
 * substitutions, pipes or redirections are interpreted; `$(x)` or `|` are just characters of a word.
 * It also reads back the command lines of a brief (brief.ts quotes paths this way).
 */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new UsageError(`unterminated ' in command: ${line}`);
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      inWord = true;
      let closed = false;
      for (i++; i < line.length; i++) {
        const d = line[i]!;
        if (d === '"') {
          closed = true;
          break;
        }
        if (d === '\\' && /["\\$`]/.test(line[i + 1] ?? '')) word += line[++i];
        else word += d;
      }
      if (!closed) throw new UsageError(`unterminated " in command: ${line}`);
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new UsageError(`a command cannot end with a backslash: ${line}`);
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}
