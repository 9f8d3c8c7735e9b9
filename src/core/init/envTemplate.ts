import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENT_NAMES, adapterFor } from '../agents';
import { parseEnvFile } from '../config/envFile';
import { CONFIG_KEYS } from '../config/settings';

/** The settings an older setup kept in a plain `.env`, carried into the new `.mam.env`. */
export interface LegacySettings {
  /** MAM's settings found in `.env`, in its order. */
  values: ReadonlyMap<string, string>;
  /** MAM's settings on lines that could not be read (`.env:3 MQTT_PASSWORD`): set them by hand. */
  unreadable: string[];
}

/**
 * The `.mam.env` that `mam init` writes: every setting MAM reads from the file, commented out at its
 * default, each under a one-line explanation. Built from CONFIG_KEYS and the agent adapters, so a
 * new setting shows up here without anyone remembering to add it. Uncommenting any line (or all of
 * them) gives a valid file that changes nothing. Settings `carried` from a legacy `.env` come first,
 * set, and their commented lines are left out.
 */
export function envTemplate(carried: ReadonlyMap<string, string> = new Map()): string {
  const lines = [
    '# Multi-Agent Mux settings for this workspace (written by `mam init`).',
    '# Every setting is commented out at its default: uncomment a line to change it.',
    '# Syntax: KEY=VALUE lines, # comments, optional `export`, \'single\' or "double" quotes; nothing is expanded or run.',
    '# A command-line flag beats the environment, which beats a VS Code setting, which beats this file.',
    '# This file may hold broker credentials: keep it out of git (`mam init` lists it in .git/info/exclude).',
  ];
  if (carried.size) {
    lines.push('', '# --- taken from .env by `mam init` (.env itself is left as it was) ---');
    for (const [key, value] of carried) lines.push(`${key}=${envValue(value)}`);
  }
  const line = (key: string, value: string) => (carried.has(key) ? [] : [`# ${key}=${envValue(value)}`]);
  // Grouped as the VS Code settings are (timers.*, broker.*, …), in the order CONFIG_KEYS lists them.
  const groups = new Map<string, string[]>();
  for (const spec of Object.values(CONFIG_KEYS)) {
    const dot = spec.setting.indexOf('.');
    const group = dot > 0 ? spec.setting.slice(0, dot) : 'general';
    const entry = line(spec.env, String(spec.default));
    if (entry.length) groups.set(group, [...(groups.get(group) ?? []), `# ${spec.describe}`, ...entry]);
  }
  for (const [group, settings] of groups) lines.push('', `# --- ${group} ---`, ...settings);
  lines.push('', '# --- agents: the program and the flags MAM starts each agent with (split into words; nothing is expanded) ---');
  for (const name of AGENT_NAMES) {
    const adapter = adapterFor(name);
    if (adapter.program.length === 0) continue; // shell: the program is given per session
    const upper = name.toUpperCase();
    lines.push(...line(`MAM_AGENT_COMMAND_${upper}`, adapter.program.join(' ')), ...line(`MAM_AGENT_ARGS_${upper}`, adapter.defaultArgs.join(' ')));
  }
  return `${lines.join('\n')}\n`;
}

/** Every variable MAM reads from `.mam.env`. */
export function mamSettingNames(): Set<string> {
  const names = new Set(Object.values(CONFIG_KEYS).map((s) => s.env));
  for (const name of AGENT_NAMES) names.add(`MAM_AGENT_COMMAND_${name.toUpperCase()}`).add(`MAM_AGENT_ARGS_${name.toUpperCase()}`);
  return names;
}

/**
 * MAM's settings in the workspace's `.env`, where the seeds' installer kept them: only the variables
 * MAM reads are taken (a project's `.env` holds the project's own secrets too), each line read on
 * its own so that a shell-only line elsewhere in the file costs nothing. Undefined without a `.env`
 * or without any of MAM's settings in it.
 */
export function legacySettings(workspace: string): LegacySettings | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(workspace, '.env'), 'utf8');
  } catch {
    return undefined;
  }
  const names = mamSettingNames();
  const values = new Map<string, string>();
  const unreadable: string[] = [];
  text.replace(/^\uFEFF/, '').split(/\r?\n/).forEach((raw, index) => {
    const key = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(raw)?.[1];
    if (!key || !names.has(key)) return;
    try {
      const parsed = parseEnvFile(raw, '.env').get(key);
      if (parsed !== undefined) values.set(key, parsed);
    } catch {
      unreadable.push(`.env:${index + 1} ${key}`);
    }
  });
  return values.size || unreadable.length ? { values, unreadable } : undefined;
}

/** A value as `.mam.env` reads it back unchanged: bare when it can be, else double-quoted. */
function envValue(value: string): string {
  if (/^[^\s"'#\\]*$/.test(value)) return value;
  const escapes: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r', '"': '\\"', '\\': '\\\\', $: '\\$' };
  return `"${value.replace(/[\n\t\r"\\$]/g, (c) => escapes[c]!)}"`;
}
