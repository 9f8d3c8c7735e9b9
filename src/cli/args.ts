import { parseArgs } from 'node:util';
import { UsageError } from '../core/base/errors';
import { printable } from '../core/base/ids';

export type OptionKind = 'string' | 'boolean' | 'seconds' | 'count';

export interface OptionSpec {
  kind: OptionKind;
  description: string;
  /** Placeholder shown in help, e.g. `DIR`. */
  value?: string;
  short?: string;
  required?: boolean;
  /**
   * Other names for the same option (the seeds' spellings, e.g. `agent-session` for `session`),
   * listed in help on this option's line. The option is given once: under two of its names, or
   * under an alias twice, it is a usage error.
   */
  aliases?: readonly string[];
  /**
   * Given together with one of its aliases, this name's value is kept under this option instead of
   * being refused: the seeds wrote `--reviewer AGENT --reviewer-session herdr:NAME`, where
   * `--reviewer` named the reviewer's agent.
   */
  besideAlias?: string;
}

export interface PositionalSpec {
  name: string;
  description: string;
  required?: boolean;
}

export type ParsedValue = string | boolean | number | undefined;

export interface ParsedArgs {
  options: Record<string, ParsedValue>;
  positionals: string[];
  /** The alias an option was given under, by option name (absent when given under its own name). */
  aliasUsed: Record<string, string>;
}

/** Options every command takes. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  workspace: { kind: 'string', value: 'DIR', description: 'the workspace (default: $MAM_WORKSPACE, else the nearest folder with .mam/ or the git root)' },
  help: { kind: 'boolean', short: 'h', description: 'show help for this command' },
};

/**
 * Parses `argv` strictly against the command's options: unknown options, missing values, a value
 * where none belongs, bad numbers and extra positionals are one-line usage errors (exit 64).
 */
export function parseCommandArgs(
  command: string,
  argv: readonly string[],
  options: Record<string, OptionSpec>,
  positionals: readonly PositionalSpec[],
): ParsedArgs {
  const all = { ...GLOBAL_OPTIONS, ...options };
  // Every name an option answers to, its own and its aliases, each mapped to its spec.
  const byName: Record<string, OptionSpec> = {};
  for (const [name, spec] of Object.entries(all)) for (const n of [name, ...(spec.aliases ?? [])]) byName[n] = spec;
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, spec] of Object.entries(byName)) {
    config[name] = { type: spec.kind === 'boolean' ? 'boolean' : 'string', ...(spec.short && all[name] === spec ? { short: spec.short } : {}) };
  }
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[]; tokens: Array<{ kind: string; name?: string }> };
  try {
    parsed = parseArgs({ args: [...argv], options: config, strict: true, allowPositionals: true, tokens: true }) as typeof parsed;
  } catch (err) {
    throw new UsageError(`${describeParseError(err, byName)}; see 'mam ${command} --help'`);
  }
  const times = (name: string) => parsed.tokens.filter((t) => t.kind === 'option' && t.name === name).length;
  const out: Record<string, ParsedValue> = {};
  const aliasUsed: Record<string, string> = {};
  for (const [name, spec] of Object.entries(all)) {
    const aliases = (spec.aliases ?? []).filter((a) => parsed.values[a] !== undefined);
    for (const a of aliases) if (times(a) > 1) throw new UsageError(`mam ${command}: --${a} is given twice; give it once`);
    let given = parsed.values[name] === undefined ? undefined : name;
    if (aliases.length > 0) {
      if (given && spec.besideAlias && aliases.length === 1) out[spec.besideAlias] = convert(command, name, spec, parsed.values[name]!);
      else if (given || aliases.length > 1) throw new UsageError(`mam ${command}: ${[...(given ? [name] : []), ...aliases].map((n) => `--${n}`).join(' and ')} are the same option; give it once`);
      given = aliases[0]!;
      aliasUsed[name] = given;
    }
    if (given === undefined) {
      if (spec.required && !parsed.values.help) throw new UsageError(`mam ${command}: --${name} is required`);
      continue;
    }
    out[name] = convert(command, given, spec, parsed.values[given]!);
  }
  if (!parsed.values.help) {
    const needed = positionals.filter((p) => p.required).length;
    if (parsed.positionals.length < needed) {
      throw new UsageError(`mam ${command}: missing ${positionals[parsed.positionals.length]!.name.toUpperCase()}; see 'mam ${command} --help'`);
    }
    if (parsed.positionals.length > positionals.length) {
      throw new UsageError(`mam ${command}: unexpected argument '${printable(parsed.positionals[positionals.length]!, 40)}'`);
    }
  }
  return { options: out, positionals: parsed.positionals, aliasUsed };
}

function convert(command: string, name: string, spec: OptionSpec, raw: string | boolean): ParsedValue {
  if (spec.kind === 'boolean' || typeof raw === 'boolean') return raw;
  if (raw === '' && spec.kind !== 'string') throw new UsageError(`mam ${command}: --${name} needs a value`);
  if (spec.kind === 'seconds') {
    if (!/^\d+(\.\d+)?$/.test(raw)) throw new UsageError(`mam ${command}: --${name} must be a non-negative number of seconds (got '${printable(raw, 40)}')`);
    return Number(raw);
  }
  if (spec.kind === 'count') {
    if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError(`mam ${command}: --${name} must be a whole number ≥ 1 (got '${printable(raw, 40)}')`);
    return Number(raw);
  }
  return raw;
}

function describeParseError(err: unknown, options: Record<string, OptionSpec>): string {
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  const option = /'(-{1,2}[^'\s]+)/.exec(message)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option ?? ''}`.trim();
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const name = option?.replace(/^-+/, '').split(/[ =]/)[0] ?? '';
      const spec = options[name] ?? Object.entries(options).find(([, s]) => s.short === name)?.[1];
      return spec?.kind === 'boolean' ? `--${name} takes no value` : `--${name} needs a value`;
    }
    default:
      return message.split('\n')[0]!.replace(/\.$/, '');
  }
}
