import { spawn as spawnChild } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { sleep } from '../base/process';
import { either, int, isRecord, list, nullable, obj, optional, parse, str, type Infer, type Schema } from '../base/schema';
import { shellQuote } from '../base/shellWords';
import { herdrServerConfig } from './herdrConfig';
import { isUsersOwnServer, MuxError, type Key, type Multiplexer, type PaneInfo, type SpawnRequest, type SpawnedPane } from './multiplexer';
import { serverEnvironment } from './tmux';

export interface HerdrOptions {
  /** The herdr session name (`herdr --session <name>`): one server per session. */
  session: string;
  /** Environment herdr runs with; also where the socket is looked up (XDG_CONFIG_HOME, HOME). Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** How to run herdr; default ['herdr']. */
  herdrCommand?: string[];
  /** Told what the user should know when this backend starts a server (their config unreadable …). */
  warn?: (message: string) => void;
}

/** The states `pane.report_agent` accepts (`done` is herdr's own, never reported). */
export type HerdrAgentState = 'idle' | 'working' | 'blocked' | 'unknown';

/** herdr refused a call or could not be reached. `code` is herdr's error code, or ours for transport failures. */
export class HerdrError extends MuxError {
  constructor(
    readonly method: string,
    /** herdr's code (`pane_not_found`, `invalid_request`, …), or `not_running`, `timeout`, `bad_response`. */
    override readonly code: string,
    detail: string,
  ) {
    super(`herdr ${method} failed (${code}): ${detail}`);
    this.name = 'HerdrError';
  }
}

const SESSION_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** sun_path holds 108 bytes on Linux, NUL included. */
const MAX_SOCKET_PATH = 107;
const CALL_TIMEOUT_MS = 10_000;
const PING_TIMEOUT_MS = 2000;
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const SHELL_READY_MS = 3000;
/** A terminal in canonical mode keeps at most 4095 bytes of one line; the rest is dropped. */
const MAX_TYPED_LINE = 4000;
const GONE = new Set(['pane_not_found', 'not_found', 'not_running']);

// herdr's answers, as MAM reads them (docs/herdr-socket-api.md); an answer that does not read is a bad_response.
const text = str();
const maybeText = optional(nullable(text));
const herdrPane = obj({ pane_id: text, workspace_id: text, cwd: maybeText, foreground_cwd: maybeText });
const paneList = obj({ panes: list(herdrPane) });
const workspaceList = obj({ workspaces: list(obj({ workspace_id: text, label: maybeText })) });
const paneRead = obj({ read: obj({ text }) });
const processInfoAnswer = obj({
  process_info: optional(
    obj({
      shell_pid: optional(nullable(int())),
      foreground_processes: optional(list(obj({ pid: int(), name: text, cwd: maybeText }))),
    }),
  ),
});
type ProcessInfo = NonNullable<Infer<typeof processInfoAnswer>['process_info']>;
/** Both answers herdr documents to workspace.create: `workspace_created` with its root pane, or bare `workspace_info`. */
const createdWorkspace = either(obj({ root_pane: obj({ pane_id: text }) }), obj({ workspace: obj({ workspace_id: text }) }), 'holds neither a root pane nor a workspace');

let requestCounter = 0;

/**
 * One herdr session (https://herdr.dev), driven over its socket API (docs/herdr-socket-api.md).
 * Each spawned program gets a workspace of its own, labelled with the MAM session name: its root
 * pane is then the workspace's only pane, so the pane id never shifts when other panes close
 * (herdr renumbers the panes of a workspace), and the label survives in herdr's own UI.
 */
export class HerdrBackend implements Multiplexer {
  readonly kind = 'herdr' as const;
  readonly server: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly herdrCommand: string[];
  private readonly socketPath: string;
  /** Whether the server knows the [next] `pane.process_info`; learned on first use. */
  private processInfoKnown: boolean | undefined;
  private starting: Promise<void> | undefined;

  constructor(private readonly options: HerdrOptions) {
    if (!SESSION_NAME.test(options.session) || options.session === '.' || options.session === '..') {
      throw new MuxError(`invalid herdr session name '${options.session}': use 1-64 letters, digits, '.', '_' or '-'`);
    }
    this.server = options.session;
    this.env = options.env ?? process.env;
    this.herdrCommand = options.herdrCommand?.length ? [...options.herdrCommand] : ['herdr'];
    this.socketPath = herdrSocketPath(this.server, this.env);
  }

