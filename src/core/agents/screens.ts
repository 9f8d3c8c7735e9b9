import type { NamedScreen, ScreenReading } from '../mux/inject';

/**
 * Screens an agent CLI shows before it takes input — first-run dialogs, warnings, logins — which
 * only a person should answer. MAM names them and never types into them (an Enter typed into
 * claude's Bypass Permissions warning chooses its default, "No, exit").
 */
export interface BlockingScreen extends NamedScreen {
  /** Text only that screen shows (matched against the visible screen). */
  sign: RegExp;
}

/** What the visible screen says about an agent: ready for input, blocked on a screen, or neither yet. */
export function readScreen(text: string, agent: { readySign?: RegExp; blockingScreens?: readonly BlockingScreen[] }): ScreenReading {
  // A blocking screen first: some draw the agent's footer (and so its ready sign) behind them.
  const screen = agent.blockingScreens?.find((s) => s.sign.test(text));
  if (screen) return { kind: 'blocked', screen };
  if (agent.readySign?.test(text)) return { kind: 'ready' };
  return { kind: 'unknown' };
}
