import { ExitCode, MamError, errorMessage } from '../base/errors';
import { sleep } from '../base/process';
import type { Multiplexer } from './multiplexer';

/** Why a line could not be delivered. Exit 5: the prompt was not delivered. */
export class DeliveryError extends MamError {
  constructor(
    message: string,
    /** The pane's screen when delivery gave up, when it could be read (for the job's audit log). */
    readonly screenText?: string,
  ) {
    super(message, 'not_delivered', ExitCode.notDelivered);
  }
}

/** A screen only a person should answer, as injection reports it. */
export interface NamedScreen {
  id: string;
  /** What it is, as it ends "<who> shows …". */
  name: string;
  /** How a person answers it. */
  answer: string;
}

/** What a program's visible screen says: ready for input, blocked on a screen, or neither yet. */
export type ScreenReading = { kind: 'ready' } | { kind: 'blocked'; screen: NamedScreen } | { kind: 'unknown' };

/** The agent shows a screen only a person should answer; nothing was typed. */
export class AgentBlockedError extends DeliveryError {
  constructor(
    readonly screen: NamedScreen,
    screenText: string,
    who = 'the agent',
  ) {
    super(`${who} shows ${screen.name}; nothing was typed into it. ${screen.answer}`, screenText);
  }
}

export interface InjectOptions {
  /**
   * Reads the agent's screen (its adapter knows its ready sign and its blocking screens). With it,
   * nothing is typed until the screen reads ready — text typed into a dialog would answer it — and
   * a blocking screen stops delivery with AgentBlockedError. Without it (a plain command),
   * readiness is judged by quiet output.
   */
  readScreen?: (screen: string) => ScreenReading;
  /** Who is typed into, for messages: "session 'rev-a' (claude)". */
  who?: string;
  /** Without a ready sign: ready once the screen has shown something and stayed still this long. */
  quietMs?: number;
  readyTimeoutMs?: number;
  /** How long the typed text has to show up on screen. */
  landTimeoutMs?: number;
  /** The least time between typing the text and Enter: real TUIs swallow an Enter that follows too closely. */
  settleMs?: number;
  /** How long to wait for the screen to react to Enter before pressing it once more. */
  confirmMs?: number;
  pollMs?: number;
}

export interface InjectReport {
  /** How readiness was judged. */
  ready: 'sign' | 'quiet';
  /** How we know the text landed: its tail is on screen, or (a TUI that folds long pastes) the screen changed. */
  landed: 'marker' | 'screen-changed';
  /** Which Enter the agent took; 'unconfirmed' when the screen never reacted (the job's events decide then). */
  submitted: 'first-enter' | 'second-enter' | 'unconfirmed';
}

const DEFAULTS = { quietMs: 1500, readyTimeoutMs: 60_000, landTimeoutMs: 5000, settleMs: 300, confirmMs: 2000, pollMs: 40 };
/** How long the screen must stay unchanged after the text lands before Enter. */
const STILL_MS = 100;
/** How long a screen that changed without showing the text must hold still to count as landed (a folded paste). */
const FOLDED_STILL_MS = 500;
/** How many characters on each side of the typed text say where it sits (input box or conversation). */
const SEAT_CHARS = 16;

/**
 * Delivers one line to the program in a pane the way a careful human would: wait until it is ready
 * for input, type the text literally, check it landed, wait a moment, press Enter, confirm the line
 * was taken, and press Enter once more if it was not. The text is never typed twice.
 */
