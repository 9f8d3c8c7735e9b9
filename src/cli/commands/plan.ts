import { ExitCode } from '../../core/base/errors';
import { printable } from '../../core/base/ids';
import { LoopStore } from '../../core/loop/loopState';
import { PlanRunner } from '../../core/plan/planRunner';
import { cancelPlan, startPlan } from '../../core/plan/planStart';
import { draftPlan } from '../../core/plan/planDraft';
import { PlanStore, type PlanState } from '../../core/plan/planState';
import { planNeeds, planStatusRecord, waitsFor, type PlanStatusRecord } from '../../core/plan/planStatus';
import { defineCommand, JSON_OPTION, type Command, type CommandContext } from '../command';
import { dash, since, table } from '../output';

const EXIT_DETAILS = 'Exit status: 0 every task landed; 1 a task failed, was blocked, was cancelled or crossed a budget; 5 could not start (another process runs the plan); 64 a bad plan (one line naming the place).';

const run = defineCommand({
  path: ['plan', 'run'],
  summary: 'run a plan of tasks to landed code: each task in its worktree, reviewed, landed through the merge queue',
  positionals: [{ name: 'file', required: true, description: 'the plan (YAML; docs/plans.md)' }],
  options: {
    'max-parallel': { kind: 'count', value: 'N', description: 'tasks at once (default: the plan\'s max_parallel, else 2)' },
    ...JSON_OPTION,
  },
  details: `The plan is stored under .mam/plans/<id>/ and run by this process, its state written before each step; if it stops, mam plan resume ID goes on from there.\n${EXIT_DETAILS}`,
  async run(ctx) {
    const o = ctx.args.options;
    const state = await startPlan(ctx.jobs(), ctx.args.positionals[0]!, { baseDir: ctx.io.cwd, ...(o['max-parallel'] !== undefined ? { maxParallel: o['max-parallel'] } : {}) });
    if (!o.json) ctx.io.stderr(`mam: plan ${state.id}: ${printable(state.title, 120)} (${state.tasks.length} tasks into ${state.into})\n`);
    return runPlan(ctx, state.id, o.json);
  },
});

const resume = defineCommand({
  path: ['plan', 'resume'],
  summary: 'go on with a plan whose run stopped (a crash, a reboot): nothing landed or passed is redone',
  positionals: [{ name: 'id', required: true, description: 'the plan ID (p-…)' }],
  options: { ...JSON_OPTION },
  details: EXIT_DETAILS,
  async run(ctx) {
    const id = ctx.args.positionals[0]!;
    store(ctx).require(id);
    return runPlan(ctx, id, ctx.args.options.json);
  },
});

const status = defineCommand({
  path: ['plan', 'status'],
  summary: 'a plan\'s tasks: state, needs, sessions, loop round, landed commit, tokens, what each waits for',
  positionals: [{ name: 'id', required: true, description: 'the plan ID (p-…)' }],
  options: { ...JSON_OPTION },
  async run(ctx) {
    const plan = store(ctx).require(ctx.args.positionals[0]!);
    if (ctx.args.options.json) ctx.json(statusRecord(ctx, plan));
    else printStatus(ctx, plan);
    return exitOf(plan);
  },
});

const list = defineCommand({
  path: ['plan', 'list'],
  summary: 'the workspace\'s plans, newest first',
  options: { ...JSON_OPTION },
  async run(ctx) {
    const { plans, unreadable } = store(ctx).listing();
    if (ctx.args.options.json) {
      ctx.json({ plans: plans.map((p) => ({ id: p.id, title: p.title, status: p.status, into: p.into, tasks: counts(p), tokens: p.tokens, updated_at: p.updated_at })), unreadable });
      return ExitCode.ok;
    }
    if (plans.length === 0 && unreadable.length === 0) ctx.out('no plans');
    for (const line of table(plans, [
      ['PLAN', (p) => p.id],
      ['STATUS', (p) => p.status],
      ['TASKS', (p) => Object.entries(counts(p)).map(([s, n]) => `${n} ${s}`).join(', ')],
      ['UPDATED', (p) => since(p.updated_at)],
      ['TITLE', (p) => printable(p.title, 60)],
    ])) ctx.out(line);
    for (const u of unreadable) ctx.io.stderr(`mam: warning: plan ${u.id}: ${printable(u.problem, 200)}\n`);
    return ExitCode.ok;
  },
});

