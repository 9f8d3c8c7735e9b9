import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError, errorMessage } from '../base/errors';
import { printable } from '../base/ids';
import { parseEnvFile } from './envFile';
import { AGENT_NAMES, type AgentName } from '../agents/adapter';
import { splitWords } from '../base/shellWords';

/** Where a resolved value came from, most specific first. */
export type ConfigSource = 'flag' | 'env' | 'setting' | '.mam.env' | 'default';

type Parser<T> = (raw: string) => T;

interface KeySpec<T> {
  /** Environment / `.mam.env` variable. */
  env: string;
  /** The seeds' name for the same variable, read (in the environment, then `.mam.env`) where `env` is unset. */
  seedEnv?: string;
  /** VS Code setting under `mam.` (the extension passes these in). */
  setting: string;
  default: T;
  parse: Parser<T>;
  /** One line for `mam doctor` and the settings' descriptions. */
  describe: string;
}

const seconds = (min: number): Parser<number> => (raw) => {
  const text = raw.trim();
  if (!/^\d+(\.\d+)?$/.test(text)) throw new Error(`must be a number of seconds (got '${printable(raw, 40)}')`);
  const n = Number(text);
  if (n < min) throw new Error(`must be at least ${min}`);
  return n;
};
const wholeNumber = (min: number, max: number): Parser<number> => (raw) => {
  const text = raw.trim();
  if (!/^\d+$/.test(text)) throw new Error(`must be a whole number (got '${printable(raw, 40)}')`);
  const n = Number(text);
  if (n < min || n > max) throw new Error(`must be between ${min} and ${max}`);
  return n;
};
const text: Parser<string> = (raw) => raw;
const boolean: Parser<boolean> = (raw) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
  throw new Error(`must be true or false (got '${printable(raw, 40)}')`);
};
const muxKind: Parser<'tmux' | 'herdr'> = (raw) => {
  if (raw === 'tmux' || raw === 'herdr') return raw;
  throw new Error(`must be tmux or herdr (got '${printable(raw, 40)}')`);
};

/** Every setting MAM reads, with its variable, VS Code setting, default and meaning. */
export const CONFIG_KEYS = {
  startTimeoutS: { env: 'MAM_START_TIMEOUT_S', setting: 'timers.startTimeout', default: 180, parse: seconds(1), describe: 'T: seconds an agent has to publish `started` after the prompt is delivered' },
  heartbeatS: { env: 'MAM_HEARTBEAT_S', setting: 'timers.heartbeat', default: 30, parse: seconds(1), describe: 'N: seconds between automatic heartbeats' },
  livenessK: { env: 'MAM_LIVENESS_K', setting: 'timers.livenessMultiplier', default: 4, parse: wholeNumber(1, 1000), describe: 'K: a job with no event for K×N seconds times out' },
  jobTimeoutS: { env: 'MAM_JOB_TIMEOUT_S', setting: 'timers.jobTimeout', default: 3600, parse: seconds(1), describe: 'wall-clock budget of a job, in seconds' },
  dispatchWaitS: { env: 'MAM_DISPATCH_WAIT_S', setting: 'timers.dispatchWait', default: 300, parse: seconds(0), describe: 'seconds to wait for a busy session before giving up on delivery' },
  mux: { env: 'MAM_MUX', setting: 'multiplexer', default: 'tmux' as 'tmux' | 'herdr', parse: muxKind, describe: 'default multiplexer for new sessions' },
  tmuxServer: { env: 'MAM_TMUX_SERVER', seedEnv: 'TMUX_SERVER_NAME', setting: 'tmuxServer', default: '', parse: text, describe: "tmux server (-L) name; empty: mam-<workspace>; default: your own tmux server, shared with you" },
  herdrSession: { env: 'MAM_HERDR_SESSION', seedEnv: 'HERDR_SESSION_NAME', setting: 'herdrSession', default: '', parse: text, describe: "herdr session name; empty: mam-<workspace>; default: your own herdr, shared with you" },
  brokerHost: { env: 'MQTT_BROKER', setting: 'broker.host', default: '', parse: text, describe: 'external MQTT broker host or URL; empty: the embedded broker' },
  brokerPort: { env: 'MQTT_PORT', setting: 'broker.port', default: 0, parse: wholeNumber(0, 65535), describe: 'external broker port; 0: 1883, or 8883 with TLS' },
  brokerUsername: { env: 'MQTT_USERNAME', setting: 'broker.username', default: '', parse: text, describe: 'external broker user name' },
  brokerPassword: { env: 'MQTT_PASSWORD', setting: 'broker.password', default: '', parse: text, describe: 'external broker password (VS Code keeps it in SecretStorage)' },
  brokerTls: { env: 'MQTT_TLS', setting: 'broker.tls', default: false, parse: boolean, describe: 'connect to the external broker over TLS' },
  brokerCa: { env: 'MQTT_CA', setting: 'broker.ca', default: '', parse: text, describe: 'CA certificate file for the external broker' },
  dispatchSecret: { env: 'MAM_DISPATCH_SECRET', setting: 'remote.dispatchSecret', default: '', parse: text, describe: 'secret that signs dispatches to remote runners' },
  reportsDir: { env: 'MAM_REPORTS_DIR', setting: 'reportsDir', default: '.mam/reports', parse: text, describe: 'where a passing review loop keeps its reports: a folder inside the workspace, relative to it' },
} satisfies Record<string, KeySpec<unknown>>;

