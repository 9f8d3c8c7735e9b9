/**
 * A temp HOME in which every real agent CLI the tests drive (codex, claude, gemini, opencode,
 * copilot, qwen) talks to the project's model server, with its first-run questions pre-answered
 * through its own config files — except those a test leaves out to see MAM name the screen.
 * What each key means, and which screen it answers, is in docs/agent-clis.md.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from './helpers';

/** The key every CLI sends (claude approves a key by its last 20 characters). */
export const TEST_API_KEY = 'sk-mam-test-0123456789abcdefghijklmnopqrst';
/** The model name every CLI is told to use. */
export const TEST_MODEL = 'mam-test-model';
/** The environment variable codex's test provider reads its key from (`env_key`). */
export const CODEX_KEY_VARIABLE = 'MAM_TEST_OPENAI_KEY';
const CODEX_PROVIDER = 'mam-test';
/** opencode's provider id in its config: models are named `<provider>/<model>`. */
const OPENCODE_PROVIDER = 'mam-test';

export interface AgentHomeOptions {
  /** The model server the CLIs talk to. */
  server: { url: string };
  /** Folders the agents will run in (each workspace, worktree …): trusted unless `trustProjects` is false. */
  projects?: string[];
  /** Pre-answer every CLI's folder-trust screen for `projects` (default true). */
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
  /** Choose gemini's API-key sign-in in its settings; false leaves its sign-in choice to a person (default true). */
  geminiLogin?: boolean;
  /** Give qwen the test provider in its settings; false leaves its "Select Authentication Method" screen (default true). */
  qwenLogin?: boolean;
  /** The servers of a trusted project's .mcp.json claude may start, approved as a person does once (default none: claude lists them as pending). */
  claudeMcpApproved?: string[];
}

/**
 * A new temp HOME configured for the CLIs to use `server`, with every first-run question
 * pre-answered except those the options leave out; and a git identity so agents can commit.
 */
export function agentHome(options: AgentHomeOptions): string {
  const home = tempDir('agent-home');
  const projects = unique((options.projects ?? []).flatMap((p) => [path.resolve(p), realpath(p)]));
  const trusted = options.trustProjects !== false ? projects : [];
  writeCodex(home, options, trusted);
  writeClaude(home, options, trusted);
  writeGemini(home, options, trusted);
  writeOpencode(home, options);
  writeCopilot(home, trusted);
  writeQwen(home, options);
  writeFile(path.join(home, '.gitconfig'), '[user]\n\tname = MAM Test Agent\n\temail = agent@mam.invalid\n[init]\n\tdefaultBranch = main\n');
  return home;
}

/** codex: ~/.codex/config.toml. */
function writeCodex(home: string, options: AgentHomeOptions, trusted: string[]): void {
  const toml: string[] = [];
  if (options.codexLogin !== false) toml.push(`model = ${q(TEST_MODEL)}`, `model_provider = ${q(CODEX_PROVIDER)}`);
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
  for (const p of trusted) toml.push('', `[projects.${q(p)}]`, 'trust_level = "trusted"');
  writeFile(path.join(home, '.codex/config.toml'), `${toml.join('\n')}\n`);
  if (options.codexUpdatePrompt) {
    writeFile(path.join(home, '.codex/version.json'), JSON.stringify({ latest_version: '0.999.0', last_checked_at: new Date().toISOString(), dismissed_version: null }));
  }
}

/** claude: ~/.claude.json and ~/.claude/settings.json. */
function writeClaude(home: string, options: AgentHomeOptions, trusted: string[]): void {
  const claudeJson: Record<string, unknown> = {};
  if (options.onboarded !== false) claudeJson.hasCompletedOnboarding = true;
  const mcp = options.claudeMcpApproved ? { enabledMcpjsonServers: options.claudeMcpApproved } : {};
  if (trusted.length > 0) claudeJson.projects = Object.fromEntries(trusted.map((p) => [p, { hasTrustDialogAccepted: true, ...mcp }]));
  if (options.approveKey !== false) claudeJson.customApiKeyResponses = { approved: [TEST_API_KEY.slice(-20)], rejected: [] };
  writeJson(path.join(home, '.claude.json'), claudeJson);
  writeJson(path.join(home, '.claude/settings.json'), options.acceptBypass !== false ? { skipDangerousModePermissionPrompt: true } : {});
}

/**
 * gemini: ~/.gemini/settings.json (the API-key sign-in, the model — without one it first asks a
 * routing model — and no update checks) and ~/.gemini/trustedFolders.json. The base URL and key
 * come from the environment (agentEnv).
 */
function writeGemini(home: string, options: AgentHomeOptions, trusted: string[]): void {
  writeJson(path.join(home, '.gemini/settings.json'), {
    ...(options.geminiLogin !== false ? { security: { auth: { selectedType: 'gemini-api-key' } } } : {}),
    model: { name: TEST_MODEL },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  });
  writeJson(path.join(home, '.gemini/trustedFolders.json'), Object.fromEntries(trusted.map((p) => [p, 'TRUST_FOLDER'])));
}

/**
 * opencode: $XDG_CONFIG_HOME/opencode/opencode.json (agentEnv points XDG_CONFIG_HOME at
 * ~/.config): the server as an OpenAI-compatible provider, every permission allowed, no updates,
 * no sharing. It has no first-run screens.
 */
function writeOpencode(home: string, options: AgentHomeOptions): void {
  const model = `${OPENCODE_PROVIDER}/${TEST_MODEL}`;
  writeJson(path.join(home, '.config/opencode/opencode.json'), {
    model,
    small_model: model,
    autoupdate: false,
    share: 'disabled',
    permission: { '*': 'allow' },
    provider: { [OPENCODE_PROVIDER]: { npm: '@ai-sdk/openai-compatible', name: 'MAM test model server', options: { baseURL: `${options.server.url}/v1`, apiKey: TEST_API_KEY }, models: { [TEST_MODEL]: { name: TEST_MODEL, tool_call: true } } } },
  });
}

/** copilot: ~/.copilot/config.json (trusted folders). Its provider comes from the environment (agentEnv). */
function writeCopilot(home: string, trusted: string[]): void {
  writeJson(path.join(home, '.copilot/config.json'), { trustedFolders: trusted });
}

/**
 * qwen: ~/.qwen/settings.json — ALWAYS written, whatever the options: without
 * `general.enableAutoUpdate: false` qwen runs `npm install --global` of a newer qwen-code in the
 * background. The provider (key, base URL) is in the settings too, so no OPENAI_* variable
 * reaches the other CLIs.
 */
function writeQwen(home: string, options: AgentHomeOptions): void {
  writeJson(path.join(home, '.qwen/settings.json'), {
    ...(options.qwenLogin !== false ? { security: { auth: { selectedType: 'openai', apiKey: TEST_API_KEY, baseUrl: `${options.server.url}/v1` } }, model: { name: TEST_MODEL } } : {}),
    general: { enableAutoUpdate: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  });
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

function writeJson(file: string, value: unknown): void {
  writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
}

function writeFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}
