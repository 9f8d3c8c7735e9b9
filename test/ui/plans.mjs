// The plans part of the UI check: a git project with two plans run by the `mam` CLI and scripted
// agents — one ended (three tasks landed in dependency order, one whose review refused it, one
// blocked by it), one still running (a task in its review loop, one waiting for it) — opened in a
// real VS Code. The Plans view (collapsed until a person opens it) must show both with each task's
// state and what it waits for; it is screenshot alone, with the other views collapsed, to test-output/plans.png and in Dark Modern and
// Dark High Contrast. Then the ended plan's page is opened from the Command Palette: its graph must
// show each task in its state's colour, the critical path, the edges of its needs (dashed from a
// task that did not land), and a click on a task must open that task's loop report; the page is
// screenshot to test-output/plan.png and in four themes, its text contrast measured in each.
//
// test/ui/sidebar.mjs runs it with the packaged extension and the CLI inside it; alone, it runs
// this repository's build (dist/):
//
//   node test/ui/plans.mjs
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FAKE = path.join(ROOT, 'test/fixtures/fake-agent.js');
const GIT_ENV = { GIT_AUTHOR_NAME: 'Demo', GIT_AUTHOR_EMAIL: 'demo@example.invalid', GIT_COMMITTER_NAME: 'Demo', GIT_COMMITTER_EMAIL: 'demo@example.invalid' };
const words = (argv) => argv.map((w) => JSON.stringify(w)).join(' ');
const fake = (as, mode, extra = []) => words([process.execPath, FAKE, '--as', as, '--mode', mode, ...extra]);

/** The plan of the issue, with a task the reviewer refuses and one that needs it. */
const ENDED = `title: Email validation for signup
max_parallel: 2
defaults: { creator: claude, reviewers: [codex], max_loop: 2 }
tasks:
  - id: validate
    task: Add validate(email) to src/signup.js, with a test
  - id: errors
    task: "Make signup() return { ok: false, error } for invalid input"
  - id: docs
    task: Document validate() in README.md
    needs: [validate, errors]
  - id: styles
    task: Style the error message in the form
    reviewers: [${JSON.stringify({ agent: 'shell', command: fake('codex', 'reviewer', ['--verdicts', 'NOT PASS']) })}]
    max_loop: 1
  - id: banner
    task: Show a banner after a valid signup
    needs: [styles]
`;

/** A plan whose first task works on and on: running while the window looks, the second waiting for it. */
const RUNNING = `title: Checkout flow
defaults: { creator: ${JSON.stringify({ agent: 'shell', command: fake('claude', 'heartbeats') })}, reviewers: [codex] }
tasks:
  - id: cart
    task: Keep the cart across sessions
  - id: pay
    task: Pay with a saved card
    needs: [cart]
`;

/** run.mjs options for the plan page opened with `--webview-selector .plan-grid`. */
const PAGE_CHECKS = [
  // Each task in its state, the critical path into docs, the edges of needs, dashed where the need did not land.
  '--webview-expect', 'button.plan-node.pass[data-task="validate"]',
  '--webview-expect', 'button.plan-node.pass.critical[data-task="docs"]',
  '--webview-expect', 'button.plan-node.fail[data-task="styles"]',
  '--webview-expect', 'div.plan-node.warn[data-task="banner"][data-state="blocked"]',
  '--webview-expect', '.plan-edge.critical[data-to="docs"]',
  '--webview-expect', '.plan-edge[data-from="validate"][data-to="docs"]',
  '--webview-expect', '.plan-edge[data-from="errors"][data-to="docs"]',
  '--webview-expect', '.plan-edge.waiting[data-from="styles"][data-to="banner"]',
  '--webview-expect', '!.plan-edge.waiting[data-to="docs"]',
  '--webview-expect', '.legend:has-text("Critical path:")',
  '--webview-expect', '.plan-table tr[data-task="banner"]:has-text("needs styles, which failed")',
  ...['Light Modern', 'Dark Modern', 'Dark High Contrast', 'Light High Contrast'].flatMap((t) => ['--theme', t]),
  // Pills, the button, card text, secondary text, the task list's links.
  ...['.pill', 'button.secondary', 'h1, .node-id, .node-task, .facts dd, .plan-table td', '.node-detail, .facts dt, .legend, .plan-table thead th', '.plan-table a'].flatMap((s) => ['--contrast', s]),
  // A click on a task opens its loop's report (the page asks; the extension checks the loop is the plan's).
  '--webview-click', 'button.plan-node[data-task="docs"]::.timeline',
];

/**
 * Builds a project under `base`, runs its plans with the CLI `cli`, and runs the UI check
 * (scripts/vscode/run.mjs ui, with `vsix` when given); returns its exit code. Everything it starts
 * (the running plan's runner, agents, the broker) is stopped before it returns.
 */