  /**
   * herdr's released CLI attaches to a whole session (`herdr session attach <name>`); there is no
   * released way to attach to one pane. The pane is the only one in the workspace labelled with
   * the MAM session name, so the user finds it in herdr's sidebar.
   */
  attachArgv(_paneId: string): string[] {
    return [...this.herdrCommand, 'session', 'attach', this.server];
  }

  async isRunning(): Promise<boolean> {
    try {
      await this.call('ping', {}, PING_TIMEOUT_MS);
      return true;
    } catch {
      return false;
    }
  }

  async spawn(request: SpawnRequest): Promise<SpawnedPane> {
    const line = commandLine(request);
    await this.ensureServer();
    const created = await this.read('workspace.create', { cwd: request.cwd, label: request.label, focus: false }, createdWorkspace);
    const paneId = 'root_pane' in created ? created.root_pane.pane_id : await this.onlyPane(created.workspace.workspace_id);
    await this.waitForShell(paneId);
    await this.call('pane.send_input', { pane_id: paneId, text: line, keys: ['Enter'] });
    // `exec` keeps the shell's pid for the program, so the shell's pid is the program's.
    const info = await this.processInfo(paneId).catch((err: unknown) => {
      if (err instanceof HerdrError) return null; // e.g. the program already ended; the pid is optional
      throw err;
    });
    return { id: paneId, pid: info?.shell_pid ?? null };
  }

  async listPanes(): Promise<PaneInfo[]> {
    let panes: Infer<typeof herdrPane>[];
    let workspaces: Infer<typeof workspaceList>['workspaces'];
    try {
      [{ panes }, { workspaces }] = await Promise.all([this.read('pane.list', {}, paneList), this.read('workspace.list', {}, workspaceList)]);
    } catch (err) {
      if (err instanceof HerdrError && err.code === 'not_running') return [];
      throw err;
    }
    const labels = new Map(workspaces.map((w) => [w.workspace_id, w.label ?? null]));
    const listed = await Promise.all(
      panes.map(async (pane): Promise<PaneInfo | null> => {
        let info: ProcessInfo | null;
        try {
          info = await this.processInfo(pane.pane_id);
        } catch (err) {
          if (err instanceof HerdrError && GONE.has(err.code)) return null; // closed since pane.list
          throw err;
        }
        const foreground = info?.foreground_processes?.[0];
        return {
          id: pane.pane_id,
          // herdr closes a pane whose program ended; one it keeps open with no process left is dead.
          alive: info === null || info.shell_pid !== undefined || foreground !== undefined,
          pid: info?.shell_pid ?? null,
          command: foreground?.name ?? null,
          cwd: foreground?.cwd ?? pane.foreground_cwd ?? pane.cwd ?? null,
          label: labels.get(pane.workspace_id) ?? null,
        };
      }),
    );
    return listed.filter((p): p is PaneInfo => p !== null);
  }

  async capture(paneId: string): Promise<string> {
    return (await this.read('pane.read', { pane_id: paneId, source: 'visible' }, paneRead)).read.text;
  }

  /** herdr returns at most 1,000 recent lines (docs/herdr-socket-api.md, `pane.read`). */
  async captureRecent(paneId: string, lines: number): Promise<string> {
    return (await this.read('pane.read', { pane_id: paneId, source: 'recent_unwrapped', lines: Math.min(1000, Math.max(1, Math.floor(lines))) }, paneRead)).read.text;
  }

  async sendText(paneId: string, text: string): Promise<void> {
    await this.call('pane.send_text', { pane_id: paneId, text });
  }

  async sendKeys(paneId: string, keys: readonly Key[]): Promise<void> {
    await this.call('pane.send_keys', { pane_id: paneId, keys: keys.map(herdrKey) });
  }

  async kill(paneId: string): Promise<void> {
    try {
      await this.call('pane.close', { pane_id: paneId });
    } catch (err) {
      if (!(err instanceof HerdrError && GONE.has(err.code))) throw err;
    }
  }

  async killServer(): Promise<void> {
    try {
      await this.call('server.stop', {});
    } catch (err) {
      if (!(err instanceof HerdrError && err.code === 'not_running')) throw err;
    }
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while (await this.isRunning()) {
      if (Date.now() > deadline) throw new MuxError(`herdr session ${this.server} still answers ${STOP_TIMEOUT_MS / 1000} s after server.stop`);
      await sleep(50);
    }
  }

