import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Clock } from '../base/clock';
import { UsageError } from '../base/errors';
import { printable } from '../base/ids';
import { splitWords } from '../base/shellWords';
import { LoopStore, type LoopState } from '../loop/loopState';
import { isPinned } from '../loop/snapshot';
import type { ControlPlanePaths } from '../store/paths';
import { MergeLog } from './mergeLog';
import { MergeQueueStore, newEntryId, type MergeEntry, type ReviewedTree } from './mergeQueue';
import { branchTip, isAncestor, worktrees } from './repo';

export interface EnqueueRequest {
  /** A worktree folder (relative to baseDir) or a branch name. */
  what: string;
  /** The validation command line, split into words here and never given to a shell. */
  validate?: string;
  into?: string;
  baseDir: string;
  /** What the entry and its log are stamped with (the engine's clock; default the system's). */
  clock?: Clock;
}

/** No review loop passed on that branch: nothing enters the queue. Bad input, exit 64 (2 means a job timed out). */
export class NotReviewedError extends UsageError {
  constructor(message: string) {
    super(message, 'not_reviewed');
  }
}

/**
 * `mam merge enqueue`: resolves the branch (and its worktree), the target (default: the branch
 * checked out in the primary worktree), the validation argv, and the tree the reviewers passed —
 * the newest passed loop on that worktree whose head the branch still contains (a branch checked
 * out nowhere: a passed loop whose head is the branch's tip). Any problem: one error, nothing written.
 */
export async function enqueue(paths: ControlPlanePaths, repo: string, req: EnqueueRequest): Promise<MergeEntry> {
  const trees = await worktrees(repo);
  const asPath = path.resolve(req.baseDir, req.what);
  let branch: string;
  let worktree: string | null;
  if (fs.existsSync(asPath) && fs.statSync(asPath).isDirectory()) {
    const real = fs.realpathSync(asPath);
    const tree = trees.find((w) => realOr(w.path) === real);
    if (!tree) throw new UsageError(`${printable(real, 200)} is not a worktree of the repository at ${repo}`);
    if (!tree.branch?.startsWith('refs/heads/')) throw new UsageError(`the worktree ${printable(real, 200)} has no branch checked out (detached HEAD)`);
    branch = tree.branch.slice('refs/heads/'.length);
    worktree = real;
  } else {
    branch = req.what;
    if (!(await branchTip(repo, branch))) throw new UsageError(`'${printable(branch, 100)}' is neither a folder nor a branch of the repository at ${repo}`);
    const tree = trees.find((w) => w.branch === `refs/heads/${branch}`);
    worktree = tree ? realOr(tree.path) : null;
  }
  const tip = (await branchTip(repo, branch))!;
  const primary = trees[0];
  const into = req.into ?? (primary?.branch?.startsWith('refs/heads/') ? primary.branch.slice('refs/heads/'.length) : undefined);
  if (into === undefined) throw new UsageError('the primary worktree has no branch checked out; name the target with --into BRANCH');
  if (!(await branchTip(repo, into))) throw new UsageError(`--into: no branch '${printable(into, 100)}' in the repository at ${repo}`);
  if (into === branch) throw new UsageError(`'${printable(branch, 100)}' is the target branch itself`);
  let validate: string[] | null = null;
  if (req.validate !== undefined) {
    validate = splitWords(req.validate);
    if (validate.length === 0) throw new UsageError('--validate is empty');
  }
  const reviewed = await passedLoop(paths, repo, branch, worktree, tip);
  const store = new MergeQueueStore(paths, req.clock);
  const entry = await store.update((entries) => {
    const same = entries.find((e) => e.branch === branch && e.state !== 'landed');
    if (same) throw new UsageError(`branch '${printable(branch, 100)}' is in the queue already (entry ${same.id}, ${same.state})`);
    const now = store.now();
    const created: MergeEntry = {
      id: newEntryId(new Date(now)), branch, worktree, into, validate, creator: reviewed.loop.creator, reviewers: [...reviewed.loop.reviewers], reviewed: reviewed.tree,
      state: 'queued', step: null, reason: null, job_id: null, attempt: null, landed_commit: null, created_at: now, updated_at: now, landed_at: null,
    };
    entries.push(created);
    return created;
  });
  new MergeLog(paths, () => store.now()).write(entry.id, `enqueued ${branch} (${tip.slice(0, 12)}) into ${into}; reviewed tree ${reviewed.tree.tree.slice(0, 12)} passed in loop ${reviewed.tree.loop}${validate ? `; validate: ${validate.join(' ')}` : ''}`);
  return entry;
}

async function passedLoop(paths: ControlPlanePaths, repo: string, branch: string, worktree: string | null, tip: string): Promise<{ loop: LoopState; tree: ReviewedTree }> {
  for (const loop of new LoopStore(paths).list()) {
    if (loop.status !== 'passed' || loop.job) continue;
    const round = loop.rounds.filter((r) => r.status === 'passed' && isPinned(r.identity)).at(-1);
    if (!round) continue;
    const mine = worktree !== null ? realOr(loop.checkout) === worktree && (await isAncestor(repo, round.identity.head, tip)) : round.identity.head === tip;
    if (mine) return { loop, tree: { loop: loop.id, ...round.identity } };
  }
  throw new NotReviewedError(`no review loop passed on branch '${printable(branch, 100)}'${worktree ? ` (worktree ${worktree})` : ''}; run mam loop --worktree … first`);
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}
