#!/usr/bin/env node
/**
 * Installs the real agent CLIs the real-agent tests drive (test/support/realAgents.ts) into
 * .cache/agents/, a folder with its own package.json: test tools that must stay out of the
 * project's dependencies and the VSIX. The versions are pinned in scripts/agent-clis.json because
 * the tests' model server (test/fixtures/model-server.js) speaks the wire protocols exactly as
 * these versions use them.
 *
 *   node scripts/install-agents.mjs [--force]     prints one line; exit 0 ready, 1 on failure
 *
 * Skipped in a few seconds when every pinned version is already installed (each package's own
 * package.json says which) and answers --version. Only the npm registry is used, through npm.
 *
 * Copilot CLI unpacks ~235 MB into its package cache on its first start; that is done here, once,
 * into .cache/agents/copilot-pkg/ (COPILOT_PKG_CACHE_HOME), which the tests point every copilot at,
 * instead of once per test HOME.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOME = path.join(REPO_ROOT, '.cache/agents');
const AGENTS = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'scripts/agent-clis.json'), 'utf8')).agents;
const COPILOT_PKG_CACHE = path.join(HOME, 'copilot-pkg');

function installedVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(HOME, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/**
 * A HOME of its own for `--version`: even that makes codex write helper files under ~/.codex.
 * Its settings keep gemini and qwen from updating themselves (qwen runs `npm install --global`
 * otherwise) should a version check ever start one.
 */
function versionCheckHome() {
  const home = path.join(HOME, 'version-check-home');
  const settings = JSON.stringify({ general: { enableAutoUpdate: false, enableAutoUpdateNotification: false } });
  for (const dir of ['.gemini', '.qwen']) {
    fs.mkdirSync(path.join(home, dir), { recursive: true });
    fs.writeFileSync(path.join(home, dir, 'settings.json'), settings);
  }
  return home;
}

/** Whether the installed CLI answers `--version` (offline; it needs no model server for that). */
function runs(bin, home) {
  const env = {
    ...process.env, HOME: home, TMPDIR: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local/share'), XDG_CACHE_HOME: path.join(home, '.cache'), XDG_STATE_HOME: path.join(home, '.local/state'),
    DISABLE_AUTOUPDATER: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', COPILOT_AUTO_UPDATE: 'false', GROK_DISABLE_AUTOUPDATER: '1', GROK_HOME: path.join(home, '.grok'),
    // copilot's first start unpacks its package here (once; later starts find it).
    COPILOT_PKG_CACHE_HOME: COPILOT_PKG_CACHE,
  };
  return new Promise((resolve) => {
    const child = spawn(path.join(HOME, 'node_modules/.bin', bin), ['--version'], { stdio: 'ignore', env });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', () => resolve(false));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}

/** copilot's unpacked package, as its first start leaves it. */
function copilotUnpacked() {
  const dir = path.join(COPILOT_PKG_CACHE, 'pkg', `linux-${process.arch}`, AGENTS.copilot.version);
  return fs.existsSync(path.join(dir, 'index.js'));
}

function ready() {
  return Object.values(AGENTS).every((a) => installedVersion(a.package) === a.version) && Object.keys(AGENTS).every((b) => fs.existsSync(path.join(HOME, 'node_modules/.bin', b)));
}

async function allRun() {
  const home = versionCheckHome();
  const results = await Promise.all(Object.keys(AGENTS).map(async (bin) => [bin, await runs(bin, home)]));
  const failed = results.filter(([, ok]) => !ok).map(([bin]) => bin);
  if (failed.length === 0 && !copilotUnpacked()) failed.push('copilot (its package was not unpacked)');
  return failed;
}

async function main() {
  const force = process.argv.includes('--force');
  const wanted = Object.values(AGENTS).map((a) => `${a.package}@${a.version}`);
  if (!force && ready() && (await allRun()).length === 0) {
    console.log(`install-agents: ${wanted.join(', ')} already in ${path.relative(REPO_ROOT, HOME)}/`);
    return 0;
  }
  fs.mkdirSync(HOME, { recursive: true });
  const manifest = path.join(HOME, 'package.json');
  if (!fs.existsSync(manifest)) {
    fs.writeFileSync(manifest, `${JSON.stringify({ name: 'mam-real-agents', private: true, description: 'agent CLIs for the real-agent tests; not part of the extension' }, null, 2)}\n`);
  }
  const log = path.join(REPO_ROOT, '.cache/agents-install.log');
  const out = fs.openSync(log, 'w');
  const started = Date.now();
  // In a HOME of its own, keeping npm's own cache and user config: grok's postinstall copies its
  // 166 MB binary into ~/.grok/bin and writes ~/.grok/config.toml, which must not land in the real HOME.
  const installHome = path.join(HOME, 'install-home');
  fs.mkdirSync(installHome, { recursive: true });
  const realHome = os.homedir();
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--save-exact', '--prefix', HOME, ...wanted], {
    cwd: HOME,
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      HOME: installHome,
      npm_config_cache: process.env.npm_config_cache || path.join(realHome, '.npm'),
      npm_config_userconfig: process.env.npm_config_userconfig || path.join(realHome, '.npmrc'),
      npm_config_update_notifier: 'false',
    },
  });
  fs.closeSync(out);
  // claude's package puts its native binary in place from a postinstall script; where npm did not
  // run it (install scripts not allowed), run it ourselves — it is the package's own step.
  if (!r.error && r.status === 0 && !(await runs('claude', versionCheckHome()))) {
    spawnSync(process.execPath, ['install.cjs'], { cwd: path.join(HOME, 'node_modules/@anthropic-ai/claude-code'), stdio: 'ignore' });
  }
  const failed = r.error || r.status !== 0 || !ready() ? [] : await allRun();
  if (r.error || r.status !== 0 || !ready() || failed.length > 0) {
    const why = r.error ? r.error.message : r.status !== 0 ? `npm exited ${r.status ?? r.signal}` : !ready() ? 'npm finished but a pinned version or bin is missing' : `${failed.join(', ')} did not answer --version`;
    const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').slice(-15).join('\n') : '';
    console.error(`install-agents: installing ${wanted.join(' ')} into ${HOME} failed: ${why} (log: ${log})${tail ? `\n${tail}` : ''}`);
    return 1;
  }
  console.log(`install-agents: installed ${wanted.join(', ')} into ${path.relative(REPO_ROOT, HOME)}/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

process.exitCode = await main();
