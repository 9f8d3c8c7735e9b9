import { execQuick, ProgramNotFoundError, type ExecResult } from '../base/exec';
import { endProcessGroup, sleep } from '../base/process';
import { isUsersOwnServer, MuxError, PANE_HISTORY_LINES, type Key, type Multiplexer, type PaneInfo, type SpawnRequest, type SpawnedPane } from './multiplexer';

export interface TmuxOptions {
  /** The `-L` socket name. */
  server: string;
  /** A tmux config file for the server; default none (`-f /dev/null`), so user settings cannot break bookkeeping. */
  configFile?: string;
  /** Environment for tmux itself (e.g. TMUX_TMPDIR); default: this process's. */
  env?: NodeJS.ProcessEnv;
}

/** tmux's record separator in -F formats: a character no pane path or command contains. */
const SEP = '\u001f';
const PANE_FORMAT = ['#{pane_id}', '#{pane_pid}', '#{pane_dead}', '#{pane_current_command}', '#{pane_current_path}', '#{@mam-session}', '#{@mam-workspace}'].join(SEP);
/** What a client says when the server it reached exited before answering (it was shutting down, empty). */
const SERVER_WENT_AWAY = /server exited unexpectedly|lost server/i;
const NO_SERVER = /no server running|error connecting to|failed to connect to server|server exited unexpectedly|no current target|No such file or directory/i;

/**
 * A tmux server of our own (`tmux -L <server>`), never the user's default one unless the user names
 * it (`default`: multiplexer.ts). Each MAM session
 * gets its own tmux session (so two terminals can attach to two agents independently), with the
 * MAM session name kept on the pane as the user option `@mam-session`.
 */
export class TmuxBackend implements Multiplexer {
  readonly kind = 'tmux' as const;
  readonly server: string;

  constructor(private readonly options: TmuxOptions) {
    this.server = options.server;
  }

  attachArgv(paneId: string): string[] {
    return ['tmux', '-L', this.server, 'attach-session', '-t', paneId];
  }

  async isRunning(): Promise<boolean> {
    const r = await this.tmux(['list-sessions', '-F', '#{session_id}']);
    return r.exitCode === 0;
  }

