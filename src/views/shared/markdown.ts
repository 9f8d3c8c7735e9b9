import { printable } from '../../core/base/ids';

/**
 * Text from outside (a name, a path, an ID, an agent's words) as a markdown code span, shown
 * exactly as it is. Nothing inside a code span is escaped — a backslash there is shown, not obeyed,
 * which is why escaping names like `mam-demo` showed `mam\-demo` — so the fence is one backtick
 * longer than the longest run of backticks in the text, and padded with a space when the text starts
 * or ends with one (CommonMark strips one such space). Control characters are shown, never obeyed.
 */
export function codeSpan(text: string, max = 1000): string {
  const shown = printable(text, max);
  if (shown === '') return '';
  const longest = Math.max(0, ...(shown.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = shown.startsWith('`') || shown.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${shown}${pad}${fence}`;
}

/**
 * Text from outside as markdown prose: what VS Code's `MarkdownString.appendText` escapes, escaped
 * the same way (a backslash before a punctuation character, which the renderer removes), but
 * spaces kept as spaces so a long sentence still wraps in a hover (`appendText` turns every space
 * into `&nbsp;`). One line: control characters are shown, never obeyed.
 */
export function markdownText(text: string, max = 1000): string {
  return printable(text, max)
    .replace(/[\\`*_{}[\]()#+\-!~<>|&]/g, '\\$&')
    .replace(/^(\d+)\./, '$1\\.');
}

/**
 * Multi-line text from outside (a task) as markdown prose: each line as `markdownText`, line breaks
 * kept, blank lines as paragraph breaks; at most `maxLines` lines, then "…".
 */
export function markdownLines(text: string, maxLines = 12): string {
  const lines = text.replace(/\r\n?/g, '\n').trim().split('\n');
  const shown = lines.slice(0, maxLines).map((line) => markdownText(line.trim(), 300));
  if (lines.length > maxLines) shown.push('…');
  return shown.join('  \n').replace(/(?: {2}\n){2,}/g, '\n\n');
}
