import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseToml, stringify as stringifyToml, TomlError } from 'smol-toml';
import { insertJsonProperty, jsonObjectEmpty, jsonValueAt, readJsonDocument, removeJsonProperty } from './jsonEdit';

/**
 * Reading and editing one server entry (`<container>.<name>`) of an MCP config file, JSON(C) or
 * TOML, without touching anything else in it: the user's other servers and settings, comments and
 * layout stay as they were, and removing the entry gives back the file as it was before.
 */
export type EntryRead = { ok: true; current: unknown; hasContainer: boolean } | { ok: false; why: string };
export type EntryAdded = { ok: true; text: string; separator: string } | { ok: false; why: string };

export interface McpConfigFormat {
  /** A new file holding only the entry. */
  create(container: string, name: string, value: unknown): string;
  /** The entry (`current` undefined when absent), or why the file cannot be used. */
  read(text: string, container: string, name: string): EntryRead;
  /** `text` with the entry added (it is absent); `separator` is what went before it, for `remove`. */
  add(text: string, container: string, name: string, value: unknown): EntryAdded;
  /**
   * `text` without the entry, whose value is `current` as added with `separator`; also without the
   * container when `dropContainer` and nothing else is in it. Undefined when the entry is not laid
   * out as it was written (a TOML table someone reformatted): then it is left alone.
   */
  remove(text: string, container: string, name: string, current: unknown, added: { separator: string; dropContainer: boolean }): string | undefined;
  /** Whether nothing but empty space is left. */
  empty(text: string): boolean;
}

/** The entry's identity for the manifest: its value with keys in one order, hashed. */
export function valueHash(value: unknown): string {
  return createHash('sha256').update(stableJson(value), 'utf8').digest('hex');
}

export function sameValue(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(JSON.parse(stableJson(a)), JSON.parse(stableJson(b)));
}

function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const json: McpConfigFormat = {
  create: (container, name, value) => `${JSON.stringify({ [container]: { [name]: value } }, null, 2)}\n`,
  read(text, container, name) {
    const doc = readJsonDocument(text);
    if (!doc.ok) return doc;
    const at = jsonValueAt(doc, [container]);
    if ('why' in at) return { ok: false, why: at.why };
    if (at.value === undefined) return { ok: true, current: undefined, hasContainer: false };
    if (!isPlainObject(at.value)) return { ok: false, why: `its "${container}" is not an object` };
    return { ok: true, current: at.value[name], hasContainer: true };
  },
  add(text, container, name, value) {
    const has = json.read(text, container, name);
    if (!has.ok) return has;
    const added = has.hasContainer ? insertJsonProperty(text, [container], name, value) : insertJsonProperty(text, [], container, { [name]: value });
    return { ok: true, text: added, separator: '' };
  },
  remove(text, container, name, _current, added) {
    const rest = removeJsonProperty(text, [container], name);
    return added.dropContainer && jsonObjectEmpty(rest, [container]) ? removeJsonProperty(rest, [], container) : rest;
  },
  empty: (text) => jsonObjectEmpty(text, []),
};

/**
 * TOML has no edit-in-place library here: the entry is its own table (`[mcp_servers.mam]`)
 * appended at the end, which TOML allows after any other table, and taken out by its exact text.
 */
const toml: McpConfigFormat = {
  create: (container, name, value) => tomlTable(container, name, value),
  read(text, container, name) {
    let doc: Record<string, unknown>;
    try {
      doc = parseToml(text);
    } catch (err) {
      return { ok: false, why: err instanceof TomlError ? `not valid TOML (line ${err.line}, column ${err.column})` : 'not valid TOML' };
    }
    const servers = doc[container];
    if (servers === undefined) return { ok: true, current: undefined, hasContainer: false };
    if (!isPlainObject(servers)) return { ok: false, why: `its ${container} is not a table` };
    return { ok: true, current: servers[name], hasContainer: true };
  },
  add(text, container, name, value) {
    const separator = text === '' || text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
    const added = `${text}${separator}${tomlTable(container, name, value)}`;
    // An inline `mcp_servers = { … }` cannot take another table: the result says so by not parsing.
    const check = toml.read(added, container, name);
    if (!check.ok || !sameValue(check.current, value)) return { ok: false, why: `a [${container}.${name}] table cannot be added to it (is ${container} an inline table?)` };
    return { ok: true, text: added, separator };
  },
  remove(text, container, name, current, added) {
    const table = tomlTable(container, name, current);
    for (const piece of [`${added.separator}${table}`, table]) {
      const at = text.lastIndexOf(piece);
      if (at >= 0) return text.slice(0, at) + text.slice(at + piece.length);
    }
    return undefined;
  },
  empty: (text) => text.trim() === '',
};

function tomlTable(container: string, name: string, value: unknown): string {
  const text = stringifyToml({ [container]: { [name]: value } });
  return text.endsWith('\n') ? text : `${text}\n`;
}

export const MCP_FORMATS: Readonly<Record<'json' | 'toml', McpConfigFormat>> = { json, toml };
