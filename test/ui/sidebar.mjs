#!/usr/bin/env node
// The UI check: a workspace with live sessions and jobs in every state, opened in a real VS Code in
// a real browser; the sidebar and the status bar must show them (checked in the page, not by
// eye), and both are screenshot to test-output/ (sidebar.png, statusbar.png; report.png, the review
// report webview of a loop with its timeline, then in four themes with its text contrast measured,
// test/ui/reportChecks.mjs; untrusted.png for a workspace that is not trusted; multiroot.png and
// its dark themes for a multi-root window, test/ui/multiRoot.mjs; plans.png and plan.png, the Plans
// view and a plan's page, in their themes, test/ui/plans.mjs).
//
// It runs what a user installs: the VSIX that `npm run package` makes, installed as `code
// --install-extension` does, and the `mam` CLI from inside it — no node_modules next to it.
//
//   node test/ui/sidebar.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installVsix } from '../../scripts/vscode/install.mjs';
import { addHostileReport, REPORT_CHECKS } from './reportChecks.mjs';
import { multiRootCheck } from './multiRoot.mjs';
import { plansCheck } from './plans.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FAKE = path.join(ROOT, 'test/fixtures/fake-agent.js');
const OUT = path.join(ROOT, 'test-output');
fs.mkdirSync(OUT, { recursive: true });

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-ui-'));
const ws = path.join(base, 'my-project');
const home = path.join(base, 'home');
const tmuxDir = path.join(base, 'tmux');
for (const d of [ws, home, tmuxDir]) fs.mkdirSync(d, { recursive: true });
const vsix = path.join(base, 'multi-agent-mux.vsix');
let CLI;
try {
  const packaged = spawnSync(process.execPath, [path.join(ROOT, 'scripts/package.mjs'), '--out', vsix], { cwd: ROOT, encoding: 'utf8' });
  if (packaged.status !== 0) throw new Error(`vsce package failed (${packaged.status}): ${packaged.stdout}${packaged.stderr}`);
  CLI = path.join(installVsix(vsix, path.join(base, 'extensions'), path.join(base, 'vsix-install')), 'dist/cli.js');
} catch (err) {
  console.error(`[ui] ${err.message}`);
  fs.rmSync(base, { recursive: true, force: true });
  process.exit(3);
}
const GIT_ENV = { GIT_AUTHOR_NAME: 'Demo', GIT_AUTHOR_EMAIL: 'demo@example.invalid', GIT_COMMITTER_NAME: 'Demo', GIT_COMMITTER_EMAIL: 'demo@example.invalid' };
const env = { ...process.env, ...GIT_ENV, HOME: home, TMUX_TMPDIR: tmuxDir, MAM_TMUX_SERVER: `mam-ui-${process.pid}`, MAM_START_TIMEOUT_S: '20' };
execFileSync('git', ['init', '-q', ws]);
fs.writeFileSync(path.join(ws, 'feature.txt'), 'the start\n');
fs.writeFileSync(path.join(ws, '.gitignore'), '.mam/\n.mam.env\n');
execFileSync('git', ['add', '-A'], { cwd: ws, env });
execFileSync('git', ['commit', '-q', '-m', 'initial'], { cwd: ws, env });
const envFile = path.join(base, 'env.json');
fs.writeFileSync(envFile, JSON.stringify({ HOME: home, TMUX_TMPDIR: tmuxDir, MAM_TMUX_SERVER: env.MAM_TMUX_SERVER }));

const mam = (...args) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ws, env, encoding: 'utf8' });
  if (r.status !== 0 && !args.includes('--allow-fail')) throw new Error(`mam ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
};
const agent = (name, role, mode, extra = [], cwd = ws) =>
  mam('session', 'create', '--agent', 'claude', '--name', name, '--role', role, '--cwd', cwd, '--command', [process.execPath, FAKE, '--as', 'claude', '--mode', mode, ...extra].map((w) => JSON.stringify(w)).join(' '));
const run = (...args) => spawnSync(process.execPath, [path.join(ROOT, 'scripts/vscode/run.mjs'), ...args], { stdio: 'inherit', cwd: ROOT }).status;

/**
 * What the installed extension runs besides its CLI: `mam mcp` (the server it offers to agent
 * mode) answers `tools/list`, and the seeds' `multi-agent-mux-delegate-job` answers. Their bundles
 * were once left out of the VSIX while the development build worked.
 */
function checkInstalledBundles() {
  const requests = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ui-check', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ];
  const r = spawnSync(process.execPath, [CLI, 'mcp', '--workspace', ws], { cwd: ws, env, encoding: 'utf8', input: requests.map((m) => JSON.stringify(m)).join('\n') + '\n', timeout: 30_000 });
  const listed = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((m) => m.id === 2);
  if (!listed?.result?.tools?.some((t) => t.name === 'job_submit')) throw new Error(`the installed extension's mam mcp did not list its tools (exit ${r.status}): ${r.stderr}${r.stdout}`);
  const seeds = spawnSync(process.execPath, [path.join(path.dirname(CLI), 'delegate-job.js'), '--help'], { cwd: ws, env, encoding: 'utf8' });
  if (seeds.status !== 0) throw new Error(`the installed multi-agent-mux-delegate-job --help exited ${seeds.status}: ${seeds.stderr}`);
  console.log(`[ui] installed: mam mcp lists ${listed.result.tools.length} tools; multi-agent-mux-delegate-job answers`);
}

