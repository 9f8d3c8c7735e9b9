import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../store/atomicFile';
import { makeDirs, readText } from './initFiles';
import type { InitItem } from './initItem';
import type { ManifestEntry } from './manifest';
import { MCP_CLIENTS, type McpClient } from './mcpClients';
import { MCP_SERVER_NAME } from './mcpServer';
import { MCP_FORMATS, sameValue, valueHash } from './mcpConfig';

type McpEntry = Extract<ManifestEntry, { kind: 'mcp' }>;
interface Done {
  item: InitItem;
  entries: ManifestEntry[];
}

/**
 * Registers `mam mcp` in every agent CLI's project MCP config (mcpClients.ts), as the rest of
 * `mam init` installs files: added to a file the user already has without touching anything else
 * in it, left alone when the user wrote a `mam` server of their own or edited ours, refreshed by
 * `update` when unedited, and recorded in the manifest so that `removeMcp` takes back exactly it.
 * A file that cannot be parsed is named and never written.
 */
export function installMcp(workspace: string, cli: string, update: boolean, before: readonly ManifestEntry[], items: InitItem[]): ManifestEntry[] {
  const entries: ManifestEntry[] = [];
  const old = before.filter((e): e is McpEntry => e.kind === 'mcp');
  for (const client of MCP_CLIENTS) {
    const done = installOne(workspace, client, client.entry(cli, workspace), old.find((e) => e.client === client.name), update);
    items.push(done.item);
    entries.push(...done.entries);
  }
  // A client an older MAM registered and this one does not: taken back by --update, as a retired file is.
  for (const e of old) {
    if (MCP_CLIENTS.some((c) => c.name === e.client)) continue;
    if (!update) {
      items.push({ path: e.path, action: 'outdated', note: `no longer registered: mam init --update takes back its ${MCP_SERVER_NAME} server` });
      entries.push(e);
    } else {
      const done = takeBack(workspace, e);
      items.push(done.item);
      entries.push(...done.entries);
    }
  }
  return entries;
}

/** Takes back every server entry mam init registered, unless edited since; returns the entries it keeps. */
export function removeMcp(workspace: string, before: readonly ManifestEntry[], items: InitItem[]): ManifestEntry[] {
  const kept: ManifestEntry[] = [];
  for (const e of before) {
    if (e.kind !== 'mcp') continue;
    const done = takeBack(workspace, e);
    items.push(done.item);
    kept.push(...done.entries);
  }
  return kept;
}

function installOne(workspace: string, client: McpClient, want: Record<string, unknown>, old: McpEntry | undefined, update: boolean): Done {
  const format = MCP_FORMATS[client.format];
  const rel = old?.path ?? client.files.find((f) => fs.existsSync(path.join(workspace, f))) ?? client.files[0]!;
  const file = path.join(workspace, rel);
  const kept = old ? [old] : [];
  const entry = (fields: Partial<McpEntry>): McpEntry => ({ kind: 'mcp', client: client.name, path: rel, format: client.format, container: client.container, sha256: valueHash(want), created_file: false, created_container: false, separator: '', ...fields });
  const disk = readText(file);
  if (disk === undefined) {
    const dirs = makeDirs(workspace, path.posix.dirname(rel));
    writeFileAtomic(file, format.create(client.container, MCP_SERVER_NAME, want));
    return { item: { path: rel, action: 'created', note: client.note }, entries: [...dirs, entry({ created_file: true, created_container: true })] };
  }
  const read = format.read(disk, client.container, MCP_SERVER_NAME);
  if (!read.ok) return { item: { path: rel, action: 'kept', note: `${read.why}: left as is, and MAM’s MCP server is not registered for ${client.label}` }, entries: kept };
  if (read.current === undefined) {
    const added = format.add(disk, client.container, MCP_SERVER_NAME, want);
    if (!added.ok) return { item: { path: rel, action: 'kept', note: `${added.why}: left as is, and MAM’s MCP server is not registered for ${client.label}` }, entries: kept };
    writeOver(file, added.text);
    return {
      item: { path: rel, action: 'appended', note: `${client.note}; the rest of the file untouched` },
      entries: [entry({ created_file: old?.created_file ?? false, created_container: !read.hasContainer, separator: added.separator })],
    };
  }
  const what = `its ${MCP_SERVER_NAME} server`;
  if (sameValue(read.current, want)) return { item: { path: rel, action: 'unchanged', ...(old ? {} : { note: `${what} is already there` }) }, entries: kept };
  if (!old || valueHash(read.current) !== old.sha256) {
    return { item: { path: rel, action: 'kept', note: old ? `${what} was edited since mam init wrote it; left as is` : `${what} was not written by mam init here; left as is` }, entries: kept };
  }
  if (!update) return { item: { path: rel, action: 'outdated', note: `mam init --update refreshes ${what}` }, entries: kept };
  const without = format.remove(disk, client.container, MCP_SERVER_NAME, read.current, { separator: old.separator, dropContainer: false });
  const added = without === undefined ? undefined : format.add(without, client.container, MCP_SERVER_NAME, want);
  if (!added?.ok) return { item: { path: rel, action: 'kept', note: `${what} is laid out differently from how mam init wrote it; left as is` }, entries: kept };
  writeOver(file, added.text);
  return { item: { path: rel, action: 'updated', note: what }, entries: [{ ...old, sha256: valueHash(want), separator: added.separator }] };
}

/** Removes the entry mam init wrote (and the file, when mam init created it and nothing else is left), unless edited. */
function takeBack(workspace: string, e: McpEntry): Done {
  const file = path.join(workspace, e.path);
  const disk = readText(file);
  const gone: Done = { item: { path: e.path, action: 'gone', note: `its ${MCP_SERVER_NAME} server was already removed` }, entries: [] };
  if (disk === undefined) return gone;
  const format = MCP_FORMATS[e.format];
  const container = e.container;
  const read = format.read(disk, container, MCP_SERVER_NAME);
  if (!read.ok) return { item: { path: e.path, action: 'kept', note: `${read.why}: left as is` }, entries: [e] };
  if (read.current === undefined) return gone;
  if (valueHash(read.current) !== e.sha256) return { item: { path: e.path, action: 'kept', note: `its ${MCP_SERVER_NAME} server was edited since mam init wrote it; left as is` }, entries: [e] };
  const rest = format.remove(disk, container, MCP_SERVER_NAME, read.current, { separator: e.separator, dropContainer: e.created_container });
  if (rest === undefined) return { item: { path: e.path, action: 'kept', note: `its ${MCP_SERVER_NAME} server is laid out differently from how mam init wrote it; left as is` }, entries: [e] };
  if (e.created_file && format.empty(rest)) {
    fs.rmSync(file);
    return { item: { path: e.path, action: 'removed' }, entries: [] };
  }
  writeOver(file, rest);
  return { item: { path: e.path, action: 'removed', note: `its ${MCP_SERVER_NAME} server; the rest kept` }, entries: [] };
}

/** Replaces a user's file keeping its mode (a settings file may hold keys and be 0600) and writing through a link. */
function writeOver(file: string, text: string): void {
  const target = fs.realpathSync(file);
  writeFileAtomic(target, text, { mode: fs.statSync(target).mode & 0o777 });
}
