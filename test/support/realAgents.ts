/**
 * The real `codex` and `claude` CLIs for tests: installed by `node scripts/install-agents.mjs` into
 * .cache/agents/, run in tmux panes in a temp HOME, talking only to test/fixtures/model-server.js
 * on 127.0.0.1. The model server plays an agent that follows MAM's brief through the CLI's own
 * shell tool, so the events, commits and reports a test sees were produced by the real CLI.
 *
 *   const server = await startModelServer({ steps: { job: { run: ['echo hi > hi.txt'] } } });
 *   const home = agentHome({ server, projects: [workspace] });
 *   const env = agentEnv(home, server);            // for `mam` (its tmux server hands it to panes)
 *   await mam(['session', 'create', '--agent', 'codex', '--name', 'c1', '--workspace', workspace], { cwd: workspace, env });
 *   …
 *   await server.stop();
 *
 * Everything the CLIs write goes under the temp HOME; the run-wide guard fails the run if anything
 * lands in the real ~/.codex or ~/.claude.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { claudeSlug } from '../../src/core/agents/claude';
import { REPO_ROOT, stopChild, tempDir } from './helpers';

/** Keep in step with scripts/install-agents.mjs: the model server speaks these versions' protocols. */
export const PINNED_AGENTS: Readonly<Record<string, string>> = { '@openai/codex': '0.171.0', '@anthropic-ai/claude-code': '2.1.197' };
export const AGENTS_HOME = path.join(REPO_ROOT, '.cache/agents');
export const AGENTS_BIN = path.join(AGENTS_HOME, 'node_modules/.bin');
export const MODEL_SERVER = path.join(REPO_ROOT, 'test/fixtures/model-server.js');

/** The key both CLIs send (claude approves a key by its last 20 characters). */
export const TEST_API_KEY = 'sk-mam-test-0123456789abcdefghijklmnopqrst';
/** The environment variable codex's test provider reads its key from (`env_key`). */
export const CODEX_KEY_VARIABLE = 'MAM_TEST_OPENAI_KEY';
const CODEX_PROVIDER = 'mam-test';
const CODEX_MODEL = 'mam-test-model';

