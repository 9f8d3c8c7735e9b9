#!/usr/bin/env node
/**
 * Runs the extension in a real VS Code: code-server 4.103.2 on Node.js 22 (scripts/vscode/install.mjs
 * puts both in .cache/) driven by Debian's headless Chromium through playwright-core.
 *
 *   node scripts/vscode/run.mjs test --tests out/test/vscode/suite/index.js [options]
 *       Opens the workbench with this repository as the extension under development and the tests
 *       entry as extensionTestsPath; exits with the tests' code and prints the results the suite
 *       writes to $MAM_VSCODE_TEST_RESULTS.
 *     --grep PATTERN       only tests whose full title matches (mocha grep; env MAM_VSCODE_GREP)
 *     --file NAME          only NAME.test.js from the suite folder (env MAM_VSCODE_FILE)
 *     --timeout S          seconds the tests may take from opening the page (default 300)
 *
 *   node scripts/vscode/run.mjs ui --shot out.png [options]
 *       Opens the workbench with the extension loaded and screenshots it.
 *     --expect TEXT        (repeatable) wait until TEXT is visible in the side bar or the status bar
 *                          (rows of the views, their descriptions, the status-bar items); fails if not
 *                          within 30 s
 *     --status-shot F      also screenshot the status bar alone to F
 *     --collapse-view NAME (repeatable) after --open-view, collapse the side-bar view titled NAME (as
 *                          package.json names it), so that the others get its room
 *     --expand-view NAME   (repeatable) then expand the side-bar view titled NAME (one that starts
 *                          collapsed, as Plans does)
 *     --view-shot NAME::F  (repeatable) also screenshot the side-bar view titled NAME alone (its header
 *                          and rows) to F, and again in each --shot-theme (F named with the theme)
 *     --shot-theme LABEL   (repeatable) then switch to the colour theme LABEL (as Preferences: Color
 *                          Theme lists it), wait until the workbench shows it, and take the shot
 *                          again, named with the theme (sidebar.png → sidebar.dark-high-contrast.png)
 *     --open-view ID       click the activity-bar entry of view container ID (package.json
 *                          viewsContainers) and wait until each of its views shows rows or its
 *                          welcome text and nothing in it is loading; fails if not within 30 s
 *     --palette LABEL      after the shot, run the command the Command Palette lists as LABEL (VS Code's
 *                          own too, e.g. "MCP: List Servers"), then screenshot to --palette-shot F
 *     --palette-expect T   (repeatable) before that shot, the quick pick it opened must list a row
 *                          holding T; fails if not within 30 s. Escape closes it afterwards
 *     --command ID         after the shot, run command ID through the command palette (found by its
 *                          package.json title), e.g. one that opens a webview
 *     --pick TEXT          then answer the quick pick the command opened: click the row holding TEXT
 *     --webview-shot F     then wait for a webview whose content matches --webview-selector (default
 *                          `body *`) in the page's nested frames, print its text, screenshot to F
 *     --theme LABEL        (repeatable) after the webview shot, switch to the colour theme LABEL (as
 *                          Preferences: Color Theme lists it, e.g. "Light Modern", "Dark High Contrast"),
 *                          wait until the webview shows it, and screenshot it again to the webview
 *                          shot's name plus the theme (report.png → report.light-modern.png)
 *     --webview-click SEL::EXPECT (repeatable, in order) after the webview checks: click the element
 *                          SEL matches in the webview, as a person would, then wait for a webview
 *                          (the same or another) showing EXPECT; fails (exit 1) if none does in 30 s
 *     --webview-expect SEL (repeatable) after the webview shot, SEL (a Playwright selector, so
 *                          `:has-text("…")` works) must match in the webview, or with a leading `!` must
 *                          not; fails (exit 1) otherwise
 *     --contrast SEL       (repeatable) in the webview, in each theme (or the current one): measure
 *                          the text contrast of every element SEL matches (computed colours over what
 *                          is behind them); fail (exit 1) below 4.5:1, when SEL matches nothing, or
 *                          for a button without a border in a high-contrast theme (scripts/vscode/contrast.mjs)
 *     --row-action R::A[::T] (repeatable, in order) after the shots: hover the side-bar tree row whose
 *                          text holds R, click its inline action titled A, and, when T is given,
 *                          answer the input box that opens with T (then Enter)
 *
 *     --vsix FILE          run this packaged extension, installed into the run's extensions folder as
 *                          `code --install-extension` would, instead of the repository under development
 *
 *   Both:
 *     --workspace PATH     the folder to open, or a multi-root `.code-workspace` file (default: a new
 *                          temp folder holding an empty .mam/)
 *     --multi-root         the default workspace is a multi-root window instead: a .code-workspace
 *                          file naming three git repositories, api and web (each holding an empty
 *                          .mam/) and docs (without one); the server gets MAM_VSCODE_WINDOW=multi-root
 *     --env-file F         a JSON object of extra environment variables for the server, and so for
 *                          the extension host and the tests (e.g. the outer mocha run's HOME,
 *                          TMUX_TMPDIR and MAM_TEST_RUN marker)
 *     --trust              keep Workspace Trust on: the folder opens untrusted (restricted mode, no
 *                          prompt) and the server gets MAM_VSCODE_TRUST=untrusted; otherwise trust is
 *                          disabled and every folder counts as trusted
 *     --keep               keep the run folder (server log, settings, profile) and print its path
 *     --verbose            print every browser console line and the server log
 *
 * Each run gets a free 127.0.0.1 port (the server binds port 0), a temp folder with throwaway user
 * data, extensions, HOME, TMPDIR, XDG folders and TMUX_TMPDIR (the env file may override those),
 * and a server in its own process group that is killed as a whole at the end or on SIGINT/SIGTERM.
 * Every process the run starts carries MAM_VSCODE_RUN=<id> in its environment. A daemon that left
 * the group (the embedded broker outlives VS Code by design) gets 5 s to stop on its own once the
 * harness's temp workspace is gone; whatever is still alive then is killed and listed, and in test
 * mode fails the run: tests that start daemons in a --workspace folder stop them themselves.
 *
 * The server is code-server's own CLI: VS Code 1.103.2's web workbench honours the test payload
 * as it is. (Much newer VS Code — 1.139 — only does with its bundled lib/vscode/out/server-main.js
 * started with --enable-smoke-test-driver, a flag code-server's CLI rejects.)
 *
 * Exit codes: 0 passed; 1 tests failed; 2 no result within the bound; 3 the harness failed (server,
 * browser, or a UI wait); 4 the tests passed but left processes behind; 64 bad arguments.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { CHROMIUM, CODE_SERVER_NODE, CODE_SERVER_PKG, REPO_ROOT, codeServerInstalled, installVsix, resolvePlaywright } from './install.mjs';
import { MARKER, killGroup, killMarked, markedProcesses, waitForHttp, waitForLine, waitUntil, withTimeout } from './processes.mjs';
import { QUIET_SETTINGS } from './settings.mjs';
import { answerPick, clickRowAction, expectPickRows, expectVisible, openViewContainer, runCommand, runPaletteCommand, setViewExpanded, viewPane, waitForWebview } from './workbench.mjs';
import { measureContrast, pickColorTheme, webviewFrame } from './contrast.mjs';

const RUN_PREFIX = 'mam-vscode-';
const EXIT = { pass: 0, fail: 1, timeout: 2, harness: 3, leftovers: 4, usage: 64 };
const log = (line) => console.log(`[vscode] ${line}`);
// Set by SIGINT/SIGTERM: the handler cleans up and exits; the main flow must not report what the cleanup breaks.
let stopping = false;
const stopped = () => new Promise(() => {});

class HarnessError extends Error {
  constructor(message, code = EXIT.harness) {
    super(message);
    this.code = code;
  }
}

function options() {
  const usage = 'usage: run.mjs test --tests FILE | ui --shot FILE [options] (see the top of scripts/vscode/run.mjs)';
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        tests: { type: 'string' },
        grep: { type: 'string' },
        file: { type: 'string' },
        timeout: { type: 'string', default: '300' },
        shot: { type: 'string' },
        'open-view': { type: 'string' },
        command: { type: 'string' },
        palette: { type: 'string' },
        'palette-shot': { type: 'string' },
        'palette-expect': { type: 'string', multiple: true },
        'webview-shot': { type: 'string' },
        'webview-selector': { type: 'string', default: 'body *' },
        expect: { type: 'string', multiple: true },
        'row-action': { type: 'string', multiple: true },
        pick: { type: 'string' },
        theme: { type: 'string', multiple: true },
        contrast: { type: 'string', multiple: true },
        'webview-expect': { type: 'string', multiple: true },
        'status-shot': { type: 'string' },
        'collapse-view': { type: 'string', multiple: true },
        'expand-view': { type: 'string', multiple: true },
        'view-shot': { type: 'string', multiple: true },
        'webview-click': { type: 'string', multiple: true },
        'shot-theme': { type: 'string', multiple: true },
        workspace: { type: 'string' },
        'multi-root': { type: 'boolean', default: false },
        'env-file': { type: 'string' },
        trust: { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
        vsix: { type: 'string' },
        verbose: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    throw new HarnessError(`${err.message}\n${usage}`, EXIT.usage);
  }
  const { values, positionals } = parsed;
  const mode = positionals[0];
  if (positionals.length !== 1 || (mode !== 'test' && mode !== 'ui')) throw new HarnessError(usage, EXIT.usage);
  if (mode === 'test' && !values.tests) throw new HarnessError('test mode needs --tests <compiled tests entry>', EXIT.usage);
  for (const spec of values['row-action'] ?? []) {
    const parts = spec.split('::');
    if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) throw new HarnessError(`--row-action ${spec}: expected ROW::ACTION or ROW::ACTION::INPUT`, EXIT.usage);
  }
  for (const [option, spec] of [...(values['view-shot'] ?? []).map((v) => ['--view-shot', v]), ...(values['webview-click'] ?? []).map((v) => ['--webview-click', v])]) {
    const parts = spec.split('::');
    if (parts.length !== 2 || parts.some((p) => p === '')) throw new HarnessError(`${option} ${spec}: expected two parts separated by ::`, EXIT.usage);
  }
  if (values['webview-click'] && !values['webview-shot']) throw new HarnessError('--webview-click needs --webview-shot', EXIT.usage);
  if (mode === 'ui' && !values.shot) throw new HarnessError('ui mode needs --shot <file.png>', EXIT.usage);
  if ((values.theme || values.contrast || values['webview-expect']) && !values['webview-shot']) throw new HarnessError('--theme, --contrast and --webview-expect need --webview-shot', EXIT.usage);
  if (values.pick && !values.command) throw new HarnessError('--pick needs --command', EXIT.usage);
  if (Boolean(values.palette) !== Boolean(values['palette-shot']) || (values['palette-expect'] && !values.palette)) throw new HarnessError('--palette needs --palette-shot (and --palette-expect needs --palette)', EXIT.usage);
  const timeoutS = Number(values.timeout);
  if (!(timeoutS > 0)) throw new HarnessError(`--timeout must be a positive number of seconds, not ${values.timeout}`, EXIT.usage);
  let extraEnv = {};
  if (values['env-file']) {
    try {
      extraEnv = JSON.parse(fs.readFileSync(values['env-file'], 'utf8'));
    } catch (err) {
      throw new HarnessError(`--env-file: ${err.message}`, EXIT.usage);
    }
    if (typeof extraEnv !== 'object' || extraEnv === null || Array.isArray(extraEnv) || Object.values(extraEnv).some((v) => typeof v !== 'string')) {
      throw new HarnessError(`${values['env-file']} must hold a JSON object of strings`, EXIT.usage);
    }
  }
  if (values['multi-root'] && values.workspace) throw new HarnessError('--multi-root makes its own workspace: give it or --workspace, not both', EXIT.usage);
  if (values.vsix && mode !== 'ui') throw new HarnessError('--vsix is for ui mode: extension tests run the repository under development', EXIT.usage);
  if (values.vsix && !fs.existsSync(values.vsix)) throw new HarnessError(`--vsix ${values.vsix} does not exist (npm run package makes one)`, EXIT.usage);
  const tests = values.tests && path.resolve(values.tests);
  if (tests && !fs.existsSync(tests)) throw new HarnessError(`${tests} does not exist (build the tests first: node scripts/vscode/build-tests.mjs)`, EXIT.usage);
  return { mode, ...values, tests, timeoutMs: timeoutS * 1000, extraEnv };
}

// ---------------------------------------------------------------------------------------------
// The run: a temp folder, the server, the browser, and one cleanup that undoes all three.

class Run {
  constructor(opts) {
    this.opts = opts;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), RUN_PREFIX));
    this.id = path.basename(this.dir).slice(RUN_PREFIX.length);
    fs.writeFileSync(path.join(this.dir, 'owner'), String(process.pid)); // see sweepAbandonedRuns
    this.resultsFile = path.join(this.dir, 'test-results.json');
    this.serverLog = path.join(this.dir, 'server.log');
    this.server = undefined;
    this.context = undefined;
    this.cleaning = undefined;
  }

  prepare() {
    for (const name of ['user-data/User', 'extensions', 'home', 'tmp', 'xdg-config', 'xdg-data', 'xdg-state', 'xdg-cache', 'tmux', 'chromium']) {
      fs.mkdirSync(path.join(this.dir, name), { recursive: true, mode: 0o700 });
    }
    const settings = { ...QUIET_SETTINGS, 'security.workspace.trust.startupPrompt': 'never' };
    fs.writeFileSync(path.join(this.dir, 'user-data/User/settings.json'), JSON.stringify(settings, null, 2));
    // The folder the harness made, removed at the end (so the embedded brokers in it stop).
    this.madeDir = undefined;
    if (this.opts.workspace) {
      this.workspace = path.resolve(this.opts.workspace);
      const stat = fs.statSync(this.workspace, { throwIfNoEntry: false });
      const ok = this.workspace.endsWith('.code-workspace') ? stat?.isFile() : stat?.isDirectory();
      if (!ok) throw new HarnessError(`--workspace ${this.workspace} is not a folder or a .code-workspace file`, EXIT.usage);
    } else if (this.opts['multi-root']) {
      this.madeDir = path.join(this.dir, 'workspace');
      this.workspace = makeMultiRoot(this.madeDir);
    } else {
      this.madeDir = this.workspace = path.join(this.dir, 'workspace');
      fs.mkdirSync(path.join(this.workspace, '.mam'), { recursive: true });
    }
  }

  /** The server's environment, inherited by the extension host and so by the tests. */
  serverEnv() {
    const env = { ...process.env };
    for (const key of Object.keys(env)) {
      if (key === 'TMUX' || key === 'TMUX_PANE' || key.startsWith('MQTT_') || key.startsWith('MAM_WORKSPACE') || key.startsWith('VSCODE_')) delete env[key];
    }
    Object.assign(
      env,
      {
        HOME: path.join(this.dir, 'home'),
        TMPDIR: path.join(this.dir, 'tmp'),
        XDG_CONFIG_HOME: path.join(this.dir, 'xdg-config'),
        XDG_DATA_HOME: path.join(this.dir, 'xdg-data'),
        XDG_STATE_HOME: path.join(this.dir, 'xdg-state'),
        XDG_CACHE_HOME: path.join(this.dir, 'xdg-cache'),
        TMUX_TMPDIR: path.join(this.dir, 'tmux'),
      },
      this.opts.extraEnv,
      {
        [MARKER]: this.id,
        EXTENSIONS_GALLERY: '{}', // no marketplace: code-server would query open-vsx.org
        MAM_VSCODE_TEST_RESULTS: this.resultsFile,
        MAM_VSCODE_TRUST: this.opts.trust ? 'untrusted' : 'disabled',
        MAM_VSCODE_WINDOW: this.workspace.endsWith('.code-workspace') ? 'multi-root' : 'folder',
      },
    );
    for (const key of ['MAM_VSCODE_GREP', 'MAM_VSCODE_FILE']) delete env[key];
    if (this.opts.grep) env.MAM_VSCODE_GREP = this.opts.grep;
    if (this.opts.file) env.MAM_VSCODE_FILE = this.opts.file;
    return env;
  }

  async startServer() {
    if (this.opts.vsix) log(`installed ${this.opts.vsix} as ${path.basename(installVsix(path.resolve(this.opts.vsix), path.join(this.dir, 'extensions'), path.join(this.dir, 'vsix-install')))}`);
    const args = [
      path.join(CODE_SERVER_PKG, 'out/node/entry.js'),
      // Port 0: the server binds a free port itself and logs it. Picking one for it would leave a
      // moment in which a concurrent run could take the same port and answer our readiness probe.
      '--bind-addr', '127.0.0.1:0',
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-getting-started-override',
      '--disable-file-downloads',
      '--ignore-last-opened',
      '--user-data-dir', path.join(this.dir, 'user-data'),
      '--extensions-dir', path.join(this.dir, 'extensions'),
      ...(this.opts.trust ? [] : ['--disable-workspace-trust']),
    ];
    const out = fs.openSync(this.serverLog, 'a');
    // detached: the server leads a new process group, so one kill reaches its watchers and extension hosts.
    // code-server needs Node 22 (install.mjs); the extension host it starts inherits that Node.
    this.server = spawn(CODE_SERVER_NODE, args, { cwd: this.dir, env: this.serverEnv(), detached: true, stdio: ['ignore', out, out] });
    fs.closeSync(out);
    this.serverExit = new Promise((resolve) => this.server.once('exit', (code, signal) => resolve(`the server exited (${signal ?? code})`)));
    this.server.once('error', (err) => log(`server spawn failed: ${err.message}`));
    const listening = await Promise.race([waitForLine(this.serverLog, /HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)\//, 60_000), this.serverExit]);
    if (!Array.isArray(listening)) throw new HarnessError(`code-server did not come up: ${listening}\n${tail(this.serverLog)}`);
    this.port = Number(listening[1]);
    const ready = await Promise.race([waitForHttp(`http://127.0.0.1:${this.port}/healthz`, 30_000), this.serverExit]);
    if (ready !== true) throw new HarnessError(`code-server did not answer: ${ready}\n${tail(this.serverLog)}`);
  }

  async openBrowser() {
    // playwright-core makes its temp folders in this process's os.tmpdir() and may not have removed
    // them when we exit: put them in the run folder.
    process.env.TMPDIR = path.join(this.dir, 'tmp');
    const { chromium } = await import('playwright-core');
    const profile = path.join(this.dir, 'chromium');
    this.context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 900 },
      timeout: 60_000,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      // Chromium writes to ~/.config/chromium unless told otherwise.
      env: { ...process.env, HOME: path.join(this.dir, 'home'), XDG_CONFIG_HOME: profile, XDG_CACHE_HOME: profile, [MARKER]: this.id },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    this.page = this.context.pages()[0] ?? (await this.context.newPage());
    this.page.on('console', (m) => {
      const text = m.text();
      const at = text.indexOf('[mam-vscode]');
      if (at >= 0) console.log(text.slice(at).replace(/%c/g, ''));
      else if (this.opts.verbose) console.log(`[browser ${m.type()}] ${text.slice(0, 500)}`);
    });
    this.page.on('pageerror', (e) => this.opts.verbose && console.log(`[pageerror] ${e}`));
    let exited;
    this.automationExit = new Promise((resolve) => (exited = resolve));
    // The workbench calls this when the extension tests finish (must exist before the page loads).
    await this.page.exposeFunction('codeAutomationExit', (code) => exited(Number(code)));
  }

  url(withTests) {
    const remote = (p) => `vscode-remote://127.0.0.1:${this.port}${p}`;
    const payload = this.opts.vsix ? [] : [['extensionDevelopmentPath', remote(REPO_ROOT)]];
    if (withTests) payload.push(['extensionTestsPath', remote(this.opts.tests.replace(/\.js$/, ''))]);
    // A .code-workspace file opens as a multi-root window (`?workspace=`), a folder as a folder.
    const open = this.workspace.endsWith('.code-workspace') ? 'workspace' : 'folder';
    return `http://127.0.0.1:${this.port}/?${open}=${encodeURIComponent(this.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  }

  /** Idempotent: safe from the normal path and from a signal handler at once. */
  cleanup() {
    this.cleaning ??= (async () => {
      if (this.context) await withTimeout(this.context.close(), 10_000).catch((e) => log(`closing the browser: ${e.message}`));
      const stuck = this.server?.pid ? await killGroup(this.server.pid) : [];
      if (stuck.length > 0) log(`process group ${this.server.pid} still has ${stuck.join(' ')} after SIGKILL`);
      // The embedded broker outlives VS Code by design and stops once its .mam/ folder is gone: remove
      // a workspace the harness made and give such daemons 5 s to go on their own.
      if (this.madeDir) {
        // maxRetries: a daemon may still be writing into .mam/ (ENOTEMPTY on the first try).
        fs.rmSync(this.madeDir, { recursive: true, force: true, maxRetries: 5 });
        await waitUntil(() => markedProcesses(this.id).length === 0, 5_000);
      }
      const leftovers = killMarked(this.id);
      for (const p of leftovers) log(`left running after the run, killed: ${p.pid} ${p.cmd}`);
      if (this.opts.verbose) console.log(tail(this.serverLog, 200));
      if (this.opts.keep) {
        fs.rmSync(path.join(this.dir, 'owner'), { force: true });
        log(`run folder kept: ${this.dir}`);
      } else {
        fs.rmSync(this.dir, { recursive: true, force: true });
      }
      return leftovers.length;
    })();
    return this.cleaning;
  }
}

// ---------------------------------------------------------------------------------------------
// The two modes.

async function runTests(run) {
  const started = Date.now();
  await run.page.goto(run.url(true), { waitUntil: 'domcontentloaded' });
  const bound = new Promise((resolve) => setTimeout(() => resolve('timeout'), run.opts.timeoutMs).unref());
  const code = await Promise.race([run.automationExit, bound, run.serverExit]);
  if (stopping) return stopped();
  const results = readResults(run.resultsFile);
  if (results) {
    for (const f of results.failures) console.log(`\n  ✗ ${f.title} (${f.file})\n    ${f.error.replace(/\n/g, '\n    ')}`);
    console.log(`\n  ${results.passes.length} passing, ${results.failures.length} failing, ${results.pending.length} pending (tests ${results.durationMs} ms)`);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (typeof code === 'number') {
    log(`the workbench reported exit code ${code} after ${seconds} s`);
    if (code !== 0 && !results) console.log(tail(run.serverLog));
    return code === 0 ? EXIT.pass : EXIT.fail;
  }
  log(code === 'timeout' ? `no result within ${run.opts.timeoutMs / 1000} s` : code);
  console.log(tail(run.serverLog));
  return code === 'timeout' ? EXIT.timeout : EXIT.harness;
}

async function runUi(run) {
  const { page, opts } = run;
  const started = Date.now();
  let webviewFailed = false;
  await page.goto(run.url(false), { waitUntil: 'domcontentloaded' });
  try {
    await page.locator('.monaco-workbench .part.activitybar').waitFor({ timeout: 60_000 });
    if (opts['open-view']) await openViewContainer(page, opts['open-view']);
    for (const name of opts['collapse-view'] ?? []) await setViewExpanded(page, name, false);
    for (const name of opts['expand-view'] ?? []) await setViewExpanded(page, name, true);
    if (opts.expect?.length) await expectVisible(page, opts.expect);
    // A still picture: the pointer off the activity bar (no tooltip), no focus outline, icon font loaded.
    await page.mouse.move(900, 600);
    await page.evaluate(() => document.activeElement?.blur?.());
    await page.locator('.workbench-hover-container').waitFor({ state: 'hidden', timeout: 3_000 }).catch(() => {});
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: opts.shot });
    log(`screenshot ${opts.shot} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (opts['status-shot']) {
      await page.locator('.part.statusbar').screenshot({ path: opts['status-shot'] });
      log(`screenshot ${opts['status-shot']} (the status bar)`);
    }
    await viewShots(page, opts['view-shot'], undefined);
    if (opts.palette) {
      await runPaletteCommand(page, opts.palette);
      if (opts['palette-expect']?.length) await expectPickRows(page, opts['palette-expect']);
      await page.evaluate(() => document.fonts.ready);
      await page.screenshot({ path: opts['palette-shot'] });
      log(`screenshot ${opts['palette-shot']} (${opts.palette})`);
      await page.keyboard.press('Escape');
    }
    for (const theme of opts['shot-theme'] ?? []) {
      await pickColorTheme(page, undefined, theme);
      await page.mouse.move(900, 600);
      await page.evaluate(() => document.fonts.ready);
      const shot = themed(opts.shot, theme);
      await page.screenshot({ path: shot });
      log(`screenshot ${shot} (theme ${theme})`);
      await viewShots(page, opts['view-shot'], theme);
    }
    if (opts.command) await runCommand(page, opts.command);
    if (opts.pick) await answerPick(page, opts.pick);
    if (opts['webview-shot']) {
      const text = await waitForWebview(page, opts['webview-selector'], 30_000);
      log(`webview content: ${JSON.stringify(text.slice(0, 300))}`);
      await page.screenshot({ path: opts['webview-shot'] });
      log(`screenshot ${opts['webview-shot']}`);
      webviewFailed = await webviewChecks(run);
      for (const spec of opts['webview-click'] ?? []) {
        const [selector, expect] = spec.split('::');
        const frame = await webviewFrame(page, opts['webview-selector'], 30_000);
        await frame.locator(selector).first().click({ timeout: 10_000 });
        const shown = await waitForWebview(page, expect, 30_000).then(() => true, () => false);
        log(`clicked ${selector} in the webview: ${shown ? `a webview shows ${expect}` : `FAILED: no webview shows ${expect}`}`);
        webviewFailed ||= !shown;
      }
    }
    for (const spec of opts['row-action'] ?? []) {
      const [row, action, input] = spec.split('::');
      await clickRowAction(page, row, action, input);
    }
    return webviewFailed ? EXIT.fail : EXIT.pass;
  } catch (err) {
    if (stopping) return stopped();
    const errorShot = opts.shot.replace(/(\.png)?$/, '.error.png');
    await page.screenshot({ path: errorShot }).catch(() => {});
    log(`UI check failed: ${err.message.split('\n')[0]} (page at that moment: ${errorShot})`);
    return EXIT.harness;
  }
}

