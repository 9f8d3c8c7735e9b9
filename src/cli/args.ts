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
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, spec] of Object.entries(all)) {
    config[name] = { type: spec.kind === 'boolean' ? 'boolean' : 'string', ...(spec.short ? { short: spec.short } : {}) };
  }
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options: config, strict: true, allowPositionals: true }) as typeof parsed;
  } catch (err) {
    throw new UsageError(`${describeParseError(err, all)}; see 'mam ${command} --help'`);
  }
  const out: Record<string, ParsedValue> = {};
  for (const [name, spec] of Object.entries(all)) {
    const raw = parsed.values[name];
    if (raw === undefined) {
      if (spec.required && !parsed.values.help) throw new UsageError(`mam ${command}: --${name} is required`);
      continue;
    }
    out[name] = convert(command, name, spec, raw);
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
  return { options: out, positionals: parsed.positionals };
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
