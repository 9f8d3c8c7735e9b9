import { UsageError } from '../../core/base/errors';
import type { Core } from '../../core/core';
import { isGitCheckout } from '../../core/loop/snapshot';
import { OverlapChecker } from '../../core/overlap/overlapChecker';
import { defineTool, type Tool } from '../tool';
import { arg, input } from '../toolInput';

/** The workspace, which must be a checkout of the repository whose branches the queue lands. */
async function repoOf(core: Core): Promise<string> {
  if (!(await isGitCheckout(core.workspace))) throw new UsageError(`the workspace ${core.workspace} is not a git checkout`);
  return core.workspace;
}

const conflicts = defineTool({
  name: 'conflicts',
  title: 'Overlapping checkouts',
  description: [
    "Which running sessions' checkouts (worktrees of one repository) change the same files, with the lines, and which pairs would",
    'not merge cleanly (predicted with git merge-tree; no checkout is touched). Sessions in one folder share a checkout and are never a pair.',
  ].join(' '),
  input: input({}),
  acts: true, // it runs git in the sessions' checkouts
  hints: { readOnlyHint: true },
  cli: 'mam conflicts --json',
  async run(_args, { core }) {
    core.trust.require('run git');
    const checker = new OverlapChecker({ oneShot: true });
    const report = await checker.check(await core.controlPlane.sessions.list()).finally(() => checker.dispose());
    const n = report.pairs.length;
    const clashing = report.pairs.filter((p) => p.kind === 'conflict').length;
    return { data: { ...report }, text: n === 0 ? 'No overlaps between running sessions.' : `${n} overlapping pair${n === 1 ? '' : 's'} of checkouts, ${clashing} predicted to conflict.` };
  },
});

const enqueue = defineTool({
  name: 'merge_enqueue',
  title: 'Queue a branch to land',
  description: 'Queues a branch whose review loop passed (a worktree folder or a branch name) to land on its target: rebased, validated, reviewed again if its tree changed, fast-forwarded. A branch no loop passed is refused.',
  input: input({
    what: arg.text.required({ description: 'a worktree folder (relative to the workspace) or a branch name', max: 4096 }),
    validate: arg.text({ description: 'a command that must succeed on the rebased branch (split into words, never run by a shell)', max: 4096 }),
    into: arg.text({ description: 'the target branch (default: the branch checked out in the primary worktree)' }),
  }),
  acts: true,
  hints: { destructiveHint: false, openWorldHint: false },
  cli: 'mam merge enqueue WHAT [--validate CMD] [--into BRANCH] --json',
  async run(a, { core }) {
    core.trust.require('change the merge queue');
    await repoOf(core);
    const entry = await core.mergeQueue.enqueue({ what: a.what, ...(a.validate !== undefined ? { validate: a.validate } : {}), ...(a.into !== undefined ? { into: a.into } : {}) });
    return { data: { entry }, text: `Queued ${entry.branch} into ${entry.into} as ${entry.id} (reviewed in loop ${entry.reviewed.loop}).` };
  },
});

const status = defineTool({
  name: 'merge_status',
  title: 'The merge queue',
  description: "The merge queue's entries in order: state and step, why one waits, the job it waits on, and the tail of its log.",
  input: input({ log_lines: arg.count({ description: "lines of each entry's log (default 5)", min: 0, max: 1000 }) }),
  acts: false,
  hints: { readOnlyHint: true },
  cli: 'mam merge status --json',
  async run(a, { core }) {
    const q = core.mergeQueue;
    const { entries, problem } = q.reading();
    if (problem) throw new UsageError(problem);
    const lines = a.log_lines ?? 5;
    const shown = entries.map((e) => ({ ...e, log_file: q.logFile(e.id), log_tail: lines > 0 ? q.logTail(e.id, lines) : [] }));
    return { data: { file: q.file, entries: shown }, text: entries.length === 0 ? 'The merge queue is empty.' : entries.map((e) => `${e.id} ${e.state}${e.step ? `:${e.step}` : ''} ${e.branch} → ${e.into}`).join('\n') };
  },
});

export const mergeTools: readonly Tool[] = [conflicts, enqueue, status];
