#!/usr/bin/env node
/**
 * Installs what scripts/vscode/run.mjs needs, skipping whatever is already there:
 *
 *   - Node.js 22 (the npm package node-linux-<arch>: the official build, headers included) in
 *     .cache/node-<version>/: code-server from 4.101 on (VS Code 1.101, the first with the MCP
 *     server API the extension uses) needs Node 22, while the project and its tests run on Node 20.
 *     It runs code-server and nothing else.
 *   - code-server 4.103.2 (VS Code 1.103.2's server and web workbench; the oldest release on the
 *     registry past 1.101) in .cache/code-server-<version>/, a folder with its own package.json,
 *     installed and built with that Node: a test tool of ~300 MB that must stay out of the project's
 *     dependencies and the VSIX. Versioned folders: another checkout's older pin is left as it is.
 *   - playwright-core (a devDependency: `npm ci` installs it; it downloads no browser).
 *   - Debian's /usr/bin/chromium and the build packages code-server's native modules need are only
 *     checked: .ci/run installs them (`apt-get install chromium libkrb5-dev libx11-dev libxkbfile-dev
 *     libsecret-1-dev pkg-config ripgrep`).
 *
 *   node scripts/vscode/install.mjs [--force]     exit 0 ready, 1 with one line per missing piece
 *   node scripts/vscode/install.mjs --code-server-only
 *                                                 Node.js 22 and code-server alone (no check of
 *                                                 chromium or playwright-core): what .ci/run starts
 *                                                 beside `npm ci` and the type check
 *
 * One install at a time per checkout: an install holds .cache/code-server-<version>.installing (its
 * pid, made with O_EXCL); another waits until that process is gone (at most 20 minutes), then
 * installs only what is still missing. A holder that died is taken over at once.
 *
 * Nothing is downloaded except from the npm registry: @vscode/ripgrep's postinstall takes ripgrep
 * from a cache tarball we make from /usr/bin/rg, and native modules build from source against the
 * local Node headers instead of fetching prebuilt binaries from GitHub.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CODE_SERVER_VERSION = '4.103.2';
export const CODE_SERVER_HOME = path.join(REPO_ROOT, `.cache/code-server-${CODE_SERVER_VERSION}`);
export const CODE_SERVER_PKG = path.join(CODE_SERVER_HOME, 'node_modules/code-server');
// code-server's engines.node is "22"; this build's minor is whatever the registry had when pinned.
export const NODE_VERSION = '22.23.3';
const NODE_PACKAGE = `node-linux-${os.arch()}`; // x64, arm64: the official builds, one package each
export const NODE_HOME = path.join(REPO_ROOT, `.cache/node-${NODE_VERSION}`);
const NODE_PREFIX = path.join(NODE_HOME, 'node_modules', NODE_PACKAGE);
/** The Node.js code-server runs on (never the project's own). */
export const CODE_SERVER_NODE = path.join(NODE_PREFIX, 'bin/node');
export const CHROMIUM = '/usr/bin/chromium';
const MARKER = path.join(CODE_SERVER_HOME, '.installed.json');
const INSTALLING = `${CODE_SERVER_HOME}.installing`;
const WAIT_FOR_OTHER_MS = 20 * 60_000;
// What code-server's native modules (node-pty, kerberos, spdlog, argon2 …) build with.
const BUILD_LIBRARIES = ['libkrb5-dev', 'libx11-dev', 'libxkbfile-dev', 'libsecret-1-dev'];
const BUILD_TOOLS = ['pkg-config', 'make', 'g++', 'python3'];
// @vscode/ripgrep 1.15.14 (pinned by code-server's shrinkwrap) looks for this file before downloading.
const RIPGREP_CACHE = { dir: 'vscode-ripgrep-cache-1.15.14', version: 'v13.0.0-13' };
// Files that exist only when the install, including every native build, went through.
const INSTALLED_FILES = [
  'out/node/entry.js',
  'lib/vscode/out/server-main.js',
  'lib/vscode/node_modules/node-pty/build/Release/pty.node',
  'lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node',
  'lib/vscode/node_modules/@vscode/ripgrep/bin/rg',
];

/** Whether .cache holds the pinned Node and a complete install of the pinned code-server, built with that Node. */
export function codeServerInstalled() {
  if (!nodeInstalled()) return false;
  try {
    const marker = JSON.parse(fs.readFileSync(MARKER, 'utf8'));
    if (marker.version !== CODE_SERVER_VERSION || marker.node !== `v${NODE_VERSION}`) return false;
  } catch {
    return false;
  }
  return INSTALLED_FILES.every((f) => fs.existsSync(path.join(CODE_SERVER_PKG, f)));
}

function nodeInstalled() {
  return spawnSync(CODE_SERVER_NODE, ['--version'], { encoding: 'utf8' }).stdout?.trim() === `v${NODE_VERSION}`;
}

/**
 * Installs a VSIX the way `code --install-extension` does, with code-server's own CLI (offline:
 * the file is local), into `extensionsDir`, and returns the folder the extension was unpacked to.
 */