/**
 * Every environment variable the settings read (each key's, the seeds' names, the agent overrides):
 * what a process started with a reduced environment must be handed by name to see them (codex
 * starts an MCP server with a few variables only).
 */
export function settingVariables(): string[] {
  const keys: ReadonlyArray<KeySpec<unknown>> = Object.values(CONFIG_KEYS);
  return [...keys.flatMap((k) => [k.env, ...(k.seedEnv ? [k.seedEnv] : [])]), ...AGENT_NAMES.flatMap((a) => [`MAM_AGENT_COMMAND_${a.toUpperCase()}`, `MAM_AGENT_ARGS_${a.toUpperCase()}`])];
}

export type ConfigKey = keyof typeof CONFIG_KEYS;
export type MamConfig = { [K in ConfigKey]: (typeof CONFIG_KEYS)[K]['default'] };

/** A per-agent override of the program and/or its flags, split into words (never a shell string). */
export interface AgentOverride {
  program?: string[];
  args?: string[];
}

export interface ResolvedConfig {
  values: MamConfig;
  sources: Record<ConfigKey, ConfigSource>;
  /** The seeds' variable a value was read from, where it was (`TMUX_SERVER_NAME`), by key. */
  seedVariables?: Partial<Record<ConfigKey, string>>;
  /** MAM_AGENT_COMMAND_<AGENT> / MAM_AGENT_ARGS_<AGENT> (settings `agents.<agent>.command|args`). */
  agents: Partial<Record<AgentName, AgentOverride>>;
  /** The `.mam.env` that was read, if any. */
  envFile?: string;
}

export interface ResolveConfigInput {
  workspace: string;
  env: NodeJS.ProcessEnv;
  /** VS Code settings (already read by the extension), by setting name without `mam.`. */
  settings?: Readonly<Record<string, unknown>>;
  /** Command-line flags that override everything. */
  flags?: Partial<MamConfig>;
  /** Read the workspace's `.mam.env` (default true). */
  readEnvFile?: boolean;
}

/**
 * Resolves every setting in one place: a flag beats the process environment, which beats a VS Code
 * setting, which beats `.mam.env`, which beats the default. Any malformed value is an error naming
 * where it came from.
 */
