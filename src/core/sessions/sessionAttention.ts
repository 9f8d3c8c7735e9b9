import { ExitCode, MamError } from '../base/errors';
import type { NamedScreen } from '../mux/inject';

/**
 * The session was created (and is kept), but its agent is not ready for work: it shows a screen
 * only a person should answer, or never showed its ready sign. Exit 4.
 */
export class NeedsAttentionError extends MamError {
  constructor(
    message: string,
    readonly session: string,
    readonly screen: NamedScreen | null,
  ) {
    super(message, 'needs_attention', ExitCode.needsAttention);
  }
}

/**
 * Which running agents show a screen only a person should answer (a first-run dialog, a warning),
 * as last seen: by the monitor's looks at every pane, and by a create or resume that stopped at one.
 * MAM names such a screen to the user and never answers it.
 */
export class SessionAttention {
  private screens = new Map<string, NamedScreen>();

  /** The blocking screen a running session's agent showed when last looked at. */
  last(name: string): NamedScreen | undefined {
    return this.screens.get(name);
  }

  /** What the monitor saw on every running agent; true when it differs from before. */
  note(now: ReadonlyMap<string, NamedScreen>): boolean {
    const key = (m: ReadonlyMap<string, NamedScreen>) => [...m].map(([n, a]) => `${n}:${a.id}`).join();
    const changed = key(now) !== key(this.screens);
    this.screens = new Map(now);
    return changed;
  }

  /** A change of the sessions that stopped at a blocking screen: that session shows it now. */
  stoppedAt(err: unknown): void {
    if (err instanceof NeedsAttentionError && err.screen) this.screens.set(err.session, err.screen);
  }
}
