import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { initWorkspace, type InitResult } from '../../src/core/init/initWorkspace';
import { readManifest } from '../../src/core/init/manifest';
import { CODEX_STARTUP_TIMEOUT_S, codexForwardedVariables } from '../../src/core/init/mcpClients';
import { CLI, mam, tempDir } from '../support/helpers';

/** Where each agent CLI reads a project's MCP servers, and the key holding them. */
const CONFIGS = { '.mcp.json': 'mcpServers', '.codex/config.toml': 'mcp_servers', '.gemini/settings.json': 'mcpServers', 'opencode.json': 'mcp' } as const;
type ConfigFile = keyof typeof CONFIGS;

const git = (repo: string, ...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
const status = (repo: string) => git(repo, 'status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean);
const read = (repo: string, rel: string) => fs.readFileSync(path.join(repo, rel), 'utf8');
const byPath = (r: InitResult) => Object.fromEntries(r.items.map((i) => [i.path, i]));

/** The servers of one config file, parsed as the CLI reading it does. */
function servers(repo: string, rel: string): Record<string, unknown> {
  const text = read(repo, rel);
  // (smol-toml's tables have no prototype: through JSON they compare as plain objects)
  const doc = JSON.parse(JSON.stringify(rel.endsWith('.toml') ? parseToml(text) : parseJsonc(text))) as Record<string, Record<string, unknown>>;
  return doc[rel.endsWith('.toml') ? 'mcp_servers' : rel.startsWith('opencode') ? 'mcp' : 'mcpServers'] ?? {};
}

/** What mam init should register in `rel` for `cli` serving `repo`. */
function expected(rel: ConfigFile | 'opencode.jsonc', cli: string, repo: string): unknown {
  const args = [cli, 'mcp', '--workspace', repo];
  if (rel.startsWith('opencode')) return { type: 'local', command: ['node', ...args], enabled: true };
  return rel.endsWith('.toml') ? { command: 'node', args, env_vars: codexForwardedVariables(), startup_timeout_sec: CODEX_STARTUP_TIMEOUT_S } : { command: 'node', args };
}

/** A clone of a repository with one commit holding `files`. */
function freshClone(files: Record<string, string>): string {
  const origin = tempDir('origin');
  git(origin, 'init', '-q');
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(origin, rel)), { recursive: true });
    fs.writeFileSync(path.join(origin, rel), text);
  }
  git(origin, 'add', '-A');
  git(origin, 'commit', '-qm', 'initial');
  const clone = path.join(tempDir('clone'), 'repo');
  git(path.dirname(clone), 'clone', '-q', origin, clone);
  return fs.realpathSync(clone);
}