export async function plansCheck({ base, cli, vsix, out }) {
  const ws = path.join(base, 'signup');
  const home = path.join(base, 'home');
  const tmuxDir = path.join(base, 'tmux');
  for (const d of [ws, home, tmuxDir]) fs.mkdirSync(d, { recursive: true });
  const env = {
    ...process.env, ...GIT_ENV, HOME: home, TMUX_TMPDIR: tmuxDir, MAM_START_TIMEOUT_S: '20',
    // claude is the scripted creator (each task's work in a file named after its worktree), codex the scripted reviewer.
    MAM_AGENT_COMMAND_CLAUDE: fake('claude', 'creator', ['--file', '@cwd']),
    MAM_AGENT_COMMAND_CODEX: fake('codex', 'reviewer'),
  };
  delete env.MAM_TMUX_SERVER;
  execFileSync('git', ['init', '-q', '-b', 'main', ws]);
  fs.writeFileSync(path.join(ws, 'README.md'), '# signup\n');
  fs.writeFileSync(path.join(ws, '.gitignore'), '.mam/\n.mam.env\n');
  execFileSync('git', ['add', '-A'], { cwd: ws, env });
  execFileSync('git', ['commit', '-q', '-m', 'initial'], { cwd: ws, env });
  fs.mkdirSync(path.join(ws, 'plans'));
  fs.writeFileSync(path.join(ws, 'plans', 'signup.yaml'), ENDED);
  fs.writeFileSync(path.join(ws, 'plans', 'checkout.yaml'), RUNNING);
  const envFile = path.join(base, 'env.json');
  fs.writeFileSync(envFile, JSON.stringify({ HOME: home, TMUX_TMPDIR: tmuxDir, MAM_AGENT_COMMAND_CLAUDE: env.MAM_AGENT_COMMAND_CLAUDE, MAM_AGENT_COMMAND_CODEX: env.MAM_AGENT_COMMAND_CODEX }));
  const mam = (...args) => spawnSync(process.execPath, [cli, ...args, '--workspace', ws], { cwd: ws, env, encoding: 'utf8' });
  const run = (...args) => spawnSync(process.execPath, [path.join(ROOT, 'scripts/vscode/run.mjs'), ...args], { stdio: 'inherit', cwd: ROOT }).status;

  let code = 1;
  let runner;
  try {
    // Three tasks land, one is refused, one is blocked: exit 1.
    const ended = mam('plan', 'run', 'plans/signup.yaml', '--json');
    if (ended.status !== 1) throw new Error(`mam plan run plans/signup.yaml exited ${ended.status}, not 1: ${ended.stderr}`);
    const states = JSON.parse(ended.stdout).tasks.map((t) => `${t.id} ${t.state}`).join(', ');
    if (states !== 'validate landed, errors landed, docs landed, styles failed, banner blocked') throw new Error(`the ended plan: ${states}`);
    // The second plan runs while the window looks (its runner in the background), until it is cancelled below.
    runner = spawn(process.execPath, [cli, 'plan', 'run', 'plans/checkout.yaml', '--workspace', ws], { cwd: ws, env, stdio: 'ignore' });
    code = run('ui', ...(vsix ? ['--vsix', vsix] : []), '--workspace', ws, '--env-file', envFile, '--open-view', 'mam',
      ...['Sessions', 'Jobs', 'Loops', 'Merge Queue'].flatMap((v) => ['--collapse-view', v]), '--expand-view', 'Plans',
      '--expect', 'Email validation for signup', '--expect', 'Checkout flow', '--expect', 'failed · 3 of 5 landed', '--expect', 'running · review loop',
      '--expect', 'pending · after cart', '--expect', 'blocked · needs styles, which failed', '--expect', '1 plan task',
      '--shot', path.join(out, 'plans-sidebar.png'), '--view-shot', `Plans::${path.join(out, 'plans.png')}`, '--shot-theme', 'Dark Modern', '--shot-theme', 'Dark High Contrast',
      '--command', 'mam.openPlan', '--pick', 'Email validation for signup', '--webview-selector', '.plan-grid', '--webview-shot', path.join(out, 'plan.png'), ...PAGE_CHECKS);
  } catch (err) {
    console.error(`[ui] plans: ${err.message}`);
    code = 1;
  } finally {
    if (fs.existsSync(path.join(ws, '.mam', 'plans'))) {
      for (const plan of JSON.parse(mam('plan', 'list', '--json').stdout).plans) if (plan.status === 'running') mam('plan', 'cancel', plan.id);
    }
    // The cancelled plan's runner sees it and ends; one that does not within the bound is killed.
    if (runner && runner.exitCode === null && runner.signalCode === null) {
      const gone = new Promise((resolve) => runner.once('exit', resolve));
      const bound = new Promise((resolve) => setTimeout(() => resolve('timeout'), 30_000).unref());
      if ((await Promise.race([gone, bound])) === 'timeout') {
        console.error('[ui] plans: the cancelled plan\'s runner did not end within 30 s; killed');
        runner.kill('SIGKILL');
        code = 1;
      }
    }
    if (fs.existsSync(path.join(ws, '.mam'))) {
      for (const job of JSON.parse(mam('job', 'list', '--json').stdout)) if (['registered', 'dispatched', 'started'].includes(job.state)) mam('job', 'cancel', job.id);
      const servers = new Set(JSON.parse(mam('session', 'list', '--json').stdout).map((s) => s.server));
      for (const server of servers) spawnSync('tmux', ['-L', server, 'kill-server'], { env });
      mam('broker', 'stop');
    }
  }
  return code;
}

// Run alone: this repository's build, screenshots in test-output/.
if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-ui-plans-'));
  const out = path.join(ROOT, 'test-output');
  fs.mkdirSync(out, { recursive: true });
  let code;
  try {
    code = await plansCheck({ base, cli: path.join(ROOT, 'dist/cli.js'), out });
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
  process.exit(code);
}