/** --view-shot: each named side-bar view alone, named with the theme when one was switched to. */
async function viewShots(page, specs, theme) {
  for (const spec of specs ?? []) {
    const [name, file] = spec.split('::');
    const shot = theme ? themed(file, theme) : file;
    await viewPane(page, name).screenshot({ path: shot });
    log(`screenshot ${shot} (the ${name} view${theme ? `, theme ${theme}` : ''})`);
  }
}

/** --webview-expect, then --theme and --contrast: each theme in turn (or the current one), a screenshot and the measured contrast; true if any check failed. */
async function webviewChecks(run) {
  const { page, opts } = run;
  const frame = await webviewFrame(page, opts['webview-selector'], 30_000);
  let failed = false;
  for (const spec of opts['webview-expect'] ?? []) {
    const absent = spec.startsWith('!');
    const count = await frame.locator(absent ? spec.slice(1) : spec).count();
    const ok = absent ? count === 0 : count > 0;
    log(`webview ${ok ? 'shows' : 'FAILED:'} ${absent ? `nothing matching ${spec.slice(1)}` : spec}${ok ? '' : ` (${count} found)`}`);
    failed ||= !ok;
  }
  for (const theme of opts.theme ?? [undefined]) {
    if (theme) {
      await pickColorTheme(page, frame, theme);
      await page.evaluate(() => document.fonts.ready);
      const shot = themed(opts['webview-shot'], theme);
      await page.screenshot({ path: shot });
      log(`screenshot ${shot} (theme ${theme})`);
    }
    if (!opts.contrast?.length) continue;
    const { theme: shown, lines, failures } = await measureContrast(frame, opts.contrast);
    for (const line of lines) log(`contrast [${shown}] ${line}`);
    for (const failure of failures) log(`contrast [${shown}] FAILED ${failure}`);
    failed ||= failures.length > 0;
  }
  return failed;
}

