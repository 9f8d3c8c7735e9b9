import { ExitCode, UsageError } from '../../core/base/errors';
import { LoopRunner } from '../../core/loop/loopRunner';
import { cancelLoop } from '../../core/loop/loopCancel';
import { LoopStore, type LoopState } from '../../core/loop/loopState';
import { isPinned } from '../../core/loop/snapshot';
import { loopUsage } from '../../core/loop/reports';
import { settleUsage } from '../../core/jobs/jobUsage';
import { formatUsage } from '../../core/usage/format';
import { workspacePrices } from '../../core/usage/prices';
import { defineCommand, JSON_OPTION, type Command, type CommandContext } from '../command';
import { dash, since, table } from '../output';

const run = defineCommand({
  path: ['loop'],
  summary: 'plan, implement and review until every reviewer says PASS on the same snapshot',
  options: {
    task: { kind: 'string', value: 'TEXT', required: true, description: 'the task' },
    creator: { kind: 'string', value: 'SESSION', required: true, description: 'the session that implements, commits and fixes' },
    planner: { kind: 'string', value: 'SESSION', aliases: ['plan'], description: 'a session that writes a plan first' },
    'plan-talk': { kind: 'string', value: 'N', description: 'turns the creator may challenge the plan (default 1 with a planner)' },
    reviewer: { kind: 'string', value: 'A,B', description: 'the reviewing sessions (default: the creator reviews itself)' },
    'all-reviewer': { kind: 'boolean', description: 'every running reviewer session except the creator' },
    'max-loop': { kind: 'count', value: 'N', description: 'review rounds at most (default 3)' },
    'max-rebut': { kind: 'string', value: 'N', description: 'times the creator may answer a finding with [REBUT: reason] (default 2)' },
    'review-only': { kind: 'boolean', description: 'skip implementing: review what is there' },
    worktree: { kind: 'string', value: 'DIR', description: 'review this checkout instead of the workspace' },
    base: { kind: 'string', value: 'REV', description: 'what the changes are measured against (default HEAD when the loop starts)' },
    'reports-dir': { kind: 'string', value: 'DIR', description: 'where passing reports go: a folder inside the workspace, relative to the current folder (default: MAM_REPORTS_DIR, else .mam/reports)' },
    ...JSON_OPTION,
  },
  details: [
    'Each round pins base, head and a tree hash of the working tree (uncommitted files included);',
    'if the tree changes during a round, its approvals are discarded and it is reviewed again.',
    'Passing reports go to <reports dir>/<reviewer>/report-<job>.md, beside report-<job>.identity.json;',
    'the reports dir is .mam/reports unless --reports-dir or MAM_REPORTS_DIR (relative to the workspace) names',
    'another folder inside the workspace, such as .agents/reports to commit them.',
    'A loop stopped midway continues where it stopped: run the same command again, or mam loop resume ID.',
    '',
    'Exit status: 0 every reviewer passed; 1 not passed within --max-loop (or a job failed);',
    '5 could not start (another loop on this checkout, a session busy or stopped); 64 bad input.',
  ].join('\n'),
  async run(ctx) {
    const o = ctx.args.options;
    const count = (flag: 'plan-talk' | 'max-loop' | 'max-rebut'): number | undefined => {
      const v = o[flag];
      if (v === undefined) return undefined;
      if (typeof v === 'number') return v;
      if (!/^\d+$/.test(v)) throw new UsageError(`--${flag} must be a whole number (got '${v}')`);
      return Number(v);
    };
    const reviewers = o.reviewer === undefined ? undefined : o.reviewer.split(',').map((r) => r.trim()).filter(Boolean);
    if (reviewers !== undefined && reviewers.length === 0) throw new UsageError('--reviewer names no session');
    const runner = loopRunner(ctx);
    const state = await runner.start({
      task: o.task,
      creator: o.creator,
      baseDir: ctx.io.cwd,
      ...(o.planner !== undefined ? { planner: o.planner } : {}),
      ...(count('plan-talk') !== undefined ? { planTalk: count('plan-talk')! } : {}),
      ...(reviewers ? { reviewers } : {}),
      ...(o['all-reviewer'] ? { allReviewers: true } : {}),
      ...(count('max-loop') !== undefined ? { maxLoop: count('max-loop')! } : {}),
      ...(count('max-rebut') !== undefined ? { maxRebut: count('max-rebut')! } : {}),
      ...(o['review-only'] ? { reviewOnly: true } : {}),
      ...(o.worktree !== undefined ? { worktree: o.worktree } : {}),
      ...(o.base !== undefined ? { base: o.base } : {}),
      ...(o['reports-dir'] !== undefined ? { reportsDir: o['reports-dir'] } : {}),
    });
    return report(ctx, state);
  },
});

const resume = defineCommand({
  path: ['loop', 'resume'],
  summary: 'continue a loop that stopped midway, without repeating finished jobs',
  positionals: [{ name: 'loop', description: 'the loop ID', required: true }],
  options: { ...JSON_OPTION },
  async run(ctx) {
    return report(ctx, await loopRunner(ctx).resume(ctx.args.positionals[0]!));
  },
});