export async function injectLine(mux: Multiplexer, paneId: string, text: string, options: InjectOptions = {}): Promise<InjectReport> {
  const o = { ...DEFAULTS, ...options };
  const read = async (): Promise<string> => {
    try {
      return await mux.capture(paneId);
    } catch (err) {
      throw new DeliveryError(`pane ${paneId} is gone: ${errorMessage(err)}`);
    }
  };

  const ready = await waitReady(read, o);
  const marker = markerOf(text);
  const before = normalize(await read());
  const seenBefore = count(before, marker);

  const typedAt = Date.now();
  await mux.sendText(paneId, text);

  let landed: InjectReport['landed'] | undefined;
  let screen = before;
  let changedAt = Date.now();
  const landDeadline = Date.now() + o.landTimeoutMs;
  while (Date.now() < landDeadline) {
    await sleep(o.pollMs);
    const now = normalize(await read());
    if (marker !== '' && count(now, marker) > seenBefore) {
      landed = 'marker';
      break;
    }
    if (now !== screen) {
      screen = now;
      changedAt = Date.now();
    }
    if (screen !== before) landed = 'screen-changed';
    // A TUI that folds a long paste into a placeholder (opencode: "[Pasted ~1 lines]") never shows
    // the text: once the screen has changed and then held still a while, the text is in.
    if (landed === 'screen-changed' && Date.now() - changedAt >= FOLDED_STILL_MS) break;
  }
  if (!landed) throw new DeliveryError(`the text typed into pane ${paneId} never appeared on its screen; it was not submitted`);
  // Enter only once the program has finished drawing the text, and never sooner than settleMs
  // after the text went in: real TUIs swallow an Enter that follows it too closely (NOTES.md).
  await waitStill(read, o.pollMs, Math.min(o.settleMs, STILL_MS));
  const rest = typedAt + o.settleMs - Date.now();
  if (rest > 0) await sleep(rest);

  const typed = normalize(text);
  for (const attempt of ['first-enter', 'second-enter'] as const) {
    const beforeEnter = normalize(await read());
    const seatBefore = seatOf(beforeEnter, typed);
    await mux.sendKeys(paneId, ['Enter']);
    const deadline = Date.now() + o.confirmMs;
    while (Date.now() < deadline) {
      await sleep(o.pollMs);
      let screen: string;
      try {
        screen = await read();
      } catch {
        return { ready, landed, submitted: attempt }; // it took the line and exited (e.g. /exit)
      }
      const now = normalize(screen);
      // Taken: the screen reacted, and not only elsewhere: the text left the input box, moved
      // into the conversation, or output followed it (a plain terminal). A screen that changed
      // away from the text — a footer filling in while the agent still starts (gemini) — with
      // the text still in its box between the same neighbours is no answer: the Enter was lost.
      if (now !== beforeEnter && (seatBefore === undefined || seatOf(now, typed) !== seatBefore)) return { ready, landed, submitted: attempt };
    }
  }
  return { ready, landed, submitted: 'unconfirmed' };
}

async function waitReady(read: () => Promise<string>, o: typeof DEFAULTS & InjectOptions): Promise<InjectReport['ready']> {
  const deadline = Date.now() + o.readyTimeoutMs;
  let last = '';
  let stillSince = Date.now();
  for (;;) {
    const screen = await read();
    const reading = o.readScreen?.(screen) ?? { kind: 'unknown' };
    if (reading.kind === 'blocked') throw new AgentBlockedError(reading.screen, lastLines(screen), o.who);
    if (reading.kind === 'ready') return 'sign';
    if (screen !== last) {
      last = screen;
      stillSince = Date.now();
    } else if (!o.readScreen && screen.trim() !== '' && Date.now() - stillSince >= o.quietMs) {
      return 'quiet';
    }
    if (Date.now() >= deadline) {
      const why = o.readScreen ? 'did not show its ready sign' : 'did not become ready for input';
      throw new DeliveryError(`${o.who ?? 'the agent'} ${why} within ${Math.round(o.readyTimeoutMs / 1000)} s; nothing was typed`, lastLines(screen));
    }
    await sleep(o.pollMs);
  }
}

/** Waits until two reads `stillMs` apart agree (the program has finished drawing), within a bound. */
async function waitStill(read: () => Promise<string>, pollMs: number, stillMs: number): Promise<void> {
  let last = await read();
  const deadline = Date.now() + 2000;
  let since = Date.now();
  while (Date.now() < deadline && Date.now() - since < stillMs) {
    await sleep(pollMs);
    const now = await read();
    if (now !== last) {
      last = now;
      since = Date.now();
    }
  }
}

/**
 * Screen text with everything a TUI may put between the characters of a long line removed:
 * line breaks (its own wrapping), white space, and box-drawing borders.
 */
export function normalize(screen: string): string {
  return screen.replace(/[\s\u2500-\u257f\u2580-\u259f]/gu, '');
}

/** The last 24 characters (code points, never half a character) of the normalized text. */
export function markerOf(text: string): string {
  return [...normalize(text)].slice(-24).join('');
}

/**
 * Where the typed text sits on a (normalized) screen: the characters just before and just after
 * its last whole occurrence — the input box's prompt and what follows the box, or the
 * conversation line it was moved into, or the output printed after it. Undefined when the whole
 * text is not on screen (a TUI that folds a paste, a text too long for the screen).
 */
function seatOf(screen: string, typed: string): string | undefined {
  if (typed.length < SEAT_CHARS) return undefined;
  const at = screen.lastIndexOf(typed);
  if (at < 0) return undefined;
  const end = at + typed.length;
  return `${screen.slice(Math.max(0, at - SEAT_CHARS), at)}\u0000${screen.slice(end, end + SEAT_CHARS)}`;
}

function count(haystack: string, needle: string): number {
  if (needle === '') return 0;
  let n = 0;
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + 1)) n++;
  return n;
}

/** The last `lines` lines of a screen (trailing blank lines dropped), for an audit log or a message. */
export function lastLines(text: string, lines = 40): string {
  return text.replace(/\s+$/u, '').split('\n').slice(-lines).join('\n');
}
