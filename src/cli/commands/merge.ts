import { ExitCode, UsageError } from '../../core/base/errors';
import { printable } from '../../core/base/ids';
import { isGitCheckout } from '../../core/loop/snapshot';
import { enqueue } from '../../core/merge/enqueue';
import { MergeLog } from '../../core/merge/mergeLog';
import { MergeQueueStore, type MergeEntry } from '../../core/merge/mergeQueue';
import { MergeRunner, removeEntry } from '../../core/merge/mergeRunner';
import { defineCommand, JSON_OPTION, type Command, type CommandContext } from '../command';
import { since } from '../output';

/** The workspace, which must be a checkout of the repository whose branches the queue lands. */
async function repoOf(ctx: CommandContext): Promise<string> {
  const repo = ctx.workspace();
  if (!(await isGitCheckout(repo))) throw new UsageError(`the workspace ${repo} is not a git checkout`);
  return repo;
}

const enqueueCommand = defineCommand({
  path: ['merge', 'enqueue'],
  summary: 'queue a branch whose review loop passed, to land it on its target',
  positionals: [{ name: 'what', description: 'a worktree folder, or a branch name', required: true }],
  options: {
    validate: { kind: 'string', value: 'CMD', description: 'a command that must succeed on the rebased branch (split into words, never run by a shell)' },
    into: { kind: 'string', value: 'BRANCH', description: 'the target branch (default: the branch checked out in the primary worktree)' },
    ...JSON_OPTION,
  },
  details: [
    'The tree the reviewers passed is that of the newest passed loop on the branch\'s worktree',
    '(mam loop --worktree DIR) whose head the branch still contains; a branch checked out nowhere',
    'needs a passed loop whose head is its tip. The queue lands that tree, or reviews the new one first.',
    '',
    'Exit status: 0 queued; 64 no review loop passed on that branch, or bad input (nothing is queued).',
  ].join('\n'),
  async run(ctx) {
    const o = ctx.args.options;
    const entry = await enqueue(ctx.controlPlane().paths, await repoOf(ctx), {
      what: ctx.args.positionals[0]!, baseDir: ctx.io.cwd, ...(o.validate !== undefined ? { validate: o.validate } : {}), ...(o.into !== undefined ? { into: o.into } : {}),
    });
    if (o.json) ctx.json(entry);
    else ctx.out(`Queued ${entry.branch} into ${entry.into} as ${entry.id} (reviewed in loop ${entry.reviewed.loop}).`);
    return 0;
  },
});

const status = defineCommand({
  path: ['merge', 'status'],
  summary: 'the merge queue: entries in order, their state, why they wait, their log',
  options: { ...JSON_OPTION },
  details: 'JSON: {file, problem, entries: [entry + log_file, log_tail]}; problem names a corrupt queue file.',
  async run(ctx) {
    const paths = ctx.controlPlane().paths;
    const { entries, problem } = new MergeQueueStore(paths).reading();
    const log = new MergeLog(paths);
    if (ctx.args.options.json) {
      ctx.json({ file: paths.mergeQueueFile, problem, entries: entries.map((e) => ({ ...e, log_file: log.file(e.id), log_tail: log.tail(e.id) })) });
      return problem ? ExitCode.failed : ExitCode.ok;
    }
    if (problem) throw new UsageError(problem);
    if (entries.length === 0) ctx.out('The merge queue is empty.');
    for (const e of entries) {
      ctx.out(`${e.id}  ${stateOf(e)}  ${e.branch} → ${e.into}  ${since(e.created_at)} ago${e.job_id ? `  job ${e.job_id}${jobState(ctx, e.job_id)}` : ''}`);
      if (e.reason) ctx.out(`  ${printable(e.reason, 300)}`);
      for (const line of log.tail(e.id, 3)) ctx.out(`  | ${printable(line, 200)}`);
    }
    return 0;
  },
});

const runCommand = defineCommand({
  path: ['merge', 'run'],
  summary: 'land the runnable entries one at a time, then exit',
  options: {
    'validate-timeout': { kind: 'seconds', value: 'S', description: 'how long a validation command may run (default 1800)' },
    ...JSON_OPTION,
  },
  details: [
    'Each entry: rebase onto the target\'s tip in a scratch worktree under .mam/merge/scratch/, run its',
    'validation there, review the result first when its tree is not the one the reviewers passed, then',
    'fast-forward the target (in the worktree that has it checked out, only when that one is clean).',
    'A conflict, a red validation or a failed review becomes a job for the branch\'s creator; the entry',
    'waits for it, and the entries behind it go on. A run killed midway resumes with the next run.',
    '',
    'Exit status: 0 nothing waits; 1 an entry waits (on its creator\'s job or a dirty checkout);',
    '5 another mam merge run is landing.',
  ].join('\n'),
  async run(ctx) {
    const runner = new MergeRunner({
      engine: ctx.jobs(), logger: ctx.logger, repo: await repoOf(ctx),
      ...(ctx.args.options['validate-timeout'] !== undefined ? { validateTimeoutMs: ctx.args.options['validate-timeout'] * 1000 } : {}),
      ...(ctx.args.options.json ? {} : { say: (line: string) => ctx.out(printable(line, 400)) }),
    });
    const result = await runner.run();
    const waiting = result.entries.filter((e) => e.state === 'waiting');
    if (ctx.args.options.json) ctx.json({ landed: result.landed.map((e) => e.id), entries: result.entries });
    else ctx.out(`Landed ${result.landed.length}; ${waiting.length} waiting.`);
    return waiting.length > 0 ? ExitCode.failed : ExitCode.ok;
  },
});

const remove = defineCommand({
  path: ['merge', 'remove'],
  summary: 'take an entry out of the queue',
  positionals: [{ name: 'id', description: 'the entry ID (mam merge status)', required: true }],
  async run(ctx) {
    const removed = await removeEntry(ctx.jobs(), await repoOf(ctx), ctx.args.positionals[0]!);
    ctx.out(`Removed ${removed.id} (${removed.branch} → ${removed.into}, ${removed.state}).`);
    return 0;
  },
});

function stateOf(e: MergeEntry): string {
  return e.state === 'running' && e.step ? `running:${e.step}` : e.state;
}

function jobState(ctx: CommandContext, id: string): string {
  const job = ctx.controlPlane().jobs.get(id);
  return job ? ` (${job.state})` : '';
}

export const mergeCommands: readonly Command[] = [enqueueCommand, status, runCommand, remove];