const status = defineCommand({
  path: ['loop', 'status'],
  summary: "a loop's rounds, verdicts and snapshot identities",
  positionals: [{ name: 'loop', description: 'the loop ID (default: the newest)' }],
  options: { ...JSON_OPTION },
  async run(ctx) {
    const store = new LoopStore(ctx.controlPlane().paths);
    const id = ctx.args.positionals[0];
    const loop = id ? store.get(id) : store.list()[0];
    if (!loop) throw new UsageError(id ? `unknown loop '${id}'` : 'no loops in this workspace');
    // What its jobs spent (docs/usage.md), read again where it may still be settling.
    const cp = ctx.controlPlane();
    const jobs = new Map((await settleUsage(ctx.jobs(), loop.steps.flatMap((st) => cp.jobs.get(st.job_id) ?? []))).map((j) => [j.id, j]));
    const usage = loopUsage(loop, (jobId) => jobs.get(jobId));
    if (ctx.args.options.json) {
      ctx.json({ ...loop, usage });
      return 0;
    }
    const prices = workspacePrices(cp.paths, (m) => ctx.logger.warn(m));
    const tokens = (u: Parameters<typeof formatUsage>[0]): string => formatUsage(u, prices) ?? 'not recorded';
    ctx.out(`loop ${loop.id}: ${loop.status}${loop.reason ? ` (${loop.reason})` : ''}`);
    ctx.out(`task: ${loop.task.split('\n')[0]}`);
    ctx.out(`creator ${loop.creator}, reviewers ${loop.reviewers.join(', ')}${loop.planner ? `, planner ${loop.planner}` : ''}; checkout ${loop.checkout}`);
    ctx.out(`reports: ${loop.reports_dir ?? ctx.controlPlane().paths.reportsDir}`);
    if (usage.planning) ctx.out(`planning tokens: ${tokens(usage.planning)}`);
    for (const r of loop.rounds) {
      const what = isPinned(r.identity) ? `base ${r.identity.base.slice(0, 12)} head ${r.identity.head.slice(0, 12)} tree ${r.identity.tree.slice(0, 12)}` : `what ${loop.creator} reported (job ${loop.job?.id ?? '?'})`;
      ctx.out(`round ${r.n} (${r.status}): ${what}`);
      for (const v of r.reviews) ctx.out(`  ${v.reviewer}: ${v.verdict ?? '…'} (job ${v.job_id})${v.report ? ` → ${v.report}` : ''}`);
      if (r.rebut) ctx.out(`  rebuttal: ${r.rebut}`);
      const spent = usage.rounds.find((u) => u.n === r.n);
      if (spent) ctx.out(`  tokens: ${tokens(spent.usage)}`);
    }
    ctx.out(`tokens in total: ${tokens(usage.total)}`);
    return 0;
  },
});

const list = defineCommand({
  path: ['loop', 'list'],
  summary: 'the loops of this workspace, newest first',
  options: { ...JSON_OPTION },
  async run(ctx) {
    const { loops, unreadable } = new LoopStore(ctx.controlPlane().paths).listing();
    for (const u of unreadable) ctx.logger.warn(`skipped ${u.why}`);
    if (ctx.args.options.json) {
      ctx.json(loops);
      return 0;
    }
    if (loops.length === 0) ctx.out('No loops in this workspace.');
    else for (const line of table(loops, [['ID', (l) => l.id], ['STATUS', (l) => l.status], ['ROUNDS', (l) => String(l.rounds.length)], ['CREATOR', (l) => l.creator], ['AGE', (l) => since(l.created_at)], ['REASON', (l) => dash(l.reason)], ['TASK', (l) => l.task.split('\n')[0]!.slice(0, 50)]])) ctx.out(line);
    return 0;
  },
});

const cancel = defineCommand({
  path: ['loop', 'cancel'],
  summary: 'stop a loop: the jobs it has open, and its runner (in a terminal or a VS Code window) lets go',
  positionals: [{ name: 'loop', description: 'the loop ID', required: true }],
  async run(ctx) {
    const store = new LoopStore(ctx.controlPlane().paths);
    const loop = store.get(ctx.args.positionals[0]!);
    if (!loop) throw new UsageError(`unknown loop '${ctx.args.positionals[0]}'`);
    if (loop.status !== 'running') {
      ctx.out(`Loop ${loop.id} had already ended: ${loop.status}.`);
      return 0;
    }
    // No signal: the loop's owner may be a VS Code window. It sees the cancel and lets go (cancelLoop).
    await cancelLoop(ctx.jobs(), store, loop.id);
    ctx.out(`Cancelled loop ${loop.id}.`);
    return 0;
  },
});

function loopRunner(ctx: CommandContext<typeof JSON_OPTION>): LoopRunner {
  const runner = new LoopRunner(ctx.jobs(), ctx.logger);
  if (!ctx.args.options.json) runner.onDidProgress(({ message }) => ctx.out(message));
  return runner;
}

function report(ctx: CommandContext<typeof JSON_OPTION>, state: LoopState): number {
  if (ctx.args.options.json) ctx.json(state);
  return state.exit_code ?? ExitCode.failed;
}

export const loopCommands: readonly Command[] = [run, resume, status, list, cancel];