export function installVsix(vsix, extensionsDir, scratchDir) {
  fs.mkdirSync(extensionsDir, { recursive: true });
  const r = spawnSync(CODE_SERVER_NODE, [path.join(CODE_SERVER_PKG, 'out/node/entry.js'), '--install-extension', vsix, '--extensions-dir', extensionsDir, '--user-data-dir', path.join(scratchDir, 'user-data')], {
    encoding: 'utf8',
    env: { ...process.env, HOME: scratchDir, XDG_CONFIG_HOME: path.join(scratchDir, 'config'), XDG_DATA_HOME: path.join(scratchDir, 'data') },
  });
  const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
  const folder = path.join(extensionsDir, `${manifest.publisher}.${manifest.name}-${manifest.version}`.toLowerCase());
  if (r.status !== 0 || !fs.existsSync(path.join(folder, 'package.json'))) throw new Error(`installing ${vsix} failed (${r.status}): ${r.stdout}${r.stderr}`.trim());
  return folder;
}

/** The project's playwright-core, or undefined when `npm ci` has not installed it. */
export function resolvePlaywright() {
  try {
    return createRequire(path.join(REPO_ROOT, 'package.json')).resolve('playwright-core');
  } catch {
    return undefined;
  }
}

/** The Debian packages code-server's install needs that are missing (each tool's package bears its name). */
function missingBuildPackages() {
  const installed = (pkg) => spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed') === true;
  const onPath = (tool) => spawnSync('sh', ['-c', 'command -v "$1"', 'sh', tool], { stdio: 'ignore' }).status === 0;
  return [...BUILD_LIBRARIES.filter((p) => !installed(p)), ...BUILD_TOOLS.filter((t) => !onPath(t)), ...(fs.existsSync('/usr/bin/rg') ? [] : ['ripgrep'])];
}

/** Node.js from the registry into .cache/node-<version>/ (~15 s, ~190 MB), as a staged folder renamed when complete. */
function installNode() {
  const staging = `${NODE_HOME}.partial`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  fs.writeFileSync(path.join(staging, 'package.json'), `${JSON.stringify({ name: 'mam-vscode-node', private: true, description: 'the Node.js code-server runs on, for scripts/vscode/run.mjs; not part of the extension' }, null, 2)}\n`);
  console.log(`install: Node.js ${NODE_VERSION} (${NODE_PACKAGE}) into ${path.relative(REPO_ROOT, NODE_HOME)}/`);
  run('npm', ['install', `${NODE_PACKAGE}@${NODE_VERSION}`, '--no-audit', '--no-fund', '--no-update-notifier'], { cwd: staging, stdio: ['ignore', 'ignore', 'inherit'] });
  if (spawnSync(path.join(staging, 'node_modules', NODE_PACKAGE, 'bin/node'), ['--version'], { encoding: 'utf8' }).stdout?.trim() !== `v${NODE_VERSION}`) throw new Error(`${NODE_PACKAGE}@${NODE_VERSION} installed no runnable node`);
  fs.rmSync(NODE_HOME, { recursive: true, force: true });
  fs.renameSync(staging, NODE_HOME);
}