let code = 1;
try {
  checkInstalledBundles();
  agent('creator-1', 'creator', 'work');
  agent('reviewer-1', 'reviewer', 'heartbeats');
  agent('tester-1', 'worker', 'permission', ['--work-ms', '600000']);
  agent('breaker-1', 'worker', 'error');
  // An agent waiting on a first-run screen (claude's warning, as the fake agent plays it): kept, needs attention.
  const blocked = spawnSync(process.execPath, [CLI, 'session', 'create', '--agent', 'claude', '--name', 'docs-1', '--role', 'worker', '--command', [process.execPath, FAKE, '--as', 'claude', '--dialog', 'WARNING: Claude Code running in Bypass Permissions mode'].map((w) => JSON.stringify(w)).join(' ')], { cwd: ws, env, encoding: 'utf8' });
  if (blocked.status !== 4) throw new Error(`session create for a blocked agent exited ${blocked.status}, not 4: ${blocked.stderr}`);
  mam('job', 'submit', '--session', 'creator-1', '--prompt', 'Add input validation to the signup form');
  mam('job', 'submit', '--session', 'reviewer-1', '--prompt', 'Review the payment retry logic', '--no-wait');
  mam('job', 'submit', '--session', 'tester-1', '--prompt', 'Clean the build folder and rerun the e2e tests', '--no-wait');
  spawnSync(process.execPath, [CLI, 'job', 'submit', '--session', 'breaker-1', '--prompt', 'Migrate the database to v2'], { cwd: ws, env });
  mam('session', 'stop', 'breaker-1');
  agent('loop-creator', 'creator', 'creator');
  agent('loop-reviewer', 'reviewer', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
  mam('loop', '--task', 'Validate the signup form input', '--creator', 'loop-creator', '--reviewer', 'loop-reviewer');
  addHostileReport(ws);
  // Two worktrees of the project: a branch whose loop passed, waiting in the merge queue, and another
  // agent's uncommitted edit to the same lines — a conflict predicted before either of them merges.
  const worktree = (branch) => {
    const dir = path.join(base, branch);
    execFileSync('git', ['worktree', 'add', '-q', '-b', branch, dir], { cwd: ws, env });
    return dir;
  };
  const formTree = worktree('signup-form');
  const apiTree = worktree('signup-api');
  agent('form-creator', 'creator', 'creator', [], formTree);
  agent('form-reviewer', 'reviewer', 'reviewer', [], formTree);
  mam('loop', '--task', 'Add the signup form', '--creator', 'form-creator', '--reviewer', 'form-reviewer', '--worktree', formTree);
  mam('merge', 'enqueue', formTree, '--validate', 'npm test');
  fs.writeFileSync(path.join(apiTree, 'feature.txt'), 'the start\nthe signup API\n');
  agent('api-1', 'creator', 'work', [], apiTree);
  // A task for a person: started and completed from its row in the Jobs tree, as its assignee does.
  const person = JSON.parse(mam('job', 'submit', '--session', 'human:dana', '--prompt', 'Proofread the changelog', '--no-wait', '--json').stdout);

  code = run('ui', '--vsix', vsix, '--workspace', ws, '--env-file', envFile, '--open-view', 'mam',
    '--expect', 'creator-1', '--expect', 'reviewer-1', '--expect', 'tester-1', '--expect', 'breaker-1', '--expect', 'docs-1',
    '--expect', 'Needs attention', '--expect', 'Running', '--expect', 'Failed and timed out', '--expect', 'Completed',
    '--expect', 'Review the payment retry logic', '--expect', 'Validate the signup form input', '--expect', 'Proofread the changelog',
    '--expect', 'running · conflict', '--expect', 'signup-form',
    '--shot', path.join(OUT, 'sidebar.png'), '--status-shot', path.join(OUT, 'statusbar.png'),
    // The review report of that loop, with its timeline.
    '--command', 'mam.openReport', '--pick', 'Validate the signup form input', '--webview-selector', '.timeline', '--webview-shot', path.join(OUT, 'report.png'), ...REPORT_CHECKS,
    '--row-action', 'Proofread the changelog::Start Task', '--row-action', 'Proofread the changelog::Complete Task::three typos fixed');
  if (code === 0) {
    const { job: done } = JSON.parse(mam('job', 'status', person.id, '--json').stdout);
    if (done.state !== 'completed' || done.detail !== 'three typos fixed') {
      console.error(`[ui] the person's task, started and completed from the Jobs tree, is ${done.state} (${JSON.stringify(done.detail)}), not completed ("three typos fixed")`);
      code = 1;
    } else console.log(`[ui] the person's task ${person.id}: started and completed from its row in the Jobs tree`);
  }
  if (code === 0) {
    // An untrusted workspace: nothing is started, and the view says why.
    const untrusted = path.join(base, 'untrusted');
    fs.mkdirSync(path.join(untrusted, '.mam'), { recursive: true });
    code = run('ui', '--vsix', vsix, '--trust', '--workspace', untrusted, '--env-file', envFile, '--open-view', 'mam', '--expect', 'not trusted', '--shot', path.join(OUT, 'untrusted.png'));
  }
  if (code === 0) {
    // A multi-root window: two folders using MAM, each under its own row, and one that does not.
    const multiRoot = path.join(base, 'multi-root');
    fs.mkdirSync(multiRoot);
    code = multiRootCheck({ base: multiRoot, cli: CLI, vsix, out: OUT });
  }
  if (code === 0) {
    // Plans: one ended, one running; the Plans view and a plan's page.
    const plans = path.join(base, 'plans');
    fs.mkdirSync(plans);
    code = await plansCheck({ base: plans, cli: CLI, vsix, out: OUT });
  }
} finally {
  for (const job of JSON.parse(mam('job', 'list', '--json').stdout)) if (['registered', 'dispatched', 'started'].includes(job.state)) mam('job', 'cancel', job.id);
  mam('broker', 'stop');
  spawnSync('tmux', ['-L', env.MAM_TMUX_SERVER, 'kill-server'], { env });
  fs.rmSync(base, { recursive: true, force: true });
}
process.exit(code);