describe('mam init: MAM’s MCP server registered for Claude Code, Codex, Gemini CLI and opencode (real git)', () => {
  it('in a fresh clone: each CLI’s project file names `node <cli> mcp --workspace <repo>`; again, nothing changes; a newer MAM is outdated until --update; --remove takes every file and folder back', async () => {
    const repo = freshClone({ 'README.md': '# A project\n' });
    const first = await mam(['init'], { cwd: repo });
    assert.equal(first.exitCode, 0, first.stderr);
    assert.match(first.stdout, /^  created +\.mcp\.json: MAM’s MCP server for Claude Code, which asks you once to approve it$/m);
    assert.match(first.stdout, /^  created +\.codex\/config\.toml: MAM’s MCP server for Codex, which reads this file once you trust the project$/m);
    assert.match(first.stdout, /^  created +\.gemini\/settings\.json: MAM’s MCP server for Gemini CLI, which starts it in a folder you trust$/m);
    assert.match(first.stdout, /^  created +opencode\.json: MAM’s MCP server for opencode$/m);
    for (const rel of Object.keys(CONFIGS) as ConfigFile[]) assert.deepEqual(servers(repo, rel), { mam: expected(rel, CLI, repo) }, rel);
    assert.equal(read(repo, '.mcp.json'), `${JSON.stringify({ mcpServers: { mam: { command: 'node', args: [CLI, 'mcp', '--workspace', repo] } } }, null, 2)}\n`);
    assert.equal(read(repo, '.codex/config.toml'), `[mcp_servers.mam]\ncommand = "node"\nargs = [ ${JSON.stringify(CLI)}, "mcp", "--workspace", ${JSON.stringify(repo)} ]\nenv_vars = [ ${codexForwardedVariables().map((v) => JSON.stringify(v)).join(', ')} ]\nstartup_timeout_sec = ${CODEX_STARTUP_TIMEOUT_S}\n`);
    assert.ok(['TMUX_TMPDIR', 'MAM_TMUX_SERVER', 'MQTT_BROKER', 'TMUX_SERVER_NAME', 'MAM_AGENT_ARGS_CODEX'].every((v) => codexForwardedVariables().includes(v)), 'codex passes on where the tmux sockets are and every MAM setting');
    for (const rel of Object.keys(CONFIGS)) assert.ok(status(repo).includes(`?? ${rel}`), `${rel} is there for git to commit`);

    const again = JSON.parse((await mam(['init', '--json'], { cwd: repo })).stdout) as InitResult;
    assert.equal(again.changed, false);
    for (const rel of Object.keys(CONFIGS)) assert.equal(byPath(again)[rel]?.action, 'unchanged', rel);

    const newer = '/opt/mam-2/dist/cli.js';
    const told = await initWorkspace({ workspace: repo, cliPath: newer, mode: 'install' });
    for (const rel of Object.keys(CONFIGS)) assert.deepEqual(byPath(told)[rel], { path: rel, action: 'outdated', note: 'mam init --update refreshes its mam server' });
    assert.deepEqual(servers(repo, '.mcp.json'), { mam: expected('.mcp.json', CLI, repo) }, 'plain init changes no server');
    const updated = await initWorkspace({ workspace: repo, cliPath: newer, mode: 'update' });
    for (const rel of Object.keys(CONFIGS) as ConfigFile[]) {
      assert.equal(byPath(updated)[rel]?.action, 'updated', rel);
      assert.deepEqual(servers(repo, rel), { mam: expected(rel, newer, repo) }, rel);
    }

    const removed = await mam(['init', '--remove'], { cwd: repo });
    assert.equal(removed.exitCode, 0, removed.stderr);
    for (const rel of Object.keys(CONFIGS)) {
      assert.match(removed.stdout, new RegExp(`^  removed +${rel.replace(/\./g, '\\.')}$`, 'm'));
      assert.ok(!fs.existsSync(path.join(repo, rel)), `${rel} is gone: mam init created it`);
    }
    assert.ok(!fs.existsSync(path.join(repo, '.codex')) && !fs.existsSync(path.join(repo, '.gemini')), 'the folders it made for them too');
    assert.deepEqual(status(repo), []);
  });

  it('configs the user already has: MAM’s server is added beside theirs, comments, layout and mode kept; --remove gives back every file byte for byte', async () => {
    const original: Record<string, string> = {
      '.mcp.json': '{\n    "mcpServers": {\n        "github": { "command": "gh-mcp" }\n    }\n}\n',
      '.codex/config.toml': 'model = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["--port", "0"]\n',
      '.gemini/settings.json': '{\n  // the team’s theme\n  "ui": { "theme": "GitHub" },\n  "mcpServers": {}\n}\n',
      'opencode.jsonc': '{\n  "$schema": "https://opencode.ai/config.json",\n  // our model\n  "model": "anthropic/x",\n}\n',
    };
    const repo = freshClone(original);
    fs.chmodSync(path.join(repo, '.gemini/settings.json'), 0o600);
    const r = await initWorkspace({ workspace: repo, cliPath: CLI, mode: 'install' });
    for (const rel of Object.keys(original)) {
      assert.equal(byPath(r)[rel]?.action, 'appended', rel);
      assert.match(byPath(r)[rel]?.note ?? '', /; the rest of the file untouched$/);
    }
    assert.ok(!fs.existsSync(path.join(repo, 'opencode.json')), 'the project’s opencode.jsonc is edited, not shadowed by a new opencode.json');
    assert.deepEqual(servers(repo, '.mcp.json'), { github: { command: 'gh-mcp' }, mam: expected('.mcp.json', CLI, repo) });
    assert.deepEqual(servers(repo, '.codex/config.toml'), { docs: { command: 'docs-mcp', args: ['--port', '0'] }, mam: expected('.codex/config.toml', CLI, repo) });
    assert.deepEqual(servers(repo, '.gemini/settings.json'), { mam: expected('.gemini/settings.json', CLI, repo) });
    assert.deepEqual(servers(repo, 'opencode.jsonc'), { mam: expected('opencode.jsonc', CLI, repo) });
    assert.equal((parseJsonc(read(repo, 'opencode.jsonc')) as { model: string }).model, 'anthropic/x');
    // Added in the file's own layout, after what was there.
    assert.ok(read(repo, '.mcp.json').startsWith('{\n    "mcpServers": {\n        "github": { "command": "gh-mcp" },\n        "mam": {\n            "command": "node",\n'), read(repo, '.mcp.json'));
    assert.ok(read(repo, '.codex/config.toml').startsWith(`${original['.codex/config.toml']}\n[mcp_servers.mam]\n`));
    assert.match(read(repo, '.gemini/settings.json'), /^\{\n  \/\/ the team’s theme\n  "ui": \{ "theme": "GitHub" \},\n  "mcpServers": \{\n    "mam": \{\n/);
    assert.equal(fs.statSync(path.join(repo, '.gemini/settings.json')).mode & 0o777, 0o600, 'a settings file that may hold keys keeps its mode');

    const removed = await initWorkspace({ workspace: repo, cliPath: CLI, mode: 'remove' });
    for (const rel of Object.keys(original)) {
      assert.deepEqual(byPath(removed)[rel], { path: rel, action: 'removed', note: 'its mam server; the rest kept' });
      assert.equal(read(repo, rel), original[rel], rel);
    }
    assert.equal(fs.statSync(path.join(repo, '.gemini/settings.json')).mode & 0o777, 0o600);
    assert.deepEqual(status(repo), [], 'the checkout is as it was cloned');
  });

  it('a file MAM cannot parse (or extend) is named and left byte for byte, through init, --update and --remove; so is a `mam` server the user wrote', async () => {
    const original: Record<string, string> = {
      '.mcp.json': '{ "mcpServers": { "github": ',
      '.codex/config.toml': 'mcp_servers = { docs = { command = "docs-mcp" } }\n',
      '.gemini/settings.json': '{ "mcpServers": ["not", "an", "object"] }\n',
      'opencode.json': '{ "mcp": { "mam": { "type": "remote", "url": "http://127.0.0.1:9/mcp" } } }\n',
    };
    const repo = freshClone(original);
    const r = await mam(['init'], { cwd: repo });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /^  kept +\.mcp\.json: not valid JSON \(\w+ at line 1\): left as is, and MAM’s MCP server is not registered for Claude Code$/m);
    assert.match(r.stdout, /^  kept +\.codex\/config\.toml: a \[mcp_servers\.mam\] table cannot be added to it \(is mcp_servers an inline table\?\): left as is, and MAM’s MCP server is not registered for Codex$/m);
    assert.match(r.stdout, /^  kept +\.gemini\/settings\.json: its "mcpServers" is not an object: left as is, and MAM’s MCP server is not registered for Gemini CLI$/m);
    assert.match(r.stdout, /^  kept +opencode\.json: its mam server was not written by mam init here; left as is$/m);
    assert.match(r.stdout, /4 kept as you left them\.$/m);
    const mcpEntries = () => (readManifest(repo).manifest?.entries ?? []).filter((e) => e.kind === 'mcp');
    assert.deepEqual(mcpEntries(), [], 'none of them is recorded as MAM’s');
    await initWorkspace({ workspace: repo, cliPath: '/opt/mam-2/dist/cli.js', mode: 'update' });
    const removed = await initWorkspace({ workspace: repo, cliPath: '/opt/mam-2/dist/cli.js', mode: 'remove' });
    assert.ok(!removed.items.some((i) => i.path in original), JSON.stringify(removed.items));
    for (const [rel, text] of Object.entries(original)) assert.equal(read(repo, rel), text, rel);
    assert.deepEqual(status(repo), []);
  });

  it('MAM’s server edited by the user (or its file broken since) stays as it is through --update and --remove, and stays listed', async () => {
    const repo = freshClone({ 'README.md': '# A project\n' });
    await initWorkspace({ workspace: repo, cliPath: CLI, mode: 'install' });
    const mcp = JSON.parse(read(repo, '.mcp.json')) as { mcpServers: { mam: { env?: Record<string, string> } } };
    mcp.mcpServers.mam.env = { MAM_DEBUG: '1' };
    fs.writeFileSync(path.join(repo, '.mcp.json'), JSON.stringify(mcp));
    fs.appendFileSync(path.join(repo, '.codex/config.toml'), '[broken\n');
    const edited = { '.mcp.json': read(repo, '.mcp.json'), '.codex/config.toml': read(repo, '.codex/config.toml') };

    const updated = await initWorkspace({ workspace: repo, cliPath: '/opt/mam-2/dist/cli.js', mode: 'update' });
    assert.deepEqual(byPath(updated)['.mcp.json'], { path: '.mcp.json', action: 'kept', note: 'its mam server was edited since mam init wrote it; left as is' });
    assert.equal(byPath(updated)['.codex/config.toml']?.action, 'kept');
    assert.match(byPath(updated)['.codex/config.toml']?.note ?? '', /^not valid TOML \(line \d+, column \d+\): left as is/);
    assert.equal(byPath(updated)['.gemini/settings.json']?.action, 'updated');

    const removed = await initWorkspace({ workspace: repo, cliPath: '/opt/mam-2/dist/cli.js', mode: 'remove' });
    assert.equal(byPath(removed)['.mcp.json']?.action, 'kept');
    assert.equal(byPath(removed)['.codex/config.toml']?.action, 'kept');
    assert.equal(byPath(removed)['.gemini/settings.json']?.action, 'removed');
    for (const [rel, text] of Object.entries(edited)) assert.equal(read(repo, rel), text, rel);
    assert.deepEqual((readManifest(repo).manifest?.entries ?? []).filter((e) => e.kind === 'mcp').map((e) => e.path).sort(), ['.codex/config.toml', '.mcp.json'], 'still MAM’s to take back once fixed');
  });
});
