/**
 * A strict command-line parser for `mam event`, which agents start once per event: what node:util's
 * `parseArgs({ strict: true, allowPositionals: true })` does, with the same tokens, the same values
 * and the same error messages (test/unit/strictArgs.test.ts holds it to parseArgs), without loading
 * parseArgs' two modules (~0.9 ms of a cold `mam event`'s CPU: docs/benchmarks.md). Options are
 * strings or booleans, each given once or last one wins; no defaults, no `multiple`, no `--no-x`.
 */

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
}

export type ParsedValues<S extends Record<string, OptionSpec>> = { [K in keyof S]?: S[K]['type'] extends 'string' ? string : boolean };

/** A usage error, with parseArgs' code (ERR_PARSE_ARGS_UNKNOWN_OPTION, ERR_PARSE_ARGS_INVALID_OPTION_VALUE) and message. */
export class StrictArgsError extends Error {
  constructor(
    readonly code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' | 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE',
    message: string,
  ) {
    super(message);
    this.name = 'StrictArgsError';
  }
}

interface OptionToken {
  name: string;
  rawName: string;
  value: string | undefined;
  inlineValue: boolean | undefined;
}

export function parseStrictArgs<S extends Record<string, OptionSpec>>(args: readonly string[], options: S): { values: ParsedValues<S>; positionals: string[] } {
  const spec = (name: string): OptionSpec | undefined => (Object.prototype.hasOwnProperty.call(options, name) ? options[name] : undefined);
  const longFor = (short: string): string => Object.keys(options).find((name) => options[name]!.short === short) ?? short;
  const tokens: Array<OptionToken | { positional: string }> = [];
  const rest = [...args];
  while (rest.length > 0) {
    const arg = rest.shift()!;
    const next = rest[0];
    if (arg === '--') {
      tokens.push(...rest.map((positional) => ({ positional })));
      break;
    }
    if (arg.length === 2 && arg[0] === '-' && arg[1] !== '-') {
      // -f, or -f VALUE for a string option
      const name = longFor(arg[1]!);
      const value = spec(name)?.type === 'string' && next !== undefined ? rest.shift() : undefined;
      tokens.push({ name, rawName: arg, value, inlineValue: value === undefined ? undefined : false });
    } else if (arg.length > 2 && arg[0] === '-' && arg[1] !== '-') {
      const name = longFor(arg[1]!);
      if (spec(name)?.type === 'string') {
        // -fVALUE
        tokens.push({ name, rawName: `-${arg[1]}`, value: arg.slice(2), inlineValue: true });
      } else {
        // -abc: -a -b -c, where a string option in the middle takes the rest as its value (-abfVALUE)
        const expanded: string[] = [];
        for (let i = 1; i < arg.length; i++) {
          if (spec(longFor(arg[i]!))?.type !== 'string' || i === arg.length - 1) expanded.push(`-${arg[i]}`);
          else {
            expanded.push(`-${arg.slice(i)}`);
            break;
          }
        }
        rest.unshift(...expanded);
      }
    } else if (arg.length > 2 && arg.startsWith('--') && !arg.includes('=', 3)) {
      // --name, or --name VALUE for a string option
      const name = arg.slice(2);
      const value = spec(name)?.type === 'string' && next !== undefined ? rest.shift() : undefined;
      tokens.push({ name, rawName: arg, value, inlineValue: value === undefined ? undefined : false });
    } else if (arg.length > 2 && arg.startsWith('--')) {
      // --name=VALUE
      const equals = arg.indexOf('=');
      const name = arg.slice(2, equals);
      tokens.push({ name, rawName: `--${name}`, value: arg.slice(equals + 1), inlineValue: true });
    } else {
      tokens.push({ positional: arg });
    }
  }

  const values: Record<string, string | boolean> = Object.create(null);
  const positionals: string[] = [];
  for (const token of tokens) {
    if ('positional' in token) {
      positionals.push(token.positional);
      continue;
    }
    const option = spec(token.name);
    if (!option) {
      throw new StrictArgsError('ERR_PARSE_ARGS_UNKNOWN_OPTION', `Unknown option '${token.rawName}'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- ${JSON.stringify(token.rawName)}`);
    }
    const shortAndLong = `${option.short ? `-${option.short}, ` : ''}--${token.name}`;
    if (option.type === 'string' && token.value === undefined) throw new StrictArgsError('ERR_PARSE_ARGS_INVALID_OPTION_VALUE', `Option '${shortAndLong} <value>' argument missing`);
    if (option.type === 'boolean' && token.value !== undefined) throw new StrictArgsError('ERR_PARSE_ARGS_INVALID_OPTION_VALUE', `Option '${shortAndLong}' does not take an argument`);
    if (!token.inlineValue && token.value !== undefined && token.value.length > 1 && token.value[0] === '-') {
      const example = token.rawName.startsWith('--') ? `'${token.rawName}=-XYZ'` : `'--${token.name}=-XYZ' or '${token.rawName}-XYZ'`;
      throw new StrictArgsError(
        'ERR_PARSE_ARGS_INVALID_OPTION_VALUE',
        `Option '${token.rawName}' argument is ambiguous.\nDid you forget to specify the option argument for '${token.rawName}'?\nTo specify an option argument starting with a dash use ${example}.`,
      );
    }
    values[token.name] = option.type === 'string' ? token.value! : true;
  }
  return { values: values as ParsedValues<S>, positionals };
}
