import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitExec } from '../base/git';
import { writeFileAtomic } from '../store/atomicFile';

/**
 * git's per-clone ignore list (`info/exclude` in the repository's common git folder, so a worktree
 * or a submodule finds the right one), or undefined outside a git checkout. Unlike .gitignore it is
 * never committed: the place for what only this clone has, such as a credentials file.
 */
export async function excludeFileOf(workspace: string): Promise<string | undefined> {
  const r = await gitExec(workspace, ['rev-parse', '--git-path', 'info/exclude'], { timeoutMs: 30_000 }).catch(() => undefined);
  const out = r?.exitCode === 0 ? r.stdout.trim() : '';
  // Relative to the folder git ran in (absolute in a worktree, whose git folder lies elsewhere).
  return out ? path.resolve(workspace, out) : undefined;
}

/** Whether git ignores `relPath` in `workspace` (any .gitignore, info/exclude, the global excludes). */
export async function gitIgnores(workspace: string, relPath: string): Promise<boolean> {
  const r = await gitExec(workspace, ['check-ignore', '-q', '--', relPath], { timeoutMs: 30_000 }).catch(() => undefined);
  return r?.exitCode === 0;
}

/** Appends `block` to the exclude file (created with its folder when missing). */
export function appendExclude(file: string, block: string): void {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${block}`);
}

/** Takes `block` back out of the exclude file; false when it is no longer there as written. */
export function removeExclude(file: string, block: string): boolean {
  if (!fs.existsSync(file)) return false;
  const text = fs.readFileSync(file, 'utf8');
  const at = text.lastIndexOf(block);
  if (at < 0) return false;
  writeFileAtomic(file, `${text.slice(0, at)}${text.slice(at + block.length)}`);
  return true;
}