  async spawn(request: SpawnRequest): Promise<SpawnedPane> {
    if (request.argv.length === 0) throw new MuxError('nothing to run: empty command');
    // With one argument tmux would run it through `sh -c`; with several it execs them directly.
    const argv = request.argv.length === 1 ? ['env', '--', request.argv[0]!] : [...request.argv];
    const envArgs = Object.entries(request.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const sessionName = await this.freeSessionName(request.label);
    // A pane keeps the scrollback it was made with: MAM's own servers keep more of it (a job's pane
    // text is saved from it); the user's own server keeps the user's settings.
    const history = isUsersOwnServer(this.server) ? [] : ['start-server', ';', 'set-option', '-g', 'history-limit', String(PANE_HISTORY_LINES), ';'];
    const newSession = [
      ...history,
      'new-session', '-d', '-P', '-F', `#{pane_id}${SEP}#{pane_pid}`,
      '-s', sessionName, '-c', request.cwd, '-x', '200', '-y', '50', ...envArgs, '--', ...argv,
    ];
    let r = await this.tmux(newSession);
    // A server whose last pane just closed exits: a client that reached it meanwhile is dropped
    // before its command ran (no session was made), and the next client starts a new server.
    for (let backoff = 10; r.exitCode !== 0 && SERVER_WENT_AWAY.test(r.stderr) && backoff <= 160; backoff *= 2) {
      await sleep(backoff);
      r = await this.tmux(newSession);
    }
    if (r.exitCode !== 0) throw new MuxError(`tmux could not start a pane on server ${this.server}: ${firstLine(r.stderr)}`);
    const [id, pid] = r.stdout.trim().split(SEP);
    if (!id?.startsWith('%')) throw new MuxError(`tmux returned no pane id: '${firstLine(r.stdout)}'`);
    // Best effort: the label survives in our registry anyway; a pane that already exited is fine.
    await this.tmux(['set-option', '-p', '-t', id, '@mam-session', request.label]);
    if (request.owner) await this.tmux(['set-option', '-p', '-t', id, '@mam-workspace', request.owner]);
    return { id, pid: pid ? Number(pid) : null };
  }

  async listPanes(): Promise<PaneInfo[]> {
    const r = await this.tmux(['list-panes', '-a', '-F', PANE_FORMAT]);
    if (r.exitCode !== 0) {
      // A server whose last pane just closed is shutting down: it may answer oddly once.
      if (NO_SERVER.test(r.stderr) || !(await this.isRunning())) return [];
      throw new MuxError(`tmux list-panes failed on server ${this.server}: ${firstLine(r.stderr)}`);
    }
    return r.stdout
      .split('\n')
      .filter((line) => line.includes(SEP))
      .map((line) => {
        const [id, pid, dead, command, cwd, label, owner] = line.split(SEP);
        return {
          id: id!,
          alive: dead !== '1',
          pid: pid ? Number(pid) : null,
          command: command || null,
          cwd: cwd || null,
          label: label || null,
          owner: owner || null,
        };
      });
  }

  async capture(paneId: string): Promise<string> {
    const r = await this.tmux(['capture-pane', '-p', '-J', '-t', paneId]);
    if (r.exitCode !== 0) throw new MuxError(`cannot read pane ${paneId}: ${firstLine(r.stderr)}`);
    return r.stdout;
  }

  async captureRecent(paneId: string, lines: number): Promise<string> {
    const r = await this.tmux(['capture-pane', '-p', '-J', '-S', `-${Math.max(0, Math.floor(lines))}`, '-t', paneId]);
    if (r.exitCode !== 0) throw new MuxError(`cannot read pane ${paneId}: ${firstLine(r.stderr)}`);
    return r.stdout;
  }

  async sendText(paneId: string, text: string): Promise<void> {
    // Through a named buffer: the text goes on stdin, never on a command line a shell could see,
    // and `paste-buffer -p` brackets it as a paste when the program asked for bracketed paste.
    const buffer = `mam-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const load = await this.tmux(['load-buffer', '-b', buffer, '-'], text);
    if (load.exitCode !== 0) throw new MuxError(`cannot load text for pane ${paneId}: ${firstLine(load.stderr)}`);
    const paste = await this.tmux(['paste-buffer', '-p', '-d', '-r', '-b', buffer, '-t', paneId]);
    if (paste.exitCode !== 0) {
      await this.tmux(['delete-buffer', '-b', buffer]);
      throw new MuxError(`cannot type into pane ${paneId}: ${firstLine(paste.stderr)}`);
    }
  }

  async sendKeys(paneId: string, keys: readonly Key[]): Promise<void> {
    const r = await this.tmux(['send-keys', '-t', paneId, ...keys]);
    if (r.exitCode !== 0) throw new MuxError(`cannot send keys to pane ${paneId}: ${firstLine(r.stderr)}`);
  }

  async kill(paneId: string): Promise<void> {
    // tmux starts the pane's program as the leader of a process group of its own. Closing the pane
    // only hangs up its terminal, which a program may ignore (gemini's launcher does, and its child
    // lives on with it): so the group is ended too.
    const pid = await this.panePid(paneId);
    const r = await this.tmux(['kill-pane', '-t', paneId]);
    if (r.exitCode !== 0 && !/can't find pane|no server running|error connecting/i.test(r.stderr)) {
      throw new MuxError(`cannot close pane ${paneId}: ${firstLine(r.stderr)}`);
    }
    if (pid !== null) await endProcessGroup(pid);
  }

  /** The pid of the pane's program (its process group), or null when the pane is gone or dead. */
  private async panePid(paneId: string): Promise<number | null> {
    const r = await this.tmux(['display-message', '-p', '-t', paneId, `#{pane_pid}${SEP}#{pane_dead}`]);
    const [pid, dead] = r.stdout.trim().split(SEP);
    return r.exitCode === 0 && dead !== '1' && /^\d+$/.test(pid ?? '') ? Number(pid) : null;
  }

  async killServer(): Promise<void> {
    await this.tmux(['kill-server']);
  }

  /** tmux session names cannot hold '.' or ':'; a taken name gets a suffix. */
  private async freeSessionName(label: string): Promise<string> {
    const base = label.replace(/[.:]/g, '_');
    const taken = await this.tmux(['list-sessions', '-F', '#{session_name}']);
    const names = new Set(taken.exitCode === 0 ? taken.stdout.split('\n') : []);
    if (!names.has(base)) return base;
    for (let i = 2; ; i++) if (!names.has(`${base}-${i}`)) return `${base}-${i}`;
  }

  private async tmux(args: string[], input?: string): Promise<ExecResult> {
    // The user's own server (named by them: multiplexer.ts) keeps the user's configuration.
    const base = ['-L', this.server, ...(isUsersOwnServer(this.server) ? [] : ['-f', this.options.configFile ?? '/dev/null'])];
    try {
      // tmux clients end in milliseconds and status asks one per server: the lean runner.
      return await execQuick('tmux', [...base, ...args], { env: serverEnvironment(this.options.env ?? process.env), extendEnv: false, input, timeoutMs: 15_000 });
    } catch (err) {
      if (err instanceof ProgramNotFoundError) throw new MuxError('tmux is not installed: install tmux 3.2 or newer (apt-get install tmux)');
      throw err;
    }
  }
}

/**
 * The environment tmux runs with, which a server it starts passes on to every pane: ours, minus
 * what belongs to the process that happens to start it (the VS Code extension host's Electron and
 * IPC variables would break `code` and Node programs inside the panes) and minus TMUX, so tmux
 * never mistakes us for a client nested in another server.
 */
export function serverEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || key === 'TMUX' || key === 'TMUX_PANE') continue;
    if (key.startsWith('ELECTRON_') || key.startsWith('VSCODE_')) continue;
    out[key] = value;
  }
  return out;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
