/**
 * The real agent CLIs for tests — codex, claude, gemini, opencode, copilot, qwen, grok: installed by
 * `node scripts/install-agents.mjs` into .cache/agents/ (pinned in scripts/agent-clis.json), run
 * in tmux panes in a temp HOME, talking only to test/fixtures/model-server.js on 127.0.0.1. The
 * model server plays an agent that follows MAM's brief through the CLI's own shell tool, so the
 * events, commits and reports a test sees were produced by the real CLI.
 *
 *   const server = await startModelServer({ steps: { job: { run: ['echo hi > hi.txt'] } } });
 *   const home = agentHome({ server, projects: [workspace] });
 *   const env = agentEnv(home, server);            // for `mam` (its tmux server hands it to panes)
 *   await mam(['session', 'create', '--agent', 'codex', '--name', 'c1', '--workspace', workspace], { cwd: workspace, env });
 *   …
 *   await server.stop();
 *
 * Everything the CLIs write goes under the temp HOME (and XDG folders inside it); the run-wide
 * guard fails the run if anything lands in the real HOME's agent folders.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { claudeSlug } from '../../src/core/agents/claude';
import pins from '../../scripts/agent-clis.json';
import { CODEX_KEY_VARIABLE, TEST_API_KEY, TEST_MODEL } from './agentHomes';
import { REPO_ROOT } from './helpers';

export { agentHome, TEST_API_KEY, TEST_MODEL, CODEX_KEY_VARIABLE, type AgentHomeOptions } from './agentHomes';
export { readModelLog, servedUsage, startModelServer, type ModelLogEntry, type ModelServer, type ModelServerConfig, type ModelStep, type ModelUsageEntry } from './modelServer';

/** The real CLIs the tests drive, by MAM's agent name. */
export type RealAgent = keyof typeof pins.agents;
export const REAL_AGENTS = Object.keys(pins.agents) as RealAgent[];
/** Pinned versions (scripts/agent-clis.json): the model server speaks these versions' protocols. */
export const PINNED_AGENTS: Readonly<Record<RealAgent, { package: string; version: string }>> = pins.agents;
export const AGENTS_HOME = path.join(REPO_ROOT, '.cache/agents');
export const AGENTS_BIN = path.join(AGENTS_HOME, 'node_modules/.bin');
/** Where install-agents.mjs unpacked copilot's package once, for every test's copilot (COPILOT_PKG_CACHE_HOME). */
export const COPILOT_PKG_CACHE = path.join(AGENTS_HOME, 'copilot-pkg');