  /**
   * Tells herdr what the agent in a pane is doing, so herdr's sidebar shows the job's state. While
   * reported, this overrides herdr's own detection for the pane; `agent` is the label herdr shows.
   */
  async reportAgent(paneId: string, state: HerdrAgentState, message?: string, agent = 'mam'): Promise<void> {
    const params: Record<string, unknown> = { pane_id: paneId, source: 'custom:mam', agent, state };
    if (message !== undefined) params.message = message;
    await this.call('pane.report_agent', params);
  }

  /** `pane.process_info` ([next]), or null from a herdr that does not have it. */
  private async processInfo(paneId: string): Promise<ProcessInfo | null> {
    if (this.processInfoKnown === false) return null;
    try {
      const result = await this.read('pane.process_info', { pane_id: paneId }, processInfoAnswer);
      this.processInfoKnown = true;
      return result.process_info ?? {};
    } catch (err) {
      // A released herdr answers an unknown method with invalid_request.
      if (err instanceof HerdrError && err.code === 'invalid_request' && this.processInfoKnown === undefined) {
        this.processInfoKnown = false;
        return null;
      }
      throw err;
    }
  }

  /** The pane of a new workspace, when herdr answered workspace.create without it. */
  private async onlyPane(workspaceId: string): Promise<string> {
    const { panes } = await this.read('pane.list', { workspace_id: workspaceId }, paneList);
    const pane = panes.find((p) => p.workspace_id === workspaceId);
    if (!pane) throw new HerdrError('pane.list', 'bad_response', `workspace ${workspaceId} has no pane`);
    return pane.pane_id;
  }

  /**
   * Types nothing until the new pane's shell has drawn something (its prompt), within a bound:
   * some shells' start-up files read or flush the terminal, and text typed into it then is lost.
   */
  private async waitForShell(paneId: string): Promise<void> {
    const deadline = Date.now() + SHELL_READY_MS;
    while (Date.now() < deadline) {
      if ((await this.capture(paneId)).trim() !== '') return;
      await sleep(20);
    }
  }

  /** Starts the server as a user would (`herdr --session <name> server`), once, and waits for it to answer. */
  private ensureServer(): Promise<void> {
    this.starting ??= this.startServer().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startServer(): Promise<void> {
    if (await this.isRunning()) return;
    const [file, ...args] = this.herdrCommand;
    const env = herdrServerEnvironment(this.env);
    // The user's own server keeps the user's config; one of MAM's never relaunches agents by itself.
    if (!isUsersOwnServer(this.server)) {
      const config = herdrServerConfig(path.dirname(this.socketPath), this.env);
      if (config.warning) this.options.warn?.(config.warning);
      if (config.file) env.HERDR_CONFIG_PATH = config.file;
    }
    const child = spawnChild(file!, [...args, ...(isUsersOwnServer(this.server) ? [] : ['--session', this.server]), 'server'], {
      detached: true,
      stdio: 'ignore',
      cwd: '/',
      env,
    });
    let failure: Error | undefined;
    child.on('error', (err: NodeJS.ErrnoException) => {
      failure = err.code === 'ENOENT' ? new MuxError(`herdr is not installed: '${file}' is not on PATH (see https://herdr.dev)`) : err;
    });
    child.unref();
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await this.isRunning())) {
      if (failure) throw failure;
      if (Date.now() > deadline) throw new MuxError(`herdr session ${this.server} did not answer on ${this.socketPath} within ${START_TIMEOUT_MS / 1000} s of starting it`);
      await sleep(50);
    }
  }

  /** One request on its own connection, as herdr serves them; rejects with a HerdrError. */
  private call(method: string, params: Record<string, unknown>, timeoutMs = CALL_TIMEOUT_MS): Promise<unknown> {
    return herdrCall(this.socketPath, method, params, timeoutMs);
  }

  /** A call whose answer MAM reads: typed by `schema`, or a bad_response naming the field. */
  private async read<T>(method: string, params: Record<string, unknown>, schema: Schema<T>): Promise<T> {
    return parse(schema, await this.call(method, params), (problem) => new HerdrError(method, 'bad_response', problem), 'the answer');
  }
}

/**
 * The environment the server starts with: tmux's rules (serverEnvironment), and none of the
 * variables herdr gives its own panes. MAM may itself run in a herdr pane; an inherited
 * HERDR_SOCKET_PATH or HERDR_SESSION would point the new server, or a program in it, at that other
 * session (herdr's older docs let HERDR_SOCKET_PATH beat --session).
 */
function herdrServerEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const out = serverEnvironment(env);
  for (const key of ['HERDR_SOCKET_PATH', 'HERDR_SESSION', 'HERDR_ENV', 'HERDR_WORKSPACE_ID', 'HERDR_TAB_ID', 'HERDR_PANE_ID']) delete out[key];
  return out;
}

