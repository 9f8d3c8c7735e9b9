import * as fs from 'node:fs';
import * as path from 'node:path';
import { ExitCode, MamError, UsageError } from '../base/errors';
import { nameProblem, printable } from '../base/ids';
import { silentLogger, type Logger } from '../base/log';
import { withLock } from '../store/lock';
import { ControlPlanePaths } from '../store/paths';
import { Git, GitCommandError, gitReason, parseWorktreeList, type WorktreeEntry } from './git';
import { describeUnsaved, inspectWorktree, remedy } from './unsavedWork';

/** The operation was understood but refused to protect work (a dirty worktree, a foreign folder). Exit 1. */
export class WorktreeRefusedError extends MamError {
  constructor(message: string) {
    super(message, 'refused', ExitCode.failed);
  }
}

export interface PreparedWorktree {
  issue: string;
  /** Absolute path of the worktree. */
  path: string;
  /** Short branch name, `mam/<issue>`. */
  branch: string;
  /** The commit `--base` (default HEAD) names now. */
  base: string;
  /** The commit the worktree has checked out. */
  head: string;
  /** False when an existing worktree was reused. */
  created: boolean;
  /** True when the branch was made now; false when an existing `mam/<issue>` was checked out. */
  branchCreated: boolean;
}

export interface RemovedWorktree {
  issue: string;
  path: string;
  /** The branch the worktree was on (kept), or null if its HEAD was detached. */
  branch: string | null;
  /** Its last commit, or null when the folder was already gone. */
  head: string | null;
  /** True when the folder had already been deleted by hand and only git's record was pruned. */
  alreadyGone: boolean;
}

export interface IssueWorktreesOptions {
  logger?: Logger;
  /** Extra environment for git, e.g. `GIT_CONFIG_*` (merged over the process environment). */
  gitEnv?: Record<string, string | undefined>;
  /** How long to wait for another prepare/remove of this workspace (submodule clones can be slow). */
  lockTimeoutMs?: number;
}

const BRANCH_PREFIX = 'mam/';

/**
 * Issue worktrees for creator agents: `<workspace>/.mam/worktrees/<issue>` on branch `mam/<issue>`.
 * Every change happens under one lock per workspace, because concurrent `git worktree add` calls
 * race on `.git/worktrees` and submodule init writes the shared `.git/config`.
 */
export class IssueWorktrees {
  readonly workspace: string;
  private readonly git: Git;
  private readonly logger: Logger;
  private readonly paths: ControlPlanePaths;

  constructor(workspace: string, private readonly options: IssueWorktreesOptions = {}) {
    this.workspace = fs.realpathSync(workspace);
    this.git = new Git(options.gitEnv);
    this.logger = options.logger ?? silentLogger;
    this.paths = new ControlPlanePaths(this.workspace);
  }

  get worktreesDir(): string {
    return path.join(this.paths.dir, 'worktrees');
  }

  pathOf(issue: string): string {
    return path.join(this.worktreesDir, issue);
  }

