import { ConfigError } from '../base/errors';
import { printable } from '../base/ids';

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Parses a `.mam.env` file: `KEY=VALUE` lines, `#` comments, blank lines, an optional `export `
 * prefix, and values that are bare, 'single-quoted' (literal) or "double-quoted" (with \n, \t, \\,
 * \" escapes). Anything else is an error naming the file and line. Nothing is ever expanded or
 * evaluated: `$(...)` and `$VAR` stay literal text.
 */
export function parseEnvFile(text: string, fileName = '.mam.env'): Map<string, string> {
  const values = new Map<string, string>();
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const where = `${fileName}:${index + 1}`;
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const body = line.startsWith('export ') ? line.slice('export '.length).trimStart() : line;
    const eq = body.indexOf('=');
    if (eq <= 0) throw new ConfigError(`${where}: expected KEY=VALUE, got '${printable(line, 60)}'`);
    const key = body.slice(0, eq).trim();
    if (!KEY.test(key)) throw new ConfigError(`${where}: '${printable(key, 60)}' is not a valid variable name`);
    if (values.has(key)) throw new ConfigError(`${where}: ${key} is set twice`);
    values.set(key, parseValue(body.slice(eq + 1).trim(), where));
  });
  return values;
}

function parseValue(rest: string, where: string): string {
  if (rest.startsWith("'")) {
    const end = rest.indexOf("'", 1);
    if (end < 0) throw new ConfigError(`${where}: unterminated single-quoted value`);
    trailing(rest.slice(end + 1), where);
    return rest.slice(1, end);
  }
  if (rest.startsWith('"')) {
    let out = '';
    for (let i = 1; i < rest.length; i++) {
      const c = rest[i]!;
      if (c === '"') {
        trailing(rest.slice(i + 1), where);
        return out;
      }
      if (c === '\\') {
        const next = rest[++i];
        const escapes: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', $: '$' };
        if (next === undefined || !(next in escapes)) throw new ConfigError(`${where}: unknown escape '\\${next ?? ''}' in a double-quoted value`);
        out += escapes[next];
      } else {
        out += c;
      }
    }
    throw new ConfigError(`${where}: unterminated double-quoted value`);
  }
  // Bare value: an unquoted ' #' starts a comment, as in shells.
  const hash = rest.search(/\s#/);
  const value = (hash >= 0 ? rest.slice(0, hash) : rest).trim();
  if (/\s/.test(value)) throw new ConfigError(`${where}: a value with spaces must be quoted`);
  if (/["']/.test(value)) throw new ConfigError(`${where}: stray quote in an unquoted value`);
  return value;
}

function trailing(after: string, where: string): void {
  const rest = after.trim();
  if (rest !== '' && !rest.startsWith('#')) throw new ConfigError(`${where}: unexpected text after the closing quote`);
}