/**
 * `$XDG_CONFIG_HOME/herdr/sessions/<session>/herdr.sock`, else under `$HOME/.config`; the user's
 * own server (`default`) answers on `herdr/herdr.sock` there.
 */
export function herdrSocketPath(session: string, env: NodeJS.ProcessEnv): string {
  const config = env.XDG_CONFIG_HOME || path.join(env.HOME || '/', '.config');
  const socket = isUsersOwnServer(session) ? path.join(config, 'herdr', 'herdr.sock') : path.join(config, 'herdr', 'sessions', session, 'herdr.sock');
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new MuxError(`the herdr socket path is too long for a Unix socket (${Buffer.byteLength(socket)} > ${MAX_SOCKET_PATH} bytes): ${socket}`);
  }
  return socket;
}

/**
 * The line typed into a new pane's shell to run the program. herdr's released API cannot start a
 * pane with a command: a pane starts the user's shell and runs a command by having it typed
 * (herdr's own `pane run` does this). `exec` makes the program replace the shell, so the pane
 * ends when the program does, as a tmux pane would; `env` sets its environment without the
 * shell's help. Every word is quoted (base/shellWords.ts).
 */
export function commandLine(request: SpawnRequest): string {
  if (request.argv.length === 0) throw new MuxError('nothing to run: empty command');
  if (request.argv[0]!.includes('=')) throw new MuxError(`cannot run '${request.argv[0]}' in a herdr pane: env would take a program name with '=' for a variable`);
  const assignments = Object.entries(request.env).map(([key, value]) => {
    if (key === '' || key.includes('=')) throw new MuxError(`invalid environment variable name '${key}'`);
    return `${key}=${value}`;
  });
  const words = ['exec', 'env', '--', ...assignments, ...request.argv];
  // A line editor acts on control characters typed into it (a tab completes), whatever the quoting.
  const control = words.find((w) => /[\u0000-\u0009\u000b-\u001f\u007f]/.test(w));
  if (control !== undefined) throw new MuxError(`cannot type ${JSON.stringify(control)} into a herdr pane: it holds a control character`);
  const line = `${words.slice(0, 3).join(' ')} ${shellQuote(words.slice(3))}`;
  if (line.split('\n').some((l) => Buffer.byteLength(l) > MAX_TYPED_LINE)) {
    throw new MuxError(`the command line for a herdr pane is too long to type (over ${MAX_TYPED_LINE} bytes on one line); pass long values in a file`);
  }
  return line;
}

/** Our key names as herdr's released API spells them; C-d has no name there, but any one character is a key. */
function herdrKey(key: Key): string {
  switch (key) {
    case 'Escape':
      return 'Esc';
    case 'BSpace':
      return 'Backspace';
    case 'C-d':
      return '\u0004';
    default:
      return key;
  }
}

/** Sends one request on a fresh connection and resolves its `result`. */
export function herdrCall(socketPath: string, method: string, params: Record<string, unknown>, timeoutMs = CALL_TIMEOUT_MS): Promise<unknown> {
  const id = `mam_${process.pid}_${++requestCounter}`;
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    let buffer = '';
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      fn();
    };
    const timer = setTimeout(() => settle(() => reject(new HerdrError(method, 'timeout', `no answer on ${socketPath} within ${timeoutMs} ms`))), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ id, method, params })}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl >= 0) settle(() => answer(buffer.slice(0, nl)));
    });
    socket.on('end', () => settle(() => reject(new HerdrError(method, 'bad_response', 'the server closed the connection without an answer'))));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const down = err.code === 'ENOENT' || err.code === 'ECONNREFUSED';
      settle(() => reject(new HerdrError(method, down ? 'not_running' : (err.code ?? 'socket_error'), down ? `no herdr server on ${socketPath}` : err.message)));
    });

    function answer(line: string): void {
      let response: unknown;
      try {
        response = JSON.parse(line);
      } catch {
        return reject(new HerdrError(method, 'bad_response', `not JSON: ${line.slice(0, 200)}`));
      }
      if (isRecord(response) && response.error) {
        const error = isRecord(response.error) ? response.error : {};
        return reject(new HerdrError(method, String(error.code ?? 'unknown'), String(error.message ?? '')));
      }
      if (!isRecord(response) || response.id !== id || typeof response.result !== 'object' || response.result === null) {
        return reject(new HerdrError(method, 'bad_response', `an answer that does not match request ${id}: ${line.slice(0, 200)}`));
      }
      resolve(response.result);
    }
  });
}