/** Why the real CLIs cannot run here, or undefined: for `itNeeds(agentsMissing(), …)`. */
export function agentsMissing(): string | undefined {
  for (const [name, version] of Object.entries(PINNED_AGENTS)) {
    let found: string | undefined;
    try {
      found = (JSON.parse(fs.readFileSync(path.join(AGENTS_HOME, 'node_modules', name, 'package.json'), 'utf8')) as { version?: string }).version;
    } catch {
      found = undefined;
    }
    if (found !== version) return `${name}@${version} is not in .cache/agents${found ? ` (found ${found})` : ''} (node scripts/install-agents.mjs)`;
  }
  for (const bin of ['codex', 'claude']) {
    if (!fs.existsSync(path.join(AGENTS_BIN, bin))) return `.cache/agents/node_modules/.bin/${bin} is missing (node scripts/install-agents.mjs --force)`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The model server.

/** One step of the scripted agent; see the top of test/fixtures/model-server.js. */
export interface ModelStep {
  /** Shell commands run in order through the CLI's shell tool. Placeholders: {job} {report} {round} {step} {role}. */
  run?: string[];
  /** A reviewer passes when the output of every `run` command contains this. */
  passWhen?: string;
  /** The verdict, whatever the checks say. */
  verdict?: 'PASS' | 'NOT PASS';
  /** The report's text (reviewers default to their check output). */
  report?: string;
  /** The one-line `--detail` of `completed`. */
  detail?: string;
  /** Report this with the brief's `error` command instead of completing. */
  error?: string;
  /** Acknowledge nothing and run nothing (the job never starts). */
  silent?: boolean;
  /** The text that ends the turn. */
  final?: string;
  /** The "orchestrate" step: the text that picks the command line out of the skill (default " job submit "). */
  find?: string;
}

export interface ModelServerConfig {
  /** By "<step>:<role>", "<step>", "<role>" or "default"; step is the loop hint's, else "job" ("orchestrate" for a typed delegation). */
  steps?: Record<string, ModelStep>;
  /** Overrides for one CLI. */
  agents?: { codex?: { steps: Record<string, ModelStep> }; claude?: { steps: Record<string, ModelStep> } };
  /** Wait before every answer (ms). */
  delayMs?: number;
}

/** One line of the server's log: a request, or what it decided to answer. */
export interface ModelLogEntry {
  at: string;
  method?: string;
  path?: string;
  api?: 'responses' | 'messages';
  /** The command it had the CLI run, or the text it ended the turn with. */
  cmd?: string;
  text?: string;
  why?: string;
  job?: string;
  step?: string;
  role?: string;
  verdict?: string;
  report?: string;
  refused?: boolean;
  error?: string;
  [key: string]: unknown;
}

/** One answer's usage, exactly as the server returned it. */
export interface ModelUsageEntry {
  at: string;
  api: 'responses' | 'messages';
  model: string | null;
  /** The job whose turn the answer belongs to; null for a side request (a title, a probe). */
  job: string | null;
  /** The request offered tools (a turn of the conversation, not a side request). */
  tools: boolean;
  usage: Record<string, unknown>;
}

export interface ModelServer {
  port: number;
  /** http://127.0.0.1:PORT (codex gets `${url}/v1`). */
  url: string;
  /** The server's JSON-lines log. */
  log: string;
  /** The log so far. */
  entries(): ModelLogEntry[];
  /** The usage it returned, one entry per answer (MAM_MODEL_USAGE_LOG). */
  usage(): ModelUsageEntry[];
  /** Connections a CLI tried to open beyond this server (HTTPS_PROXY points here): host:port each. */
  outbound(): string[];
  /** The bodies of the requests so far, in order (only with `dumpRequests`). */
  requests(): string[];
  stop(): Promise<void>;
}

/** Starts test/fixtures/model-server.js with `config`; resolves once it listens. */
export async function startModelServer(config: ModelServerConfig = {}, options: { timeoutMs?: number; dumpRequests?: boolean } = {}): Promise<ModelServer> {
  const dir = tempDir('model-server');
  const configFile = path.join(dir, 'config.json');
  const log = path.join(dir, 'requests.jsonl');
  const usageLog = path.join(dir, 'usage.jsonl');
  const dump = path.join(dir, 'requests');
  fs.writeFileSync(configFile, JSON.stringify(config, null, 2));
  if (options.dumpRequests) fs.mkdirSync(dump);
  const child = spawn(process.execPath, [MODEL_SERVER, '--config', configFile, '--log', log, ...(options.dumpRequests ? ['--dump', dump] : [])], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MAM_MODEL_USAGE_LOG: usageLog } });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    let err = '';
    const fail = (why: string): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`model server: ${why}${err ? `: ${err.trim()}` : ''}`));
    };
    const timer = setTimeout(() => fail(`no port within ${options.timeoutMs ?? 10_000} ms`), options.timeoutMs ?? 10_000);
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      try {
        resolve((JSON.parse(line) as { port: number }).port);
      } catch {
        fail(`unexpected first line ${JSON.stringify(line)}`);
      }
    });
    child.once('exit', (code, signal) => fail(`exited (${code ?? signal}) before listening`));
  });
  child.removeAllListeners('exit');
  const entries = (): ModelLogEntry[] => readModelLog(log);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    log,
    entries,
    usage: () => (fs.existsSync(usageLog) ? fs.readFileSync(usageLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as ModelUsageEntry) : []),
    outbound: () => entries().filter((e) => e.method === 'CONNECT' || /^https?:\/\//.test(e.path ?? '')).map((e) => e.path ?? ''),
    requests: () => (fs.existsSync(dump) ? fs.readdirSync(dump).sort().map((f) => fs.readFileSync(path.join(dump, f), 'utf8')) : []),
    stop: () => stopChild(child),
  };
}

export function readModelLog(file: string): ModelLogEntry[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as ModelLogEntry);
}

// ---------------------------------------------------------------------------------------------
// A HOME for both CLIs.

export interface AgentHomeOptions {
  /** The model server both CLIs talk to. */
  server: { url: string };
  /** Folders the agents will run in (each workspace, worktree …): trusted unless `trustProjects` is false. */
  projects?: string[];
  /** Pre-answer both CLIs' folder-trust screens for `projects` (default true). */
  trustProjects?: boolean;
  /** Pre-accept claude's Bypass Permissions warning, which otherwise defaults to "No, exit" (default true). */
  acceptBypass?: boolean;
  /** Pre-approve the API key claude finds in its environment, which otherwise defaults to "No" (default true). */
  approveKey?: boolean;
  /** Mark claude's first run done; without it claude checks its own service at start and exits 1 (default true). */
  onboarded?: boolean;
  /** Give codex the test model provider; false leaves it with no provider and no credentials: its sign-in screen (default true). */
  codexLogin?: boolean;
  /** Leave codex's update check on with a newer version cached, so it opens on its "Update available" screen (default false). */
  codexUpdatePrompt?: boolean;
}

/**
 * A new temp HOME configured for codex and claude to use `server`, with every first-run question
 * pre-answered except those the options leave out; and a git identity so agents can commit.
 */