  /** Creates (or reuses) the issue's worktree and returns where it is. */
  async prepare(issue: string, options: { base?: string } = {}): Promise<PreparedWorktree> {
    await this.checkIssue(issue);
    await this.requireRepository();
    const base = await this.resolveBase(options.base ?? 'HEAD');
    return this.locked(async () => {
      const target = this.pathOf(issue);
      const branch = BRANCH_PREFIX + issue;
      const entry = await this.findEntry(target);
      if (entry && fs.existsSync(target)) {
        if (entry.branch !== `refs/heads/${branch}`) {
          throw new WorktreeRefusedError(`${this.label(target)} is a worktree on ${describeHead(entry)}, not on ${branch}; switch it back (git -C ${target} switch ${branch}) or remove it`);
        }
        const head = await this.headOf(target);
        if (options.base !== undefined) await this.warnIfNotBasedOn(head, base, options.base, `the existing worktree ${this.label(target)}`);
        return { issue, path: target, branch, base, head, created: false, branchCreated: false };
      }
      if (entry) {
        // Its folder was deleted by hand: drop git's record of it so the path can be used again.
        this.logger.info(`pruning git's record of the deleted worktree ${target}`);
        await this.git.ok(this.workspace, ['worktree', 'prune'], 'git worktree prune');
      } else if (isNonEmptyDir(target)) {
        throw new WorktreeRefusedError(`${this.label(target)} exists but is not a worktree of this repository; look inside, then move it aside`);
      }
      this.ensureIgnored();
      const branchExists = (await this.git.run(this.workspace, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).exitCode === 0;
      // A branch left by an earlier worktree holds that work: check it out again rather than fail.
      const add = branchExists ? ['worktree', 'add', target, branch] : ['worktree', 'add', '-b', branch, target, base];
      await this.git.ok(this.workspace, add, `git worktree add ${this.label(target)}`);
      await this.initSubmodules(issue, target, branch, branchExists);
      const head = await this.headOf(target);
      if (branchExists && options.base !== undefined) await this.warnIfNotBasedOn(head, base, options.base, `the existing branch ${branch}`);
      return { issue, path: target, branch, base, head, created: true, branchCreated: !branchExists };
    });
  }

  /**
   * Removes the issue's worktree and keeps its branch. Refuses, naming what, while the worktree or a
   * submodule (recursively) holds changed or untracked files or commits nothing else keeps.
   */
  async remove(issue: string): Promise<RemovedWorktree> {
    await this.checkIssue(issue);
    await this.requireRepository();
    return this.locked(async () => {
      const target = this.pathOf(issue);
      const entry = await this.findEntry(target);
      if (!entry) {
        if (fs.existsSync(target)) {
          throw new WorktreeRefusedError(`${this.label(target)} is not a worktree git knows; nothing removed — look inside and delete it by hand if it holds nothing you need`);
        }
        throw new UsageError(`no worktree for issue '${issue}' (${this.label(target)} does not exist)`, 'unknown_worktree');
      }
      const branch = entry.branch?.replace(/^refs\/heads\//, '') ?? null;
      if (entry.locked !== undefined) {
        throw new WorktreeRefusedError(`${this.label(target)} is locked${entry.locked ? ` (${entry.locked})` : ''}; nothing removed — unlock it with: git worktree unlock ${target}`);
      }
      if (!fs.existsSync(target)) {
        await this.git.ok(this.workspace, ['worktree', 'prune'], 'git worktree prune');
        return { issue, path: target, branch, head: entry.head ?? null, alreadyGone: true };
      }
      const { unsaved, hasPopulatedSubmodules } = await inspectWorktree(this.git, target);
      if (unsaved.length > 0) {
        throw new WorktreeRefusedError(`not removed: unsaved work in ${describeUnsaved(unsaved, this.label(target))}; ${remedy(unsaved)} first`);
      }
      const head = await this.headOf(target);
      // git refuses any worktree with checked-out submodules unless forced; we have just checked
      // them all ourselves, more strictly than git would. Without submodules git checks once more.
      const force = hasPopulatedSubmodules ? ['--force'] : [];
      await this.git.ok(this.workspace, ['worktree', 'remove', ...force, target], `git worktree remove ${this.label(target)}`);
      await this.git.ok(this.workspace, ['worktree', 'prune'], 'git worktree prune');
      return { issue, path: target, branch, head, alreadyGone: false };
    });
  }

  /** Bad issue names are usage errors answered before anything is touched. */
  private async checkIssue(issue: string): Promise<void> {
    const problem = nameProblem(issue, 'issue');
    if (problem) throw new UsageError(problem, 'bad_name');
    const r = await this.git.run(this.workspace, ['check-ref-format', `refs/heads/${BRANCH_PREFIX}${issue}`]);
    if (r.exitCode !== 0) {
      throw new UsageError(`issue '${issue}' cannot name a git branch (${BRANCH_PREFIX}${issue}): no leading '.', no '..', no trailing '.' or '.lock'`, 'bad_name');
    }
  }

  private async requireRepository(): Promise<void> {
    const r = await this.git.run(this.workspace, ['rev-parse', '--show-toplevel']);
    if (r.exitCode !== 0) throw new UsageError(`${this.workspace} is not in a git work tree; issue worktrees need one (${gitReason(r)})`, 'not_git');
  }

  private async resolveBase(rev: string): Promise<string> {
    // A leading '-' would be read as an option; no revision starts with one.
    if (rev === '' || rev.startsWith('-')) throw new UsageError(`--base '${printable(rev, 60)}' is not a revision`, 'bad_revision');
    const r = await this.git.run(this.workspace, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]);
    if (r.exitCode !== 0) throw new UsageError(`unknown revision '${printable(rev, 60)}': no commit by that name in this repository`, 'bad_revision');
    return r.stdout.trim();
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    return withLock(this.paths.lock('worktree'), fn, {
      what: 'the issue-worktree lock',
      timeoutMs: this.options.lockTimeoutMs ?? 10 * 60_000,
      logger: this.logger,
    });
  }

  private async findEntry(target: string): Promise<WorktreeEntry | undefined> {
    const list = await this.git.ok(this.workspace, ['worktree', 'list', '--porcelain'], 'git worktree list');
    const wanted = canonical(target);
    return parseWorktreeList(list).find((e) => canonical(e.path) === wanted);
  }

  private async headOf(dir: string): Promise<string> {
    return (await this.git.ok(dir, ['rev-parse', 'HEAD'], `reading HEAD of ${this.label(dir)}`)).trim();
  }

  /** Initializes submodules; on failure undoes this prepare, so it leaves a ready worktree or nothing. */
  private async initSubmodules(issue: string, target: string, branch: string, branchExisted: boolean): Promise<void> {
    if (!fs.existsSync(path.join(target, '.gitmodules'))) return;
    const r = await this.git.run(target, ['submodule', 'update', '--init', '--recursive', '--checkout']);
    if (r.exitCode === 0) return;
    const undo: string[] = [];
    // Just created, so nothing of the user's is in it; --force because git will not remove a
    // worktree holding submodules otherwise.
    const rm = await this.git.run(this.workspace, ['worktree', 'remove', '--force', target]);
    if (rm.exitCode !== 0) undo.push(`remove ${target} by hand (${gitReason(rm)})`);
    if (!branchExisted) {
      const del = await this.git.run(this.workspace, ['branch', '-D', branch]);
      if (del.exitCode !== 0) undo.push(`delete branch ${branch} by hand (${gitReason(del)})`);
    }
    await this.git.run(this.workspace, ['worktree', 'prune']);
    const after = undo.length > 0 ? `rolling back failed too: ${undo.join('; ')}` : 'rolled back, nothing was kept';
    throw new GitCommandError(`initializing the submodules of issue '${issue}' failed: ${gitReason(r)}; ${after}`);
  }

  private async warnIfNotBasedOn(head: string, base: string, rev: string, what: string): Promise<void> {
    const r = await this.git.run(this.workspace, ['merge-base', '--is-ancestor', base, head]);
    if (r.exitCode !== 0) this.logger.warn(`${what} is at ${head.slice(0, 12)}, which does not contain --base ${printable(rev, 60)}; left it as it is`);
  }

  /**
   * Makes the worktrees folder ignore itself, as pytest and mypy do with their caches, so issue
   * worktrees never show in the main checkout's `git status` even when `.mam/` is not in .gitignore.
   */
  private ensureIgnored(): void {
    const file = path.join(this.worktreesDir, '.gitignore');
    if (fs.existsSync(file)) return;
    fs.mkdirSync(this.worktreesDir, { recursive: true });
    fs.writeFileSync(file, '# Written by mam: issue worktrees stay out of the main checkout\'s git status.\n*\n');
  }

  /** Paths in messages are relative to the workspace when inside it. */
  private label(p: string): string {
    const rel = path.relative(this.workspace, p);
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
  }
}

function describeHead(entry: WorktreeEntry): string {
  return entry.branch ? `branch ${entry.branch.replace(/^refs\/heads\//, '')}` : 'a detached HEAD';
}

function canonical(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function isNonEmptyDir(p: string): boolean {
  try {
    return fs.readdirSync(p).length > 0;
  } catch {
    return fs.existsSync(p); // a file in the way counts as occupied
  }
}
