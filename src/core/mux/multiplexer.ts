import { ExitCode, MamError } from '../base/errors';
import type { MuxKind } from '../store/sessionSchema';

/** A pane as the multiplexer sees it, from one batched query. */
export interface PaneInfo {
  /** The pane's id on its server: tmux `%3`, herdr `w64e95948145ed1-1`. */
  id: string;
  /** Whether the pane's process is still running. */
  alive: boolean;
  /** The pid of the process the pane was started with, when the multiplexer tells. */
  pid: number | null;
  /** The pane's foreground command name (e.g. `node`, `claude`), when known. */
  command: string | null;
  /** The pane's current working directory, when known. */
  cwd: string | null;
  /** The MAM session name recorded on the pane at spawn, when the multiplexer keeps it. */
  label: string | null;
  /** The workspace that placed the pane, recorded at spawn, when the multiplexer keeps it (tmux). */
  owner?: string | null;
}

export interface SpawnRequest {
  /** The MAM session name; recorded on the pane so `monitor` can recognise it later. */
  label: string;
  /** The program and its arguments: never a shell string. */
  argv: readonly string[];
  cwd: string;
  /** Extra environment for the program. */
  env: Readonly<Record<string, string>>;
  /** The workspace placing it (its folder): recorded on the pane, so that workspaces sharing a server tell their panes apart. */
  owner?: string;
}

export interface SpawnedPane {
  id: string;
  pid: number | null;
}

/** Keys the injection and stop paths press, named as both backends understand them. */
export type Key = 'Enter' | 'Escape' | 'C-c' | 'C-d' | 'Tab' | 'BSpace';

/**
 * One multiplexer server (a tmux `-L` socket, a herdr session). Every backend passes the same
 * contract suite (test/integration/muxContract.ts).
 */
export interface Multiplexer {
  readonly kind: MuxKind;
  /** The server name (tmux -L name, herdr session name). */
  readonly server: string;
  /** How a user attaches to a pane from a terminal: an argv, never a shell string. */
  attachArgv(paneId: string): string[];
  /** True when the server is up. Never starts it. */
  isRunning(): Promise<boolean>;
  /** Starts `argv` in a new pane (starting the server if needed). */
  spawn(request: SpawnRequest): Promise<SpawnedPane>;
  /** Every pane on the server, in one query; [] when the server is not running. Never starts it. */
  listPanes(): Promise<PaneInfo[]>;
  /** The pane's visible screen as text, soft-wrapped lines joined. */
  capture(paneId: string): Promise<string>;
  /** The pane's last `lines` lines, scrollback included (as many as the multiplexer keeps), soft-wrapped lines joined. */
  captureRecent(paneId: string, lines: number): Promise<string>;
  /** Types `text` into the pane literally (as a paste where the program asked for bracketed paste). */
  sendText(paneId: string, text: string): Promise<void>;
  sendKeys(paneId: string, keys: readonly Key[]): Promise<void>;
  /** Closes the pane and ends its process. A pane that is already gone is not an error. */
  kill(paneId: string): Promise<void>;
  /** Stops the whole server (tests, `mam` cleanup). Not running is not an error. */
  killServer(): Promise<void>;
}

/** The multiplexer itself failed (not installed, refused a command). Exit 1. */
export class MuxError extends MamError {
  constructor(message: string) {
    super(message, 'mux', ExitCode.failed);
  }
}

/**
 * The name tmux (`-L default`) and herdr (`default`, its socket outside `sessions/`) give a user's
 * own server. MAM uses it only when a setting or flag names it (the seeds' way to share it), and
 * then shares it: panes there that MAM did not start are the user's, never adopted as sessions,
 * and the user's own configuration applies.
 */
export const USERS_OWN_SERVER = 'default';

/** Lines of scrollback MAM's own servers keep per pane (tmux keeps 2,000 by default): a job's pane text is kept from them. */
export const PANE_HISTORY_LINES = 10_000;

export function isUsersOwnServer(server: string): boolean {
  return server === USERS_OWN_SERVER;
}
