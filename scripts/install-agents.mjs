#!/usr/bin/env node
/**
 * Installs the real agent CLIs the real-agent tests drive (test/support/realAgents.ts) into
 * .cache/agents/, a folder with its own package.json: test tools that must stay out of the
 * project's dependencies and the VSIX. The versions are pinned because the tests' model server
 * (test/fixtures/model-server.js) speaks the wire protocols exactly as these versions use them.
 *
 *   node scripts/install-agents.mjs [--force]     prints one line; exit 0 ready, 1 on failure
 *
 * Skipped in a few milliseconds when every pinned version is already installed (each package's
 * own package.json says which). Only the npm registry is used, through npm.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOME = path.join(REPO_ROOT, '.cache/agents');
const PINNED = { '@openai/codex': '0.171.0', '@anthropic-ai/claude-code': '2.1.197' };
const BINS = ['codex', 'claude'];

function installedVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(HOME, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Whether the installed CLI answers `--version` (offline; it needs no model server for that). */
function runs(bin) {
  // In a HOME of its own: even `--version` makes codex write helper files under ~/.codex.
  const home = path.join(HOME, 'version-check-home');
  fs.mkdirSync(home, { recursive: true });
  const r = spawnSync(path.join(HOME, 'node_modules/.bin', bin), ['--version'], { stdio: 'ignore', timeout: 30_000, env: { ...process.env, HOME: home, TMPDIR: home, DISABLE_AUTOUPDATER: '1' } });
  return r.status === 0;
}

function ready() {
  return Object.entries(PINNED).every(([name, version]) => installedVersion(name) === version) && BINS.every((b) => fs.existsSync(path.join(HOME, 'node_modules/.bin', b)));
}

function main() {
  const force = process.argv.includes('--force');
  const wanted = Object.entries(PINNED).map(([n, v]) => `${n}@${v}`);
  if (!force && ready() && BINS.every(runs)) {
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
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--save-exact', '--prefix', HOME, ...wanted], {
    cwd: HOME,
    stdio: ['ignore', out, out],
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  fs.closeSync(out);
  // claude's package puts its native binary in place from a postinstall script; where npm did not
  // run it (install scripts not allowed), run it ourselves — it is the package's own step.
  if (!r.error && r.status === 0 && !runs('claude')) {
    spawnSync(process.execPath, ['install.cjs'], { cwd: path.join(HOME, 'node_modules/@anthropic-ai/claude-code'), stdio: 'ignore' });
  }
  if (r.error || r.status !== 0 || !ready() || !BINS.every(runs)) {
    const why = r.error ? r.error.message : r.status !== 0 ? `npm exited ${r.status ?? r.signal}` : 'npm finished but a pinned version or bin is missing';
    const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').slice(-15).join('\n') : '';
    console.error(`install-agents: installing ${wanted.join(' ')} into ${HOME} failed: ${why} (log: ${log})${tail ? `\n${tail}` : ''}`);
    return 1;
  }
  console.log(`install-agents: installed ${wanted.join(', ')} into ${path.relative(REPO_ROOT, HOME)}/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

process.exitCode = main();