/**
 * A run killed with SIGKILL cannot clean up: its server (its own process group) lives on. The next
 * run kills what such runs left (by their marker) and removes their folders.
 */
function sweepAbandonedRuns() {
  for (const name of fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(RUN_PREFIX))) {
    const dir = path.join(os.tmpdir(), name);
    let owner;
    try {
      owner = Number(fs.readFileSync(path.join(dir, 'owner'), 'utf8'));
    } catch {
      continue; // kept with --keep, or not ours
    }
    let alive = false;
    try {
      alive = fs.readFileSync(`/proc/${owner}/cmdline`, 'utf8').includes('run.mjs');
    } catch {
      // the owner is gone
    }
    if (alive) continue;
    const killed = killMarked(name.slice(RUN_PREFIX.length));
    if (killed.length > 0) log(`killed ${killed.length} processes an interrupted earlier run left: ${killed.map((p) => p.pid).join(' ')}`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The multi-root window of --multi-root: `dir/mam.code-workspace` naming three git repositories
 * with one commit each — api and web holding an empty .mam/, docs without one. Returns the file.
 */
function makeMultiRoot(dir) {
  const git = (cwd, ...args) => {
    const r = spawnSync('git', ['-c', 'user.name=MAM Test', '-c', 'user.email=mam-test@example.invalid', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' });
    if (r.status !== 0) throw new HarnessError(`git ${args.join(' ')} in ${cwd} failed: ${r.stderr}`);
  };
  for (const [name, mam] of [['api', true], ['web', true], ['docs', false]]) {
    const folder = path.join(dir, name);
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, 'README.md'), `# ${name}\n`);
    // .mam/ out of git, as `mam init` leaves it: the folders' checkouts stay clean.
    fs.writeFileSync(path.join(folder, '.gitignore'), '.mam/\n.mam.env\n');
    git(folder, 'init', '-q');
    git(folder, 'add', '-A');
    git(folder, 'commit', '-q', '-m', 'initial');
    if (mam) fs.mkdirSync(path.join(folder, '.mam'));
  }
  const file = path.join(dir, 'mam.code-workspace');
  fs.writeFileSync(file, JSON.stringify({ folders: [{ path: 'api' }, { path: 'web' }, { path: 'docs' }], settings: {} }, null, 2));
  return file;
}

/** `report.png` in theme `Dark High Contrast`: `report.dark-high-contrast.png`. */
function themed(shot, theme) {
  return shot.replace(/(\.png)?$/, `.${theme.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.png`);
}

function readResults(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function tail(file, lines = 40) {
  try {
    return `--- last lines of the server log ---\n${fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n')}`;
  } catch {
    return '(no server log)';
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const started = Date.now();
  let run;
  let code;
  const onSignal = (signal) => {
    stopping = true;
    log(`${signal}: cleaning up`);
    const exit = () => process.exit(signal === 'SIGINT' ? 130 : 143);
    (run ? run.cleanup() : Promise.resolve()).then(exit, exit);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const opts = options();
    if (!codeServerInstalled() || !resolvePlaywright() || !fs.existsSync(CHROMIUM)) {
      throw new HarnessError('code-server, playwright-core or chromium is missing: run node scripts/vscode/install.mjs');
    }
    if (!opts.vsix && !fs.existsSync(path.join(REPO_ROOT, 'dist/extension.js'))) throw new HarnessError('dist/extension.js is missing: run npm run build');
    for (const shot of [opts.shot, opts['webview-shot']]) if (shot) fs.mkdirSync(path.dirname(path.resolve(shot)), { recursive: true });
    sweepAbandonedRuns();
    run = new Run(opts);
    run.prepare();
    const t0 = Date.now();
    await run.startServer();
    log(`code-server on 127.0.0.1:${run.port} (process group ${run.server.pid}) up in ${((Date.now() - t0) / 1000).toFixed(1)} s; workspace ${run.workspace}`);
    const t1 = Date.now();
    await run.openBrowser();
    log(`chromium up in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
    code = opts.mode === 'test' ? await runTests(run) : await runUi(run);
  } catch (err) {
    if (stopping) return stopped();
    console.error(`[vscode] ${err.message}`);
    code = err instanceof HarnessError ? err.code : EXIT.harness;
  }
  if (stopping) return stopped();
  if (run) {
    const t = Date.now();
    const left = await run.cleanup();
    if (left > 0 && code === EXIT.pass && run.opts.mode === 'test') code = EXIT.leftovers;
    log(`cleaned up in ${((Date.now() - t) / 1000).toFixed(1)} s; whole run ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  process.exit(code);
}

await main();
