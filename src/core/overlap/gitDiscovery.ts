import * as path from 'node:path';
import { findGitDirs, readText, type GitDirs } from '../base/gitDirs';

/** A checkout's top folder, its own git folder and the repository's shared one (real paths): checkouts.ts's CheckoutLocation. */
export type Discovered = GitDirs;

/** Config lines that move the work tree or deny it, or bring in other files that could (then git is asked). */
const WORK_TREE_KEYS = /^\s*(worktree\s*=|bare\s*=\s*(true|yes|on|1)\s*$|\[\s*include)/im;

/**
 * Where `cwd`'s checkout is, found as git finds it (base/gitDirs.ts), without starting git — a
 * cold `mam conflicts` would otherwise start one per session's folder.
 *
 * 'ask-git' wherever git's own answer could differ: where gitDirs.ts says so, and for a repository
 * or worktree config that sets `core.worktree` or `core.bare` or includes other files.
 * undefined: no `.git` up to the root (git says the same: not a repository). The worktree list
 * each look reads checks the answer: a checkout git does not list is skipped.
 */
export function discoverCheckout(cwd: string, env: NodeJS.ProcessEnv = process.env): Discovered | 'ask-git' | undefined {
  const found = findGitDirs(cwd, env);
  if (found === undefined || found === 'ask-git') return found;
  for (const config of [path.join(found.commonDir, 'config'), path.join(found.gitDir, 'config.worktree')]) {
    if (WORK_TREE_KEYS.test(readText(config) ?? '')) return 'ask-git';
  }
  return found;
}
