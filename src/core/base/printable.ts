/**
 * Text from outside (an agent's --detail, a payload, a file name) as one line that is safe to show:
 * every control character — newlines, escape sequences, C1 controls — rendered visibly (`\x1b`),
 * never obeyed, so it cannot move a terminal's cursor, set its title, or forge a line of its own.
 */
export function printable(text: string, max = 80): string {
  const shown = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return shown.length > max ? `${shown.slice(0, max)}…` : shown;
}

/** Multi-line text from outside (a pane's screen, a report) for a terminal: control characters other than newline and tab removed. */
export function printableLines(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');
}

/**
 * Text from outside kept whole as data (an MCP result, a JSON field): newlines and tabs stay, every
 * other control character is rendered visibly (`\x1b`) — a client that prints it obeys nothing.
 */
export function printableText(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
