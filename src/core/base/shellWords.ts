import { UsageError } from './errors';

/**
 * Shell words, both ways: splitting a command line a user (or a brief) wrote into words, and
 * quoting words into a line a shell reads back as exactly those words. MAM runs programs with
 * argument arrays; a line is composed only where something can only be typed or read
 * (herdr panes, briefs, skills, lines printed for a person to paste).
 */

/**
 * Splits a command line into words the way a user expects from a shell — spaces separate words,
 * 'single quotes' keep everything literal, in "double quotes" a backslash escapes " \ $ and ` as in
 * a POSIX shell, elsewhere it escapes the next character — and nothing else: no variables, globs,
 * substitutions, pipes or redirections are interpreted; `$(x)` or `|` are just characters of a word.
 * It reads back everything `shellQuote` and `doubleQuote` write.
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

/**
 * Quotes words so that a shell reading the result gets exactly those words back, nothing expanded
 * and nothing run: the form for a line a shell must read exactly (herdr cannot start a pane with
 * an argv, so herdr.ts types the program's command line into the pane's shell).
 *
 * Every run of ordinary characters goes inside single quotes, where POSIX shells take every byte
 * literally (newlines, `$`, backticks, `\`, non-ASCII). A single quote cannot appear inside single
 * quotes, and fish treats `\\` and `\'` inside them as escapes, so both characters are written
 * outside the quotes, backslash-escaped: that reads the same in sh, dash, bash, zsh and fish.
 */
export function shellQuote(words: readonly string[]): string {
  return words.map(quoteWord).join(' ');
}

/** A command line printed for a person to read and paste: plain words bare, the rest as `shellQuote` quotes them. */
export function shellLine(words: readonly string[]): string {
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : quoteWord(w))).join(' ');
}

/**
 * Double-quotes one word, a backslash before " \ $ and ` (POSIX double quotes): the form of the
 * paths in the command lines of briefs and skills, which an agent copies into its own shell (sh or
 * bash, run as a tool, not interactively). It stays because agents and the tests of real agents
 * read `node "<cli>" …` in that form; a line MAM itself has a shell read uses `shellQuote`.
 */
export function doubleQuote(word: string): string {
  return `"${word.replace(/(["\\$`])/g, '\\$1')}"`;
}

function quoteWord(word: string): string {
  if (word === '') return "''";
  return word
    .split(/(['\\])/)
    .filter((part) => part !== '')
    .map((part) => (part === "'" || part === '\\' ? `\\${part}` : `'${part}'`))
    .join('');
}
