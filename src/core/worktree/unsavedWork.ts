import * as fs from 'node:fs';
import * as path from 'node:path';
import { countStatusEntries, type Git } from './git';

/** Work in one repository of a worktree (the worktree itself or a submodule) that removal would lose. */
export interface UnsavedWork {
  /** Relative to the worktree root; '.' is the worktree itself. */
  path: string;
  /** Changed, staged, conflicted or untracked files (ignored files do not count, as in git). */
  changedFiles: number;
  /**
   * Commits nothing outside the worktree keeps. For the worktree: commits on a detached HEAD that no
   * branch, tag or remote reaches. For a submodule: commits that none of its remote-tracking branches
   * reach — its repository lives in the worktree's private git dir and is deleted with it.
   */
  lostCommits: number;
  /** Stash entries of a submodule (its stash dies with it; the worktree's own stash is shared and kept). */
  stashes: number;
}

export interface Inspection {
  unsaved: UnsavedWork[];
  /** Whether any submodule is checked out (git refuses to remove such a worktree without --force). */
  hasPopulatedSubmodules: boolean;
}

/**
 * Looks through a worktree and, recursively, its checked-out submodules for anything removing it
 * would destroy. A repository git cannot read is an error, never "clean".
 */
export async function inspectWorktree(git: Git, root: string): Promise<Inspection> {
  const unsaved: UnsavedWork[] = [];
  let hasPopulatedSubmodules = false;

  const visit = async (dir: string, isSubmodule: boolean): Promise<void> => {
    const rel = path.relative(root, dir) || '.';
    const what = isSubmodule ? `checking submodule ${rel}` : 'checking the worktree';
    // Submodules are inspected on their own below, so the superproject ignores them here.
    const status = await git.ok(dir, ['status', '--porcelain', '-z', '--untracked-files=all', '--ignore-submodules=all'], what);
    const changedFiles = countStatusEntries(status);
    const lostCommits = isSubmodule ? await countUnpushed(git, dir, what) : await countDetached(git, dir, what);
    const stashes = isSubmodule ? await countStashes(git, dir, what) : 0;
    if (changedFiles > 0 || lostCommits > 0 || stashes > 0) unsaved.push({ path: rel, changedFiles, lostCommits, stashes });
    for (const sub of await populatedSubmodules(git, dir, what)) {
      hasPopulatedSubmodules = true;
      await visit(sub, true);
    }
  };
  await visit(root, false);
  return { unsaved, hasPopulatedSubmodules };
}

/** Commits reachable from HEAD only; 0 when HEAD is on a branch (branches are kept). */
async function countDetached(git: Git, dir: string, what: string): Promise<number> {
  const out = await git.ok(dir, ['rev-list', '--count', 'HEAD', '--not', '--branches', '--tags', '--remotes'], what);
  return Number(out.trim());
}

/**
 * Commits on the submodule's HEAD or local branches that its remote-tracking branches do not reach.
 * A pinned commit that was fetched by its ID and sits on no remote branch counts too: a false alarm
 * there costs a manual removal, while the opposite mistake would lose work.
 */
async function countUnpushed(git: Git, dir: string, what: string): Promise<number> {
  const out = await git.ok(dir, ['rev-list', '--count', 'HEAD', '--branches', '--not', '--remotes'], what);
  return Number(out.trim());
}

async function countStashes(git: Git, dir: string, what: string): Promise<number> {
  const out = await git.ok(dir, ['stash', 'list', '--format=%H'], what);
  return out.split('\n').filter(Boolean).length;
}

/** Absolute paths of the submodules checked out in `dir` (gitlinks in the index with a `.git` inside). */
async function populatedSubmodules(git: Git, dir: string, what: string): Promise<string[]> {
  const out = await git.ok(dir, ['ls-files', '--stage', '-z'], what);
  const paths = new Set<string>();
  for (const record of out.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0 || !record.startsWith('160000 ')) continue;
    paths.add(record.slice(tab + 1));
  }
  return [...paths].map((p) => path.join(dir, p)).filter((p) => fs.existsSync(path.join(p, '.git')));
}

/** "the worktree .mam/worktrees/42 (2 changed files); submodule libs/a (1 unpushed commit)". */
export function describeUnsaved(unsaved: readonly UnsavedWork[], worktreeLabel: string): string {
  return unsaved
    .map((u) => {
      const parts: string[] = [];
      if (u.changedFiles > 0) parts.push(count(u.changedFiles, 'changed file', 'changed files'));
      if (u.lostCommits > 0) {
        parts.push(u.path === '.' ? count(u.lostCommits, 'commit', 'commits') + ' on a detached HEAD' : count(u.lostCommits, 'unpushed commit', 'unpushed commits'));
      }
      if (u.stashes > 0) parts.push(count(u.stashes, 'stash entry', 'stash entries'));
      return `${u.path === '.' ? `the worktree ${worktreeLabel}` : `submodule ${u.path}`} (${parts.join(', ')})`;
    })
    .join('; ');
}

/** What to do about it, only for the kinds of work found: "commit or stash the changes, push the submodule commits". */
export function remedy(unsaved: readonly UnsavedWork[]): string {
  const steps: string[] = [];
  if (unsaved.some((u) => u.changedFiles > 0)) steps.push('commit or stash the changes');
  if (unsaved.some((u) => u.path === '.' && u.lostCommits > 0)) steps.push('put the detached commits on a branch');
  if (unsaved.some((u) => u.path !== '.' && u.lostCommits > 0)) steps.push('push the submodule commits');
  if (unsaved.some((u) => u.stashes > 0)) steps.push('apply or drop the submodule stashes');
  return steps.join(', ');
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
