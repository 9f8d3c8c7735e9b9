import { IssueWorktrees } from '../../core/worktree/worktree';
import { defineCommand, JSON_OPTION, type Command, type CommandContext } from '../command';
import type { PositionalSpec } from '../args';

const ISSUE: readonly PositionalSpec[] = [
  { name: 'issue', description: "the issue's name: letters, digits, '.', '_' and '-', at most 64", required: true },
];

function worktrees(ctx: CommandContext): IssueWorktrees {
  return new IssueWorktrees(ctx.workspace(), { logger: ctx.logger });
}

const prepare = defineCommand({
  path: ['worktree', 'prepare'],
  summary: 'create (or reuse) the worktree of an issue on branch mam/ISSUE',
  options: {
    ...JSON_OPTION,
    base: { kind: 'string', value: 'REV', description: 'the commit to start the new branch from (default: HEAD)' },
  },
  positionals: ISSUE,
  details: [
    'Creates .mam/worktrees/ISSUE on a new branch mam/ISSUE from --base and initializes its',
    'submodules, then prints its path. Running it again reuses the worktree. If a branch mam/ISSUE',
    'is left from an earlier worktree, it is checked out again (with its commits) instead of made anew.',
    'The worktrees folder ignores itself, so the main checkout\'s git status does not change.',
    '',
    'Example:  cd "$(mam worktree prepare 42)"',
    'JSON:     {issue, path, branch, base, head, created}',
  ].join('\n'),
  async run(ctx) {
    const base = ctx.args.options.base;
    const issue = ctx.args.positionals[0]!;
    const w = await worktrees(ctx).prepare(issue, base === undefined ? {} : { base });
    if (ctx.args.options.json) {
      ctx.json({ issue: w.issue, path: w.path, branch: w.branch, base: w.base, head: w.head, created: w.created });
      return 0;
    }
    // stdout carries only the path, for `cd "$(…)"`; what happened goes to stderr, as git does.
    const at = w.head.slice(0, 12);
    const what = !w.created
      ? `reused the existing worktree of issue ${w.issue} (branch ${w.branch} at ${at})`
      : w.branchCreated
        ? `created the worktree of issue ${w.issue} on new branch ${w.branch} at ${at} (from ${base ?? 'HEAD'})`
        : `created the worktree of issue ${w.issue} on the existing branch ${w.branch} at ${at}`;
    ctx.io.stderr(`mam: ${what}\n`);
    ctx.out(w.path);
    return 0;
  },
});

const remove = defineCommand({
  path: ['worktree', 'remove'],
  summary: "remove an issue's worktree if it holds no unsaved work; keeps the branch",
  options: { ...JSON_OPTION },
  positionals: ISSUE,
  details: [
    'Refuses (exit 1), naming what, while the worktree or any of its submodules (recursively) has',
    'changed or untracked files, commits on a detached HEAD, or submodule commits or stashes that',
    'exist nowhere else (a worktree\'s submodule repositories are deleted with it). Files git ignores',
    'are deleted with the worktree, as git worktree remove does. The branch mam/ISSUE is kept.',
    '',
    'There is no --force, so no work is lost by accident. To throw a worktree away by hand:',
    '  git worktree remove --force .mam/worktrees/ISSUE   # discards its changes and submodules',
    '  git branch -D mam/ISSUE                            # discards its commits',
    'JSON:     {issue, path, branch, head, removed}',
  ].join('\n'),
  async run(ctx) {
    const issue = ctx.args.positionals[0]!;
    const r = await worktrees(ctx).remove(issue);
    if (ctx.args.options.json) {
      ctx.json({ issue: r.issue, path: r.path, branch: r.branch, head: r.head, removed: true });
      return 0;
    }
    const gone = r.alreadyGone ? `the worktree of issue ${r.issue} was already deleted; pruned git's record of it` : `removed the worktree of issue ${r.issue} (${r.path})`;
    const kept = r.branch
      ? `kept branch ${r.branch}${r.head ? ` at ${r.head.slice(0, 12)}` : ''} (delete it with: git branch -d ${r.branch})`
      : 'its HEAD was detached, on no branch';
    ctx.out(`${gone}; ${kept}`);
    return 0;
  },
});

export const worktreeCommands: readonly Command[] = [prepare, remove];
