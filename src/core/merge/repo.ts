import * as fs from 'node:fs';
import { gitExec } from '../base/git';
import type { ExecResult } from '../base/exec';
import { withLock } from '../store/lock';
import type { ControlPlanePaths } from '../store/paths';
import { gitReason, parseWorktreeList, type WorktreeEntry } from '../worktree/git';

/**
 * The git the merge queue runs, always argv through base/git.ts. A commit made here (a rebase)
 * never runs an editor; a rebase never asks anyone.
 */
const NO_EDITOR = { GIT_EDITOR: 'true', GIT_SEQUENCE_EDITOR: 'true' };

export function run(cwd: string, args: readonly string[]): Promise<ExecResult> {
  return gitExec(cwd, args, { env: NO_EDITOR });
}

/** stdout, or an Error saying what failed and git's reason. */
export async function ok(cwd: string, args: readonly string[], doing: string): Promise<string> {
  const r = await run(cwd, args);
  if (r.exitCode !== 0) throw new Error(`${doing} failed: ${gitReason(r)}`);
  return r.stdout;
}

/** The commit a local branch points at, or undefined when there is no such branch. */
export async function branchTip(repo: string, branch: string): Promise<string | undefined> {
  if (branch.startsWith('-')) return undefined;
  const r = await run(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`]);
  return r.exitCode === 0 ? r.stdout.trim() : undefined;
}

export async function worktrees(repo: string): Promise<WorktreeEntry[]> {
  return parseWorktreeList(await ok(repo, ['worktree', 'list', '--porcelain'], 'listing the worktrees'));
}

/** The worktree that has `branch` checked out, if any. */
export async function worktreeOf(repo: string, branch: string): Promise<WorktreeEntry | undefined> {
  return (await worktrees(repo)).find((w) => w.branch === `refs/heads/${branch}`);
}

export async function isAncestor(repo: string, ancestor: string, of: string): Promise<boolean> {
  return (await run(repo, ['merge-base', '--is-ancestor', ancestor, of])).exitCode === 0;
}

/** Tracked files changed in a checkout (untracked ones do not stop a fast-forward that does not touch them). */
export async function trackedChanges(checkout: string): Promise<string[]> {
  const out = await ok(checkout, ['status', '--porcelain', '-z', '--untracked-files=no'], `reading the status of ${checkout}`);
  return out.split('\0').filter((l) => l.length > 3).map((l) => l.slice(3));
}

/**
 * The scratch worktree of one entry (`.mam/merge/scratch/<id>`), detached at `commit`; whatever
 * was there before (a runner killed midway) is removed first. Worktree changes are made under the
 * workspace's worktree lock, as issue worktrees are: concurrent `git worktree add` race.
 */
export async function freshScratch(repo: string, paths: ControlPlanePaths, entryId: string, commit: string): Promise<string> {
  const dir = paths.mergeScratch(entryId);
  await removeScratch(repo, paths, entryId);
  fs.mkdirSync(paths.mergeDir, { recursive: true });
  await withLock(paths.lock('worktree'), () => ok(repo, ['worktree', 'add', '--detach', '--quiet', dir, commit], 'creating the scratch worktree'), { what: 'the worktrees of this workspace', timeoutMs: 120_000 });
  return dir;
}

export async function removeScratch(repo: string, paths: ControlPlanePaths, entryId: string): Promise<void> {
  const dir = paths.mergeScratch(entryId);
  await withLock(paths.lock('worktree'), async () => {
    if (fs.existsSync(dir)) {
      const r = await run(repo, ['worktree', 'remove', '--force', '--force', dir]);
      if (r.exitCode !== 0) fs.rmSync(dir, { recursive: true, force: true });
    }
    await run(repo, ['worktree', 'prune']);
  }, { what: 'the worktrees of this workspace', timeoutMs: 120_000 });
}
