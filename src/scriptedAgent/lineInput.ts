/**
 * The keyboard side of a scripted agent, as real agent TUIs do it: raw-mode bytes with bracketed
 * paste turned into what to echo and which lines were submitted. Enter inside a paste is text, not
 * a submit (that is what bracketed paste is for); a paste marker split across two reads is
 * completed by the next one. No I/O here.
 *
 * Two flavours. A TUI (the demo agent) drops other escape sequences (arrows, focus) and control
 * characters, and takes a CR inside a paste as a newline. A recorder (the test fixtures' fake
 * agent, `keepControls`) keeps every other byte in the line as it came, Escape and CR included, so
 * a test can see exactly which keys arrived.
 */
export type InputAction =
  | { kind: 'echo'; text: string }
  | { kind: 'erase' }
  | { kind: 'submit'; line: string }
  /** An Enter `acceptEnter` refused: the line stays as it was. */
  | { kind: 'swallowed' }
  | { kind: 'interrupt' }
  | { kind: 'eof' };

export interface LineInputOptions {
  /** Keep escape sequences and control characters in the line as typed (a recorder), rather than drop them (a TUI). */
  keepControls?: boolean;
  /**
   * Asked at each Enter outside a paste (`typedInSameRead`: text came just before it, in the same
   * read); false swallows the Enter, as a TUI that is still busy with the text can.
   */
  acceptEnter?: (typedInSameRead: boolean) => boolean;
}

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

export class LineInput {
  private line = '';
  private inPaste = false;
  /** The start of an escape sequence whose end has not arrived yet. */
  private pending = '';

  constructor(private readonly options: LineInputOptions = {}) {}

  feed(chunk: string): InputAction[] {
    const keep = this.options.keepControls === true;
    const actions: InputAction[] = [];
    let typed = false;
    const echo = (text: string): void => {
      typed = true;
      const last = actions.at(-1);
      if (last?.kind === 'echo') last.text += text;
      else actions.push({ kind: 'echo', text });
    };
    let text = this.pending + chunk;
    this.pending = '';
    while (text.length > 0) {
      if (text[0] === '\x1b') {
        const m = /^\x1b\[[0-9;?]*[~A-Za-z]/.exec(text);
        if (m?.[0] === PASTE_START || m?.[0] === PASTE_END) {
          this.inPaste = m[0] === PASTE_START;
          text = text.slice(m[0].length);
          continue;
        }
        if (!m && /^\x1b(\[[0-9;?]*)?$/.test(text)) {
          // The rest of a sequence may still be on its way.
          this.pending = text;
          break;
        }
        if (!keep) {
          // A TUI drops a whole sequence, or a lone Escape.
          text = text.slice(m ? m[0].length : 1);
          continue;
        }
      }
      const ch = String.fromCodePoint(text.codePointAt(0)!);
      text = text.slice(ch.length);
      if (this.inPaste) {
        this.line += ch === '\r' && !keep ? '\n' : ch;
        echo(ch === '\n' || (ch === '\r' && !keep) ? '\r\n' : ch);
      } else if (ch === '\r' || ch === '\n') {
        if (this.options.acceptEnter && !this.options.acceptEnter(typed)) {
          actions.push({ kind: 'swallowed' });
        } else {
          actions.push({ kind: 'submit', line: this.line });
          this.line = '';
        }
      } else if (ch === '\x7f' || (ch === '\b' && !keep)) {
        if (this.line.length > 0) {
          this.line = [...this.line].slice(0, -1).join('');
          actions.push({ kind: 'erase' });
        }
      } else if (ch === '\x03') {
        actions.push({ kind: 'interrupt' });
      } else if (ch === '\x04' && this.line === '') {
        actions.push({ kind: 'eof' });
      } else if (keep || ch >= ' ' || ch === '\t') {
        this.line += ch;
        echo(ch === '\n' ? '\r\n' : ch);
      }
    }
    return actions;
  }
}
