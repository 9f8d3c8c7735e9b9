import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitExec } from '../base/git';
import { writeFileAtomic } from '../store/atomicFile';

/** `git check-ignore`'s exit status when none of the paths is ignored (0: some are). */
const CHECK_IGNORE_NONE_IGNORED = 1;

/** What must stay out of the user's commits: agent state, and broker credentials (SPEC §3). */
export const MAM_IGNORES = ['.mam/', '.mam.env'] as const;

/**
 * The entries of MAM_IGNORES that git does not ignore in `workspace`, as git itself decides (any
 * .gitignore up the tree, info/exclude, the global excludes file); undefined outside a git checkout.
 * `.mam/` normally ignores itself (its own `.gitignore` of `*`); `.mam.env` counts only once it
 * exists — a file that is not there cannot end up in a commit.
 */
export async function missingIgnores(workspace: string): Promise<string[] | undefined> {
  const probes = { '.mam/': '.mam/agent-sessions.db', '.mam.env': '.mam.env' } as const;
  const r = await gitExec(workspace, ['check-ignore', '--', ...Object.values(probes)], { timeoutMs: 30_000 }).catch(() => undefined);
  if (!r || (r.exitCode !== 0 && r.exitCode !== CHECK_IGNORE_NONE_IGNORED)) return undefined;
  const ignored = new Set(r.stdout.split('\n').map((l) => l.trim()));
  return MAM_IGNORES.filter((entry) => !ignored.has(probes[entry]) && (entry !== '.mam.env' || fs.existsSync(path.join(workspace, '.mam.env'))));
}

/** Appends `entries` to the workspace's own .gitignore (created when missing), atomically. */
export function addIgnores(workspace: string, entries: readonly string[]): void {
  if (entries.length === 0) return;
  const file = path.join(workspace, '.gitignore');
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const separator = text === '' || text.endsWith('\n') ? '' : '\n';
  writeFileAtomic(file, `${text}${separator}# Multi-Agent Mux: agent state and broker credentials\n${entries.join('\n')}\n`);
}