/** Why `agent`'s real CLI cannot run here, or undefined. */
export function agentMissing(agent: RealAgent): string | undefined {
  const { package: name, version } = PINNED_AGENTS[agent];
  let found: string | undefined;
  try {
    found = (JSON.parse(fs.readFileSync(path.join(AGENTS_HOME, 'node_modules', name, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    found = undefined;
  }
  if (found !== version) return `${name}@${version} is not in .cache/agents${found ? ` (found ${found})` : ''} (node scripts/install-agents.mjs)`;
  if (!fs.existsSync(path.join(AGENTS_BIN, agent))) return `.cache/agents/node_modules/.bin/${agent} is missing (node scripts/install-agents.mjs --force)`;
  if (agent === 'copilot' && !fs.existsSync(path.join(COPILOT_PKG_CACHE, 'pkg', `linux-${process.arch}`, version, 'index.js'))) {
    return `copilot's package is not unpacked in .cache/agents/copilot-pkg (node scripts/install-agents.mjs --force)`;
  }
  return undefined;
}

/** Why the real CLIs `agents` cannot all run here (the first missing one), or undefined: for `itNeeds(agentsMissing(…), …)`. */
export function agentsMissing(...agents: RealAgent[]): string | undefined {
  for (const agent of agents) {
    const why = agentMissing(agent);
    if (why) return why;
  }
  return undefined;
}

/**
 * The environment a `mam` process (and so the tmux server it starts, and every pane) needs for the
 * real CLIs to run from `home` against `server` and nowhere else: the CLIs first on PATH, XDG
 * folders inside `home` (opencode keeps its config and store there), the keys and base URLs, every
 * documented switch that keeps them from phoning home or updating themselves, and a proxy pointing
 * at the server so that anything they still try to reach is refused there (and logged:
 * `server.outbound()`) instead of leaving the machine.
 */
export function agentEnv(home: string, server: { url: string }, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  for (const k of Object.keys(env)) {
    // Whatever the surrounding shell has for these services must not leak into the test.
    if (/^(ANTHROPIC_|OPENAI_|CLAUDE_|CODEX_|GEMINI_|GOOGLE_|COPILOT_|OPENCODE_|QWEN_|GROK_|XAI_|GH_|GITHUB_)/.test(k) || /^(https?|no|all)_proxy$/i.test(k)) delete env[k];
  }
  delete env.TMUX;
  delete env.TMUX_PANE;
  // claude keeps per-session task files under $TMPDIR/claude-<uid>/ whatever HOME is; and codex
  // refuses to make its helper commands when its home lies under the temp folder.
  const tmp = path.join(home, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  return {
    ...env,
    HOME: home,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_STATE_HOME: path.join(home, '.local/state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    PATH: `${AGENTS_BIN}${path.delimiter}${env.PATH ?? '/usr/bin:/bin'}`,
    // As CI machines have it, wherever the tests run: an agent in a pane must stay interactive
    // (gemini went headless under it and exited; its adapter says why).
    CI: 'true',
    // claude
    ANTHROPIC_API_KEY: TEST_API_KEY,
    ANTHROPIC_BASE_URL: server.url,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1', // else it fetches the official plugin marketplace at start
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1', // a survey would be one more screen in the pane
    ...(process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}), // claude refuses bypass mode as root otherwise
    // codex (its provider reads the key from here)
    [CODEX_KEY_VARIABLE]: TEST_API_KEY,
    // gemini (its API-key sign-in is chosen in its settings: agentHomes.ts)
    GOOGLE_GEMINI_BASE_URL: server.url,
    GEMINI_API_KEY: TEST_API_KEY,
    // opencode: no model catalogue or language servers fetched; its provider is in its config
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    // copilot: offline (no GitHub sign-in, telemetry or updates), the server as its provider, and
    // its package unpacked once for the run (not 235 MB per HOME)
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: `${server.url}/v1`,
    COPILOT_PROVIDER_API_KEY: TEST_API_KEY,
    COPILOT_MODEL: TEST_MODEL,
    COPILOT_AUTO_UPDATE: 'false',
    COPILOT_PKG_CACHE_HOME: COPILOT_PKG_CACHE,
    // qwen: everything is in its settings (agentHomes.ts), which always turn its self-update off
    // grok: an API key (no sign-in screen then), the server for its models and API, no updates
    XAI_API_KEY: TEST_API_KEY,
    GROK_HOME: path.join(home, '.grok'), // its own default, spelt out: what grok writes stays in this HOME
    GROK_MODELS_BASE_URL: `${server.url}/v1`,
    GROK_XAI_API_BASE_URL: `${server.url}/v1`,
    GROK_DISABLE_AUTOUPDATER: '1',
    // All: anything beyond 127.0.0.1 goes to the model server as a CONNECT, which it refuses.
    HTTPS_PROXY: server.url,
    HTTP_PROXY: server.url,
    https_proxy: server.url,
    http_proxy: server.url,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}

/** The file in which the CLI keeps conversation `id` of `workspace`, if it keeps one file per conversation and has it. */
export function conversationFile(home: string, workspace: string, agent: RealAgent, id: string): string | undefined {
  const existing = (file: string): string | undefined => (fs.existsSync(file) ? file : undefined);
  const walk = (dir: string): string[] => (fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)])) : []);
  switch (agent) {
    case 'claude':
      return existing(path.join(home, '.claude', 'projects', claudeSlug(workspace), `${id}.jsonl`));
    case 'codex':
      return walk(path.join(home, '.codex', 'sessions')).find((f) => f.endsWith(`-${id}.jsonl`));
    case 'gemini':
      // session-<time>-<first 8 of the id>.jsonl, first line naming the session; a resume may add a second file.
      return walk(path.join(home, '.gemini', 'tmp')).find((f) => /\/chats\/session-[^/]*\.jsonl$/.test(f) && f.endsWith(`-${id.slice(0, 8)}.jsonl`) && fs.readFileSync(f, 'utf8').includes(`"sessionId":"${id}"`));
    case 'qwen':
      return existing(path.join(home, '.qwen', 'projects', workspace.replace(/[^a-zA-Z0-9]/g, '-'), 'chats', `${id}.jsonl`));
    case 'copilot':
      return existing(path.join(home, '.copilot', 'session-state', id, 'events.jsonl'));
    case 'grok':
      // sessions/<URL-encoded cwd>/<id>/: its updates (the conversation as it went) hold the typed lines.
      return existing(path.join(home, '.grok', 'sessions', encodeURIComponent(workspace), id, 'updates.jsonl'));
    case 'opencode':
      return undefined; // one SQLite database for all: see storedConversation
  }
}

/**
 * The text of conversation `id` as the CLI's own store holds it: the file(s) it keeps, or — for
 * opencode, whose store is one SQLite database — what `opencode export` prints from it.
 */
export function storedConversation(env: Record<string, string>, workspace: string, agent: RealAgent, id: string): string | undefined {
  if (agent === 'opencode') {
    try {
      return execFileSync(path.join(AGENTS_BIN, 'opencode'), ['export', id], { cwd: workspace, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 60_000 });
    } catch {
      return undefined;
    }
  }
  const home = env.HOME!;
  if (agent === 'gemini') {
    // A resumed gemini conversation may continue in a second file with the same session ID.
    const dir = path.dirname(conversationFile(home, workspace, agent, id) ?? '');
    const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(`-${id.slice(0, 8)}.jsonl`)).map((n) => path.join(dir, n)) : [];
    return files.length > 0 ? files.map((f) => fs.readFileSync(f, 'utf8')).join('\n') : undefined;
  }
  const file = conversationFile(home, workspace, agent, id);
  return file ? fs.readFileSync(file, 'utf8') : undefined;
}