export function resolveConfig(input: ResolveConfigInput): ResolvedConfig {
  const envFile = path.join(input.workspace, '.mam.env');
  let fileValues = new Map<string, string>();
  let envFileRead: string | undefined;
  if (input.readEnvFile !== false && fs.existsSync(envFile)) {
    fileValues = parseEnvFile(fs.readFileSync(envFile, 'utf8'), envFile);
    envFileRead = envFile;
  }
  const values = {} as Record<ConfigKey, unknown>;
  const sources = {} as Record<ConfigKey, ConfigSource>;
  const seedVariables: Partial<Record<ConfigKey, string>> = {};
  for (const key of Object.keys(CONFIG_KEYS) as ConfigKey[]) {
    const spec: KeySpec<unknown> = CONFIG_KEYS[key];
    const flag = input.flags?.[key];
    // The seeds' variable counts where MAM's own is not set: in the environment, then in .mam.env.
    const seed = spec.seedEnv;
    const envName = (input.env[spec.env] === undefined || input.env[spec.env] === '') && seed && input.env[seed] ? seed : spec.env;
    const fromEnv = input.env[envName];
    const fromSetting = input.settings?.[spec.setting];
    const fileName = !fileValues.has(spec.env) && seed && fileValues.has(seed) ? seed : spec.env;
    const fromFile = fileValues.get(fileName);
    const parse = (raw: string, name: string, where: string): unknown => {
      try {
        return spec.parse(raw);
      } catch (err) {
        throw new ConfigError(`${name} ${where}: ${errorMessage(err)}`);
      }
    };
    if (flag !== undefined) {
      values[key] = flag;
      sources[key] = 'flag';
    } else if (fromEnv !== undefined && fromEnv !== '') {
      values[key] = parse(fromEnv, envName, 'in the environment');
      sources[key] = 'env';
      if (envName !== spec.env) seedVariables[key] = envName;
    } else if (fromSetting !== undefined && fromSetting !== null && fromSetting !== '') {
      values[key] = parse(String(fromSetting), spec.env, `(setting mam.${spec.setting})`);
      sources[key] = 'setting';
    } else if (fromFile !== undefined) {
      values[key] = parse(fromFile, fileName, `in ${envFile}`);
      sources[key] = '.mam.env';
      if (fileName !== spec.env) seedVariables[key] = fileName;
    } else {
      values[key] = spec.default;
      sources[key] = 'default';
    }
  }
  const agents: ResolvedConfig['agents'] = {};
  for (const agent of AGENT_NAMES) {
    const override: AgentOverride = {};
    for (const [field, variable, setting] of [
      ['program', `MAM_AGENT_COMMAND_${agent.toUpperCase()}`, `agents.${agent}.command`],
      ['args', `MAM_AGENT_ARGS_${agent.toUpperCase()}`, `agents.${agent}.args`],
    ] as const) {
      const fromEnv = input.env[variable];
      const fromSetting = input.settings?.[setting];
      const [raw, where] =
        fromEnv !== undefined && fromEnv !== '' ? [fromEnv, 'in the environment']
        : typeof fromSetting === 'string' && fromSetting !== '' ? [fromSetting, `(setting mam.${setting})`]
        : fileValues.has(variable) ? [fileValues.get(variable)!, `in ${envFile}`]
        : [undefined, ''];
      if (raw === undefined) continue;
      try {
        override[field] = splitWords(raw);
      } catch (err) {
        throw new ConfigError(`${variable} ${where}: ${errorMessage(err)}`);
      }
      if (field === 'program' && override.program!.length === 0) throw new ConfigError(`${variable} ${where}: names no program`);
    }
    if (override.program || override.args) agents[agent] = override;
  }
  return { values: values as MamConfig, sources, agents, ...(Object.keys(seedVariables).length ? { seedVariables } : {}), ...(envFileRead ? { envFile: envFileRead } : {}) };
}

/** Where a setting's value came from, for a message about it: `MAM_REPORTS_DIR in the environment`, `the setting mam.reportsDir` … */
export function sourceOf(config: ResolvedConfig, key: ConfigKey): string {
  const spec = CONFIG_KEYS[key];
  const variable = config.seedVariables?.[key] ?? spec.env;
  switch (config.sources[key]) {
    case 'flag':
      return `the flag for ${spec.env}`;
    case 'env':
      return `${variable} in the environment`;
    case 'setting':
      return `the setting mam.${spec.setting}`;
    case '.mam.env':
      return `${variable} in ${config.envFile ?? '.mam.env'}`;
    case 'default':
      return `the default ${spec.env}`;
  }
}

/** K×N: seconds without any event before a started job times out. */
export function idleTimeoutS(config: MamConfig): number {
  return config.livenessK * config.heartbeatS;
}
