// The multi-root part of the UI check: a window on a .code-workspace with two git folders that use
// MAM (api and web, each with its own sessions, jobs, a loop in web) and one that does not (docs).
// The sidebar must show a row per MAM folder with its own rows under it, and nothing of docs;
// it is screenshot to test-output/multiroot.png in the default (light) theme, then in Dark Modern
// and Dark High Contrast (multiroot.dark-modern.png, multiroot.dark-high-contrast.png).
//
// test/ui/sidebar.mjs runs it with the packaged extension and the CLI inside it; alone, it runs
// this repository's build (dist/):
//
//   node test/ui/multiRoot.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FAKE = path.join(ROOT, 'test/fixtures/fake-agent.js');
const GIT_ENV = { GIT_AUTHOR_NAME: 'Demo', GIT_AUTHOR_EMAIL: 'demo@example.invalid', GIT_COMMITTER_NAME: 'Demo', GIT_COMMITTER_EMAIL: 'demo@example.invalid' };

/**
 * Builds the window's folders under `base`, fills them with the CLI `cli`, and runs the UI check
 * (scripts/vscode/run.mjs ui, with `vsix` when given); returns its exit code. Everything it starts
 * (agents, brokers) is stopped before it returns.
 */
export function multiRootCheck({ base, cli, vsix, out }) {
  const home = path.join(base, 'home');
  const tmuxDir = path.join(base, 'tmux');
  for (const d of [home, tmuxDir]) fs.mkdirSync(d, { recursive: true });
  // No MAM_TMUX_SERVER: each folder gets its own tmux server, as a user's would.
  const env = { ...process.env, ...GIT_ENV, HOME: home, TMUX_TMPDIR: tmuxDir, MAM_START_TIMEOUT_S: '20' };
  delete env.MAM_TMUX_SERVER;
  const folders = ['api', 'web', 'docs'].map((name) => path.join(base, name));
  for (const dir of folders) {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('git', ['init', '-q', dir]);
    fs.writeFileSync(path.join(dir, 'README.md'), `# ${path.basename(dir)}\n`);
    fs.writeFileSync(path.join(dir, '.gitignore'), '.mam/\n.mam.env\n');
    execFileSync('git', ['add', '-A'], { cwd: dir, env });
    execFileSync('git', ['commit', '-q', '-m', 'initial'], { cwd: dir, env });
  }
  const [apiDir, webDir] = folders;
  const workspaceFile = path.join(base, 'shop.code-workspace');
  fs.writeFileSync(workspaceFile, JSON.stringify({ folders: [{ path: 'api' }, { path: 'web' }, { path: 'docs' }], settings: {} }, null, 2));
  const envFile = path.join(base, 'env.json');
  fs.writeFileSync(envFile, JSON.stringify({ HOME: home, TMUX_TMPDIR: tmuxDir }));

  const mam = (cwd, ...args) => {
    const r = spawnSync(process.execPath, [cli, ...args, '--workspace', cwd], { cwd, env, encoding: 'utf8' });
    if (r.status !== 0 && !args.includes('--allow-fail')) throw new Error(`mam ${args.join(' ')} in ${path.basename(cwd)} exited ${r.status}: ${r.stderr}`);
    return r;
  };
  const agent = (cwd, name, role, mode, extra = []) =>
    mam(cwd, 'session', 'create', '--agent', 'claude', '--name', name, '--role', role, '--command', [process.execPath, FAKE, '--as', 'claude', '--mode', mode, ...extra].map((w) => JSON.stringify(w)).join(' '));
  const run = (...args) => spawnSync(process.execPath, [path.join(ROOT, 'scripts/vscode/run.mjs'), ...args], { stdio: 'inherit', cwd: ROOT }).status;

  let code = 1;
  try {
    // api: a job that completed, one that runs, one that failed.
    agent(apiDir, 'creator-1', 'creator', 'work');
    agent(apiDir, 'reviewer-1', 'reviewer', 'heartbeats');
    agent(apiDir, 'breaker-1', 'worker', 'error');
    mam(apiDir, 'job', 'submit', '--session', 'creator-1', '--prompt', 'Add rate limiting to the orders endpoint');
    mam(apiDir, 'job', 'submit', '--session', 'reviewer-1', '--prompt', 'Review the payment retry logic', '--no-wait');
    spawnSync(process.execPath, [cli, 'job', 'submit', '--session', 'breaker-1', '--prompt', 'Migrate the database to v2', '--workspace', apiDir], { cwd: apiDir, env });
    // web: an agent asking for permission, and a review loop that passed.
    agent(webDir, 'designer-1', 'worker', 'work');
    agent(webDir, 'tester-1', 'worker', 'permission', ['--work-ms', '600000']);
    mam(webDir, 'job', 'submit', '--session', 'tester-1', '--prompt', 'Clean the build folder and rerun the e2e tests', '--no-wait');
    agent(webDir, 'loop-creator', 'creator', 'creator');
    agent(webDir, 'loop-reviewer', 'reviewer', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    mam(webDir, 'loop', '--task', 'Polish the landing page copy', '--creator', 'loop-creator', '--reviewer', 'loop-reviewer');

    code = run('ui', ...(vsix ? ['--vsix', vsix] : []), '--workspace', workspaceFile, '--env-file', envFile, '--open-view', 'mam',
      '--expect', 'creator-1', '--expect', 'reviewer-1', '--expect', 'designer-1', '--expect', 'tester-1',
      '--expect', '3 of 3 running', '--expect', '4 of 4 running', '--expect', '1 needs you', '--expect', 'Polish the landing page copy', '--expect', 'Review the payment retry logic',
      '--shot', path.join(out, 'multiroot.png'),
      // VS Code's own list of MCP servers holds the one the extension offers for each MAM folder.
      '--palette', 'MCP: List Servers', '--palette-expect', 'MAM: api', '--palette-expect', 'MAM: web', '--palette-shot', path.join(out, 'multiroot-mcp.png'),
      '--shot-theme', 'Dark Modern', '--shot-theme', 'Dark High Contrast');
    if (code === 0) {
      const missing = ['api', 'web'].filter((name) => !fs.existsSync(path.join(base, name, '.mam', 'broker.json')));
      if (missing.length) throw new Error(`no embedded broker in ${missing.join(', ')}`);
      if (fs.existsSync(path.join(base, 'docs', '.mam'))) throw new Error('the window made .mam/ in docs, which does not use MAM');
    }
  } catch (err) {
    console.error(`[ui] multi-root: ${err.message}`);
    code = 1;
  } finally {
    for (const dir of [apiDir, webDir]) {
      if (!fs.existsSync(path.join(dir, '.mam'))) continue;
      for (const job of JSON.parse(mam(dir, 'job', 'list', '--json').stdout)) if (['registered', 'dispatched', 'started'].includes(job.state)) mam(dir, 'job', 'cancel', job.id);
      const servers = new Set(JSON.parse(mam(dir, 'session', 'list', '--json').stdout).map((s) => s.server));
      for (const server of servers) spawnSync('tmux', ['-L', server, 'kill-server'], { env });
      mam(dir, 'broker', 'stop');
    }
  }
  return code;
}

// Run alone: this repository's build, screenshots in test-output/.
if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-ui-multiroot-'));
  const out = path.join(ROOT, 'test-output');
  fs.mkdirSync(out, { recursive: true });
  let code;
  try {
    code = multiRootCheck({ base, cli: path.join(ROOT, 'dist/cli.js'), out });
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
  process.exit(code);
}
