import { parseArgs } from 'node:util';
import { UsageError, errorCode, errorMessage } from '../core/base/errors';
import { printable } from '../core/base/ids';

export type OptionKind = 'string' | 'boolean' | 'seconds' | 'count';

/** The value an option of each kind is parsed to: text, a flag, or a number (seconds ≥ 0, a count ≥ 1). */
interface KindValue {
  string: string;
  boolean: boolean;
  seconds: number;
  count: number;
}

interface OptionSpecOf<K extends OptionKind> {
  kind: K;
  description: string;
  /** Placeholder shown in help, e.g. `DIR`. */
  value?: string;
  short?: string;
  /** Refused when missing; so the command always has a value. */
  required?: boolean;
  /** Used when the option is not given; so the command always has a value. Help says it in the description. */
  default?: KindValue[K];
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

export type OptionSpec = { [K in OptionKind]: OptionSpecOf<K> }[OptionKind];

/** A command's options by name, declared `as const` (or through `defineCommand`) so their values get types. */
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

export interface PositionalSpec {
  name: string;
  description: string;
  required?: boolean;
  /** The last positional only: it takes every remaining argument (`mam job wait JOB…`). */
  variadic?: boolean;
}

export type ParsedValue = KindValue[OptionKind];

type ValueOf<S extends OptionSpec> = KindValue[S['kind']];
type AlwaysGiven<S> = S extends { required: true } ? true : S extends { default: ParsedValue } ? true : false;

/**
 * The parsed options of a spec: options that are required or have a default are always present,
 * the others may be missing; a `besideAlias` option adds the name its seed-spelled value is kept under.
 */
export type OptionValues<O extends OptionSpecs> = {
  -readonly [N in keyof O as AlwaysGiven<O[N]> extends true ? N : never]: ValueOf<O[N]>;
} & {
  -readonly [N in keyof O as AlwaysGiven<O[N]> extends true ? never : N]?: ValueOf<O[N]>;
} & {
  -readonly [N in keyof O as O[N] extends { besideAlias: infer B extends string } ? B : never]?: ValueOf<O[N]>;
};

export interface ParsedArgs<O extends OptionSpecs = OptionSpecs> {
  options: OptionValues<O> & OptionValues<typeof GLOBAL_OPTIONS>;
  positionals: string[];
  /** The alias an option was given under, by option name (absent when given under its own name). */
  aliasUsed: Partial<Record<Extract<keyof O, string>, string>>;
}

/** Options every command takes. */
export const GLOBAL_OPTIONS = {
  workspace: { kind: 'string', value: 'DIR', description: 'the workspace (default: $MAM_WORKSPACE, else the nearest folder with .mam/ or the git root)' },
  help: { kind: 'boolean', short: 'h', description: 'show help for this command' },
} as const satisfies OptionSpecs;

/** Narrows an option's text to one of the values it may take (the command says what else it takes). */
export function isOneOf<T extends string>(allowed: readonly T[], value: string): value is T {
  return allowed.some((a) => a === value);
}

/**
 * Parses `argv` strictly against the command's options: unknown options, missing values, a value
 * where none belongs, bad numbers and extra positionals are one-line usage errors (exit 64).
 * The values it returns are those `OptionValues<O>` promises: each converted to its kind, the
 * defaults filled in, the required ones present (not checked under `--help`: the command does not run then).
 */
export function parseCommandArgs<O extends OptionSpecs>(
  command: string,
  argv: readonly string[],
  options: O,
  positionals: readonly PositionalSpec[],
): ParsedArgs<O> {
  const all: OptionSpecs = { ...GLOBAL_OPTIONS, ...options };
  // Every name an option answers to, its own and its aliases, each mapped to its spec.
  const byName: Record<string, OptionSpec> = {};
  for (const [name, spec] of Object.entries(all)) for (const n of [name, ...(spec.aliases ?? [])]) byName[n] = spec;
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, spec] of Object.entries(byName)) {
    config[name] = { type: spec.kind === 'boolean' ? 'boolean' : 'string', ...(spec.short && all[name] === spec ? { short: spec.short } : {}) };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: config, strict: true, allowPositionals: true, tokens: true });
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
      if (spec.default !== undefined) out[name] = spec.default;
      continue;
    }
    out[name] = convert(command, given, spec, parsed.values[given]!);
  }
  if (!parsed.values.help) {
    const needed = positionals.filter((p) => p.required).length;
    if (parsed.positionals.length < needed) {
      throw new UsageError(`mam ${command}: missing ${positionals[parsed.positionals.length]!.name.toUpperCase()}; see 'mam ${command} --help'`);
    }
    if (parsed.positionals.length > positionals.length && !positionals.at(-1)?.variadic) {
      throw new UsageError(`mam ${command}: unexpected argument '${printable(parsed.positionals[positionals.length]!, 40)}'`);
    }
  }
  // The one place the spec's types meet the parsed values: the loop above made them so.
  return { options: out as ParsedArgs<O>['options'], positionals: parsed.positionals, aliasUsed };
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
  const message = errorMessage(err);
  const option = /'(-{1,2}[^'\s]+)/.exec(message)?.[1];
  switch (errorCode(err)) {
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
