/**
 * The keyboard side of the demo agent, as real agent TUIs do it: raw-mode bytes with bracketed
 * paste turned into what to echo and which lines were submitted. Enter inside a paste is text, not
 * a submit (that is what bracketed paste is for); other escape sequences (arrows, focus) are
 * dropped; a sequence split across two reads is completed by the next one. No I/O here.
 */
export type InputAction =
  | { kind: 'echo'; text: string }
  | { kind: 'erase' }
  | { kind: 'submit'; line: string }
  | { kind: 'interrupt' }
  | { kind: 'eof' };

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

export class LineInput {
  private line = '';
  private inPaste = false;
  /** The start of an escape sequence whose end has not arrived yet. */
  private pending = '';

  feed(chunk: string): InputAction[] {
    const actions: InputAction[] = [];
    const echo = (text: string): void => {
      const last = actions.at(-1);
      if (last?.kind === 'echo') last.text += text;
      else actions.push({ kind: 'echo', text });
    };
    let text = this.pending + chunk;
    this.pending = '';
    while (text.length > 0) {
      if (text[0] === '\x1b') {
        const m = /^\x1b\[[0-9;?]*[~A-Za-z]/.exec(text);
        if (!m) {
          // Either the rest of a sequence is still on its way, or it is a lone Escape: keep a short tail only.
          if (/^\x1b(\[[0-9;?]*)?$/.test(text)) this.pending = text;
          text = this.pending ? '' : text.slice(1);
          continue;
        }
        if (m[0] === PASTE_START) this.inPaste = true;
        else if (m[0] === PASTE_END) this.inPaste = false;
        text = text.slice(m[0].length);
        continue;
      }
      const ch = String.fromCodePoint(text.codePointAt(0)!);
      text = text.slice(ch.length);
      if (this.inPaste) {
        this.line += ch === '\r' ? '\n' : ch;
        echo(ch === '\r' || ch === '\n' ? '\r\n' : ch);
      } else if (ch === '\r' || ch === '\n') {
        actions.push({ kind: 'submit', line: this.line });
        this.line = '';
      } else if (ch === '\x7f' || ch === '\b') {
        if (this.line.length > 0) {
          this.line = [...this.line].slice(0, -1).join('');
          actions.push({ kind: 'erase' });
        }
      } else if (ch === '\x03') {
        actions.push({ kind: 'interrupt' });
      } else if (ch === '\x04') {
        if (this.line === '') actions.push({ kind: 'eof' });
      } else if (ch >= ' ' || ch === '\t') {
        this.line += ch;
        echo(ch);
      }
    }
    return actions;
  }
}