const cancel = defineCommand({
  path: ['plan', 'cancel'],
  summary: 'stop a plan: nothing more starts, its running loops are cancelled; branches and worktrees stay',
  positionals: [{ name: 'id', required: true, description: 'the plan ID (p-…)' }],
  options: { ...JSON_OPTION },
  async run(ctx) {
    const { plan, changed } = await cancelPlan(ctx.jobs(), ctx.args.positionals[0]!);
    if (ctx.args.options.json) ctx.json({ ...statusRecord(ctx, plan), changed });
    else ctx.out(changed ? `plan ${plan.id} cancelled` : `plan ${plan.id} had already ended (${plan.status})`);
    return ExitCode.ok;
  },
});

const draft = defineCommand({
  path: ['plan', 'draft'],
  summary: 'ask a planner session for a plan for a goal; the valid plan is written for you to read, edit and run',
  options: {
    goal: { kind: 'string', value: 'TEXT', required: true, description: 'what the plan is for' },
    planner: { kind: 'string', value: 'SESSION', required: true, description: 'the session (or human:NAME) that drafts it' },
    out: { kind: 'string', value: 'FILE', default: 'plan.yaml', description: 'where the plan is written (default plan.yaml; never over an existing file)' },
    ...JSON_OPTION,
  },
  details: 'An answer that is not a valid plan goes back to the planner once, with every problem.\nExit status: 0 written; 1 the planner failed or answered twice with an invalid plan; 64 bad input.',
  async run(ctx) {
    const o = ctx.args.options;
    const result = await draftPlan(ctx.jobs(), { goal: o.goal, planner: o.planner, out: o.out, baseDir: ctx.io.cwd });
    if (o.json) ctx.json(result);
    else ctx.out(`${result.file}: a plan of ${result.tasks} task${result.tasks === 1 ? '' : 's'}; read it, then: mam plan run ${result.file}`);
    return ExitCode.ok;
  },
});

export const planCommands: readonly Command[] = [run, resume, status, list, cancel, draft];

async function runPlan(ctx: CommandContext, id: string, json: boolean | undefined): Promise<number> {
  const runner = new PlanRunner({ jobs: ctx.jobs(), sessions: ctx.sessions(), logger: ctx.logger, ...(json ? {} : { say: (line: string) => ctx.io.stderr(`mam: ${printable(line, 300)}\n`) }) }, store(ctx));
  try {
    const plan = await runner.run(id);
    if (json) ctx.json(statusRecord(ctx, plan));
    else printStatus(ctx, plan);
    return exitOf(plan);
  } finally {
    runner.dispose();
  }
}

function store(ctx: CommandContext): PlanStore {
  return new PlanStore(ctx.controlPlane().paths);
}

function exitOf(plan: PlanState): number {
  if (plan.status === 'running') return ExitCode.ok;
  return plan.tasks.every((t) => t.state === 'landed') ? ExitCode.ok : ExitCode.failed;
}

function counts(plan: PlanState): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of plan.tasks) out[t.state] = (out[t.state] ?? 0) + 1;
  return out;
}

function statusRecord(ctx: CommandContext, plan: PlanState): PlanStatusRecord {
  return planStatusRecord(plan, new LoopStore(ctx.controlPlane().paths));
}

function printStatus(ctx: CommandContext, plan: PlanState): void {
  const needs = planNeeds(plan);
  const loops = new LoopStore(ctx.controlPlane().paths);
  ctx.out(`plan ${plan.id} ${plan.status}: ${printable(plan.title, 100)} → ${plan.into}${plan.tokens ? ` · ${plan.tokens} tokens` : ''}`);
  for (const line of table(plan.tasks, [
    ['TASK', (t) => t.id],
    ['STATE', (t) => (t.state === 'running' && t.step ? `running: ${t.step}` : t.state)],
    ['NEEDS', (t) => dash((needs.get(t.id) ?? []).join(','))],
    ['CREATOR', (t) => dash(t.creator)],
    ['ROUND', (t) => dash(t.loop_id ? loops.get(t.loop_id)?.rounds.length : null)],
    ['LANDED', (t) => dash(t.landed_commit?.slice(0, 12))],
    ['TOKENS', (t) => (t.tokens ? String(t.tokens) : '-')],
    ['WAITS FOR / WHY', (t) => printable(waitsFor(plan, needs, t).length ? `after ${waitsFor(plan, needs, t).join(', ')}` : (t.why ?? ''), 100)],
  ])) ctx.out(line);
}
