/**
 * Quotes words so that a shell reading the result gets exactly those words back, nothing expanded
 * and nothing run.
 *
 * This is the one place MAM composes a shell line. Everywhere else child processes get argument
 * arrays; herdr's released socket API, though, cannot start a pane with an argv — a pane always
 * starts the user's shell, and the only way to run a program in it is to type a command line
 * (herdr.ts). So the line has to be one no shell can misread.
 *
 * Every run of ordinary characters goes inside single quotes, where POSIX shells take every byte
 * literally (newlines, `$`, backticks, `\`, non-ASCII). A single quote cannot appear inside single
 * quotes, and fish treats `\\` and `\'` inside them as escapes, so both characters are written
 * outside the quotes, backslash-escaped: that reads the same in sh, dash, bash, zsh and fish.
 */
export function shellQuote(words: readonly string[]): string {
  return words.map(quoteWord).join(' ');
}

function quoteWord(word: string): string {
  if (word === '') return "''";
  return word
    .split(/(['\\])/)
    .filter((part) => part !== '')
    .map((part) => (part === "'" || part === '\\' ? `\\${part}` : `'${part}'`))
    .join('');
}