export function agentHome(options: AgentHomeOptions): string {
  const home = tempDir('agent-home');
  const projects = unique((options.projects ?? []).flatMap((p) => [path.resolve(p), realpath(p)]));
  const trust = options.trustProjects !== false;

  // codex: ~/.codex/config.toml
  const toml: string[] = [];
  if (options.codexLogin !== false) toml.push(`model = ${q(CODEX_MODEL)}`, `model_provider = ${q(CODEX_PROVIDER)}`);
  toml.push(
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    // Offline: no release check (and no "Update available" screen, whose default runs npm -g).
    `check_for_update_on_startup = ${options.codexUpdatePrompt ? 'true' : 'false'}`,
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    // Each of these otherwise reaches out at start (plugin catalogues, connectors).
    '[features]',
    'plugins = false',
    'apps = false',
    'remote_plugin = false',
    'in_app_updates = false',
    '',
    '[tui]',
    'show_tooltips = false',
  );
  if (options.codexLogin !== false) {
    toml.push('', `[model_providers.${CODEX_PROVIDER}]`, 'name = "MAM test model server"', `base_url = ${q(`${options.server.url}/v1`)}`, 'wire_api = "responses"', `env_key = ${q(CODEX_KEY_VARIABLE)}`);
  }
  if (trust) for (const p of projects) toml.push('', `[projects.${q(p)}]`, 'trust_level = "trusted"');
  writeFile(path.join(home, '.codex/config.toml'), `${toml.join('\n')}\n`);
  if (options.codexUpdatePrompt) {
    writeFile(path.join(home, '.codex/version.json'), JSON.stringify({ latest_version: '0.999.0', last_checked_at: new Date().toISOString(), dismissed_version: null }));
  }

  // claude: ~/.claude.json and ~/.claude/settings.json
  const claudeJson: Record<string, unknown> = {};
  if (options.onboarded !== false) claudeJson.hasCompletedOnboarding = true;
  if (trust && projects.length > 0) claudeJson.projects = Object.fromEntries(projects.map((p) => [p, { hasTrustDialogAccepted: true }]));
  if (options.approveKey !== false) claudeJson.customApiKeyResponses = { approved: [TEST_API_KEY.slice(-20)], rejected: [] };
  writeFile(path.join(home, '.claude.json'), `${JSON.stringify(claudeJson, null, 2)}\n`);
  writeFile(path.join(home, '.claude/settings.json'), `${JSON.stringify(options.acceptBypass !== false ? { skipDangerousModePermissionPrompt: true } : {}, null, 2)}\n`);

  // git: agents commit in the test repos.
  writeFile(path.join(home, '.gitconfig'), '[user]\n\tname = MAM Test Agent\n\temail = agent@mam.invalid\n[init]\n\tdefaultBranch = main\n');
  return home;
}

/**
 * The environment a `mam` process (and so the tmux server it starts, and every pane) needs for the
 * real CLIs to run from `home` against `server` and nowhere else: the CLIs first on PATH, the key
 * variables, claude's base URL, every documented switch that keeps them from phoning home or
 * updating themselves, and a proxy pointing at the server so that anything they still try to reach
 * is refused there (and logged: `server.outbound()`) instead of leaving the machine.
 */
export function agentEnv(home: string, server: { url: string }, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  for (const k of Object.keys(env)) {
    // Whatever the surrounding shell has for these services must not leak into the test.
    if (/^(ANTHROPIC_|OPENAI_|CLAUDE_|CODEX_)/.test(k) || /^(https?|no|all)_proxy$/i.test(k)) delete env[k];
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
    PATH: `${AGENTS_BIN}${path.delimiter}${env.PATH ?? '/usr/bin:/bin'}`,
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
    // Both: anything beyond 127.0.0.1 goes to the model server as a CONNECT, which it refuses.
    HTTPS_PROXY: server.url,
    HTTP_PROXY: server.url,
    https_proxy: server.url,
    http_proxy: server.url,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}

/** The file in which the CLI keeps conversation `id` of `workspace`, if it does (claude: by folder; codex: by date). */
export function conversationFile(home: string, workspace: string, agent: 'claude' | 'codex', id: string): string | undefined {
  if (agent === 'claude') {
    const file = path.join(home, '.claude', 'projects', claudeSlug(workspace), `${id}.jsonl`);
    return fs.existsSync(file) ? file : undefined;
  }
  const walk = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
  const root = path.join(home, '.codex', 'sessions');
  return fs.existsSync(root) ? walk(root).find((f) => f.endsWith(`-${id}.jsonl`)) : undefined;
}

function q(s: string): string {
  return JSON.stringify(s); // a TOML basic string has JSON's escapes
}

function realpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

function writeFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/**
 * What the model server returned for a job's requests, counted as MAM counts usage (docs/usage.md):
 * input includes cached tokens and cache writes, output includes reasoning.
 */
export function servedUsage(server: ModelServer, jobId: string): { input_tokens: number; cached_input_tokens: number; output_tokens: number; requests: number } {
  const sum = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, requests: 0 };
  const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
  for (const e of server.usage().filter((x) => x.job === jobId)) {
    const u = e.usage;
    sum.requests++;
    sum.output_tokens += n(u.output_tokens);
    if (e.api === 'messages') {
      sum.input_tokens += n(u.input_tokens) + n(u.cache_read_input_tokens) + n(u.cache_creation_input_tokens);
      sum.cached_input_tokens += n(u.cache_read_input_tokens);
    } else {
      sum.input_tokens += n(u.input_tokens);
      sum.cached_input_tokens += n((u.input_tokens_details as { cached_tokens?: number } | undefined)?.cached_tokens);
    }
  }
  return sum;
}
