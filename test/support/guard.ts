/**
 * The run-wide guard (mocha global fixtures). Before any test: a temp HOME, XDG folders and
 * TMUX_TMPDIR for the whole run, and a marker in the environment that every child process inherits.
 * After the last test: the run fails if any test left files in the real HOME's agent folders (claude,
 * codex, gemini, copilot, qwen, grok, opencode, herdr), a tmux server, or a process carrying the marker (a
 * child, or a detached daemon) behind; and after each file, if a file watch is left open (mochaHooks).
 *
 * Under `--parallel` (.mocharc.json) both run once, in mocha's main process: setup before the first
 * worker is forked, so every worker inherits the temp HOME and the marker; teardown after the last
 * worker is done. * Each suite keeps to its own temp folders, tmux servers (named by its pid),
 * brokers on free ports and network namespaces, so files may run side by side.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { inotifyWatches } from './inotify';

/** Where the agent CLIs the tests run keep their state under HOME (and the default XDG folders). */
const AGENT_FOLDERS = [
  '.claude', '.claude.json', '.codex', '.gemini', '.copilot', '.qwen', '.grok',
  '.config/opencode', '.local/share/opencode', '.local/state/opencode', '.cache/opencode', '.cache/copilot',
  '.config/herdr',
];
const RUN_MARKER = 'MAM_TEST_RUN';

interface Baseline {
  realHome: string;
  agentFiles: Map<string, number>;
  defaultTmuxSockets: Set<string>;
  root: string;
}

let baseline: Baseline | undefined;

/**
 * Root hooks, run in every mocha process (each parallel worker): after a file's tests (the whole
 * run's, without --parallel), no file watch may be left open in the process. The kernel's count,
 * not the code's: a watcher not closed on dispose shows here.
 */
export const mochaHooks = {
  afterAll(): void {
    const left = inotifyWatches();
    if (left > 0) throw new Error(`run-wide guard: ${left} file watch${left === 1 ? ' was' : 'es were'} left open (inotify), a watcher not disposed of`);
  },
};

export function mochaGlobalSetup(): void {
  const realHome = os.userInfo().homedir;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-test-'));
  const home = path.join(root, 'home');
  for (const dir of [home, path.join(root, 'tmux'), path.join(root, 'xdg-config'), path.join(root, 'xdg-data'), path.join(root, 'xdg-state')]) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  baseline = { realHome, agentFiles: listAgentFiles(realHome), defaultTmuxSockets: new Set(tmuxSockets(defaultTmuxDir())), root };

  process.env.HOME = home;
  process.env.XDG_CONFIG_HOME = path.join(root, 'xdg-config');
  process.env.XDG_DATA_HOME = path.join(root, 'xdg-data');
  process.env.XDG_STATE_HOME = path.join(root, 'xdg-state');
  process.env.TMUX_TMPDIR = path.join(root, 'tmux');
  process.env[RUN_MARKER] = randomBytes(6).toString('hex');
  process.env.MAM_TEST_ROOT = root;
  delete process.env.TMUX; // never talk to a tmux server the test run happens to be inside
  delete process.env.TMUX_PANE;
  for (const key of Object.keys(process.env)) {
    if (key.startsWith('MQTT_') || key.startsWith('MAM_WORKSPACE')) delete process.env[key];
  }
}

export async function mochaGlobalTeardown(): Promise<void> {
  if (!baseline) return;
  const problems: string[] = [];

  const leftovers = await leftoverProcesses();
  for (const p of leftovers) problems.push(`process ${p.pid} left running: ${p.cmd}`);
  for (const p of leftovers) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }

  const tmuxLeft = [
    ...tmuxSockets(path.join(baseline.root, 'tmux', `tmux-${process.getuid?.() ?? 0}`)).filter(isLiveSocket),
    ...tmuxSockets(defaultTmuxDir()).filter((s) => !baseline!.defaultTmuxSockets.has(s) && isLiveSocket(s)),
  ];
  for (const s of tmuxLeft) problems.push(`tmux server left running: ${s}`);

  const after = listAgentFiles(baseline.realHome);
  for (const [file, mtime] of after) {
    if (baseline.agentFiles.get(file) !== mtime) problems.push(`a test wrote into the real HOME: ${file}`);
  }

  fs.rmSync(baseline.root, { recursive: true, force: true });
  if (problems.length > 0) {
    const message = `run-wide guard: the tests left state behind:\n  ${problems.join('\n  ')}`;
    console.error(message);
    process.exitCode = 1;
    throw new Error(message);
  }
}

function listAgentFiles(home: string): Map<string, number> {
  const files = new Map<string, number>();
  const walk = (p: string, depth: number): void => {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      return;
    }
    files.set(p, st.mtimeMs);
    if (st.isDirectory() && depth < 6 && files.size < 20_000) {
      for (const name of fs.readdirSync(p)) walk(path.join(p, name), depth + 1);
    }
  };
  for (const f of AGENT_FOLDERS) walk(path.join(home, f), 0);
  return files;
}

function defaultTmuxDir(): string {
  return path.join('/tmp', `tmux-${process.getuid?.() ?? 0}`);
}

function tmuxSockets(dir: string): string[] {
  try {
    return fs.readdirSync(dir).map((n) => path.join(dir, n));
  } catch {
    return [];
  }
}

/** A tmux socket file is left behind by a dead server too; only a live one counts. */
function isLiveSocket(socket: string): boolean {
  const r = spawnSync('tmux', ['-S', socket, 'list-sessions'], { stdio: 'ignore', env: { ...process.env, TMUX: '' } });
  return r.status === 0;
}

/** Every process, other than this one, whose environment carries this run's marker. */
async function leftoverProcesses(): Promise<Array<{ pid: number; cmd: string }>> {
  const marker = `${RUN_MARKER}=${process.env[RUN_MARKER]}`;
  const found: Array<{ pid: number; cmd: string }> = [];
  // Give children that were just signalled a moment to be reaped, then look.
  for (let attempt = 0; attempt < 20; attempt++) {
    found.length = 0;
    for (const name of fs.readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid === process.pid) continue;
      try {
        const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
        if (!environ.split('\0').includes(marker)) continue;
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (/\) Z /.test(stat)) continue; // a zombie: already dead
        found.push({ pid, cmd: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() });
      } catch {
        // exited meanwhile, or not ours to read
      }
    }
    if (found.length === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return found;
}
