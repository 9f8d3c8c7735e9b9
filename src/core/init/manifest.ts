import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bool, list, lit, obj, oneOf, parse, str, variant, type Schema } from '../base/schema';
import { readIfExists, writeFileAtomic } from '../store/atomicFile';

/**
 * `.mam/init.json`: everything `mam init` added to the workspace and the SHA-256 of what it wrote,
 * so that `--update` refreshes only what nobody edited since and `--remove` takes back exactly that.
 */
export interface InitManifest {
  version: 1;
  /** The CLI the installed skills name. */
  cli: string;
  updated_at: string;
  entries: ManifestEntry[];
}

export type ManifestEntry =
  /** A whole file mam init created (workspace-relative, `/`-separated). */
  | { kind: 'file'; path: string; sha256: string }
  /** MAM's marked section of a file; `separator` is what was added before it, `created_file` whether the file was new. */
  | { kind: 'section'; path: string; sha256: string; separator: string; created_file: boolean }
  /** A folder mam init created for its files: removed with them once empty. */
  | { kind: 'dir'; path: string }
  /** Lines appended to git's info/exclude (an absolute path: a worktree's lies outside the workspace). */
  | { kind: 'exclude'; file: string; text: string }
  /**
   * The `mam` server mam init registered in an agent CLI's project MCP config (mcpClients.ts):
   * the file, its format and the key holding the servers; `sha256` of the entry's value as written
   * (mcpConfig.ts `valueHash`); whether mam init created the file and that key; what it put before
   * a TOML table.
   */
  | { kind: 'mcp'; client: string; path: string; format: 'json' | 'toml'; container: string; sha256: string; created_file: boolean; created_container: boolean; separator: string };

const text = str();
const manifestSchema: Schema<InitManifest> = obj({
  version: lit(1),
  cli: text,
  updated_at: text,
  entries: list(
    variant('kind', {
      file: obj({ kind: lit('file'), path: text, sha256: text }),
      section: obj({ kind: lit('section'), path: text, sha256: text, separator: text, created_file: bool() }),
      dir: obj({ kind: lit('dir'), path: text }),
      exclude: obj({ kind: lit('exclude'), file: text, text }),
      mcp: obj({ kind: lit('mcp'), client: text, path: text, format: oneOf(['json', 'toml']), container: text, sha256: text, created_file: bool(), created_container: bool(), separator: text }),
    }),
  ),
});

export function manifestFile(workspace: string): string {
  return path.join(workspace, '.mam', 'init.json');
}

/** The manifest, or undefined when mam init never ran here. An unreadable one counts as empty: nothing is then taken for ours. */
export function readManifest(workspace: string): { manifest: InitManifest | undefined; unreadable: boolean } {
  const bytes = readIfExists(manifestFile(workspace));
  if (!bytes) return { manifest: undefined, unreadable: false };
  try {
    return { manifest: parse(manifestSchema, JSON.parse(bytes.toString('utf8'))), unreadable: false };
  } catch {
    return { manifest: undefined, unreadable: true };
  }
}

/** Writes the manifest, or deletes it when nothing is left in it. */
export function writeManifest(workspace: string, cli: string, entries: ManifestEntry[]): void {
  const file = manifestFile(workspace);
  if (entries.length === 0) {
    fs.rmSync(file, { force: true });
    return;
  }
  const manifest: InitManifest = { version: 1, cli, updated_at: new Date().toISOString(), entries };
  writeFileAtomic(file, `${JSON.stringify(manifest, null, 2)}\n`);
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
