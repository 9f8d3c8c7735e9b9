import { UsageError } from '../../core/base/errors';
import type { Core } from '../../core/core';
import type { PlanState } from '../../core/plan/planState';
import { planStatusRecord, type PlanStatusRecord } from '../../core/plan/planStatus';
import { defineTool, type Tool } from '../tool';
import { arg, input } from '../toolInput';
import { waitUntil } from '../waitUntil';

function record(core: Core, plan: PlanState): PlanStatusRecord & { log: string } {
  return { ...planStatusRecord(plan, core.loops.loops), log: core.plans.runLog(plan.id) };
}

function planLine(plan: PlanStatusRecord): string {
  const counts = new Map<string, number>();
  for (const t of plan.tasks) counts.set(t.state, (counts.get(t.state) ?? 0) + 1);
  return `plan ${plan.id} ${plan.status}: ${[...counts].map(([s, n]) => `${n} ${s}`).join(', ')}${plan.reason ? ` (${plan.reason})` : ''}`;
}

const run = defineTool({
  name: 'plan_run',
  title: 'Run a plan',
  description: [
    'Runs a plan file (YAML, docs/plans.md: tasks with needs, creators, reviewers, budgets) to landed code: each task in its own',
    'worktree, reviewed in a loop, landed through the merge queue. Checked and stored here (a bad plan: one line naming the place),',
    'then run by a process of its own that outlives this call; returns the plan at once unless wait: true.',
  ].join(' '),
  input: input({
    file: arg.text.required({ description: 'the plan file, relative to the workspace', max: 4096 }),
    max_parallel: arg.count({ description: "tasks at once (default: the plan's max_parallel, else 2)", min: 1, max: 16 }),
    wait: arg.flag({ description: 'wait for the plan to end (progress notifications as its tasks move)' }),
    wait_timeout_s: arg.seconds({ description: 'with wait: stop waiting after this many seconds (the plan goes on)' }),
  }),
  acts: true,
  hints: { destructiveHint: false, openWorldHint: false },
  cli: 'mam plan run FILE [--max-parallel N] (run as mam plan resume ID in a process of its own)',
  async run(a, { core, signal, progress }) {
    if (a.wait_timeout_s !== undefined && a.wait !== true) throw new UsageError('wait_timeout_s goes with wait: true');
    const stored = await core.plans.run(a.file, a.max_parallel !== undefined ? { maxParallel: a.max_parallel } : {});
    if (a.wait !== true) return { data: { plan: record(core, stored) }, text: `${planLine(record(core, stored))}; into ${stored.into}` };
    let last = '';
    const timedOut = await waitUntil(() => {
      const now = record(core, core.plans.plans.require(stored.id));
      const line = planLine(now);
      if (line !== last) progress((last = line));
      return now.status !== 'running';
    }, { signal, ...(a.wait_timeout_s !== undefined ? { timeoutS: a.wait_timeout_s } : {}) });
    const plan = record(core, core.plans.plans.require(stored.id));
    return { data: { plan, timed_out: timedOut }, text: planLine(plan) };
  },
});

const status = defineTool({
  name: 'plan_status',
  title: "A plan's tasks",
  description: "A plan's tasks: each one's state and step, what it needs and waits for, its sessions, worktree, branch, loop and round, merge entry, landed commit, tokens; default the newest plan.",
  input: input({ plan: arg.text({ description: 'the plan ID (p-…; default: the newest)', max: 96 }) }),
  acts: false,
  hints: { readOnlyHint: true },
  cli: 'mam plan status ID --json',
  async run(a, { core }) {
    const plan = a.plan !== undefined ? core.plans.plans.require(a.plan) : core.plans.listing().plans[0];
    if (!plan) throw new UsageError('no plans in this workspace');
    const shown = record(core, plan);
    return { data: { plan: shown }, text: planLine(shown) };
  },
});

export const planTools: readonly Tool[] = [run, status];