function installCodeServer() {
  const missing = missingBuildPackages().join(' ');
  if (missing) throw new Error(`code-server's install needs ${missing} (apt-get install -y ${missing}; .ci/run does it)`);
  const started = Date.now();
  const staging = `${CODE_SERVER_HOME}.partial`;
  const log = path.join(REPO_ROOT, `.cache/code-server-${CODE_SERVER_VERSION}-install.log`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-code-server-install-'));
  try {
    fs.rmSync(staging, { recursive: true, force: true });
    fs.mkdirSync(staging, { recursive: true });
    fs.writeFileSync(path.join(staging, 'package.json'), `${JSON.stringify({ name: 'mam-vscode-harness', private: true, description: 'code-server for scripts/vscode/run.mjs; not part of the extension' }, null, 2)}\n`);

    const target = { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-musl' }[os.arch()];
    if (!target) throw new Error(`no ripgrep cache name known for ${os.arch()}`);
    fs.mkdirSync(path.join(tmp, RIPGREP_CACHE.dir));
    const tarball = path.join(tmp, RIPGREP_CACHE.dir, `ripgrep-${RIPGREP_CACHE.version}-${target}.tar.gz`);
    run('tar', ['czf', tarball, '-C', '/usr/bin', 'rg']);

    // Run from `npm test`, this process inherits the outer npm's identity: its user agent names
    // Node 20, and code-server's postinstall reads the Node version from it (and refuses), and
    // NODE / npm_node_execpath point scripts at Node 20. The inner npm states its own.
    const inherited = { ...process.env };
    for (const k of ['npm_config_user_agent', 'npm_node_execpath', 'NODE']) delete inherited[k];
    const env = {
      ...inherited,
      // npm and node-gyp run on Node 22, so the native modules are built for the Node that runs them.
      PATH: `${path.dirname(CODE_SERVER_NODE)}${path.delimiter}${process.env.PATH ?? ''}`,
      npm_config_nodedir: NODE_PREFIX, // its headers: node-gyp would fetch them from nodejs.org
      TMPDIR: tmp, // where @vscode/ripgrep's postinstall looks for the cache tarball
      npm_config_unsafe_perm: 'true', // root installs: code-server's postinstall refuses without it
      npm_config_yes: 'true', // node-pty's postinstall would otherwise prompt
      npm_config_build_from_source: 'true', // argon2, kerberos: skip the prebuilt download from GitHub
      // Recent npm (11.19 here) skips dependency install scripts unless allowed, and code-server's
      // postinstall runs two nested `npm install`s (lib/vscode, its extensions) whose package.json
      // we do not own; code-server's shrinkwraps pin every version. Older npm ignores the setting.
      npm_config_dangerously_allow_all_scripts: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
    console.log(`install: code-server ${CODE_SERVER_VERSION} into ${path.relative(REPO_ROOT, CODE_SERVER_HOME)}/ (log: ${path.relative(REPO_ROOT, log)})`);
    const out = fs.openSync(log, 'w');
    const r = spawnSync('npm', ['install', `code-server@${CODE_SERVER_VERSION}`, '--foreground-scripts'], { cwd: staging, env, stdio: ['ignore', out, out] });
    fs.closeSync(out);
    const broken = INSTALLED_FILES.filter((f) => !fs.existsSync(path.join(staging, 'node_modules/code-server', f)));
    if (r.status !== 0 || broken.length > 0) {
      const tail = fs.readFileSync(log, 'utf8').split('\n').slice(-40).join('\n');
      throw new Error(`npm install code-server@${CODE_SERVER_VERSION} ${r.status !== 0 ? `exited ${r.status ?? r.signal}` : `left out ${broken.join(', ')}`}; last lines of ${log}:\n${tail}`);
    }
    fs.writeFileSync(path.join(staging, '.installed.json'), `${JSON.stringify({ version: CODE_SERVER_VERSION, node: `v${NODE_VERSION}`, at: new Date().toISOString(), seconds: Math.round((Date.now() - started) / 1000) })}\n`);
    // Only a complete install takes the final name, so an interrupted one is never mistaken for done.
    fs.rmSync(CODE_SERVER_HOME, { recursive: true, force: true });
    fs.renameSync(staging, CODE_SERVER_HOME);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Runs `install` holding the checkout's install lock. Where another live process holds it, waits
 * for that process to end (its pid looked at every second, at most 20 minutes) and returns without
 * installing: the caller checks again what is there.
 */
function whileHoldingInstallLock(install) {
  fs.mkdirSync(path.dirname(INSTALLING), { recursive: true });
  const deadline = Date.now() + WAIT_FOR_OTHER_MS;
  for (;;) {
    let fd;
    try {
      fd = fs.openSync(INSTALLING, 'wx');
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const holder = Number.parseInt(readOr(INSTALLING, ''), 10);
      if (!Number.isInteger(holder) || !alive(holder)) {
        fs.rmSync(INSTALLING, { force: true }); // its holder died: take it over
        continue;
      }
      console.log(`install: waiting for the install already running here (pid ${holder}) to end`);
      while (alive(holder)) {
        if (Date.now() > deadline) throw new Error(`the install in pid ${holder} still holds ${path.relative(REPO_ROOT, INSTALLING)} after ${WAIT_FOR_OTHER_MS / 60_000} minutes`);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
      }
      return false;
    }
    try {
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      install();
      return true;
    } finally {
      fs.rmSync(INSTALLING, { force: true });
    }
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

function readOr(file, fallback) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...options });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}`);
}

function main() {
  const started = Date.now();
  const force = process.argv.includes('--force');
  const codeServerOnly = process.argv.includes('--code-server-only');
  const problems = [];
  if (!codeServerOnly && !fs.existsSync(CHROMIUM)) problems.push(`${CHROMIUM} is missing (apt-get install -y chromium; .ci/run does it)`);
  if (!codeServerOnly && !resolvePlaywright()) problems.push('playwright-core is missing from node_modules (run npm ci: it is a devDependency)');
  try {
    let forced = force;
    // Twice at most: once more after waiting for another install, which may have failed.
    for (let round = 0; round < 2 && (forced || !codeServerInstalled()); round++) {
      const ran = whileHoldingInstallLock(() => {
        if (forced || !nodeInstalled()) installNode();
        installCodeServer();
      });
      if (ran) break;
      forced = false; // another process just installed: take what it made unless it is incomplete
    }
    if (!codeServerInstalled()) problems.push(`code-server ${CODE_SERVER_VERSION} is not installed in ${path.relative(REPO_ROOT, CODE_SERVER_HOME)}/`);
  } catch (err) {
    problems.push(err.message);
  }
  if (problems.length > 0) {
    for (const p of problems) console.error(`install: ${p}`);
    process.exit(1);
  }
  console.log(`install: code-server ${CODE_SERVER_VERSION} on Node.js ${NODE_VERSION}${codeServerOnly ? '' : ', playwright-core and chromium'} ready (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
