import { UsageError } from '../../core/base/errors';
import type { Core } from '../../core/core';
import { settleUsage } from '../../core/jobs/jobUsage';
import { loopUsage } from '../../core/loop/reports';
import type { LoopState } from '../../core/loop/loopState';
import { defineTool, type Tool, type ToolCall } from '../tool';
import { arg, input } from '../toolInput';
import { waitUntil } from '../waitUntil';

/** A loop with what its jobs spent (docs/usage.md), read again where it may still be settling. */
async function loopRecord(core: Core, loop: LoopState): Promise<Record<string, unknown>> {
  const cp = core.controlPlane;
  const jobs = loop.steps.flatMap((st) => cp.jobs.get(st.job_id) ?? []);
  const settled = core.trust.trusted ? await settleUsage(core.jobs, jobs) : jobs;
  const byId = new Map(settled.map((j) => [j.id, j]));
  // Who runs it (pid and host): the loop's own record; nothing in it is a secret.
  return { ...loop, usage: loopUsage(loop, (id) => byId.get(id)), log: core.loops.runLog(loop.id) };
}

function loopLine(loop: LoopState): string {
  const round = loop.rounds.at(-1);
  const verdicts = round ? `; round ${round.n} ${round.status}: ${round.reviews.map((r) => `${r.reviewer} ${r.verdict ?? '…'}`).join(', ')}` : '';
  return `loop ${loop.id} ${loop.status}${loop.reason ? ` (${loop.reason})` : ''}${verdicts}`;
}

/** What a loop is doing now, in a few words: its newest step. */
function stepLine(loop: LoopState): string {
  const step = loop.steps.at(-1);
  return step ? `loop ${loop.id}: ${step.key} → ${step.session}${step.status === 'done' ? ` ${step.job_state ?? ''}` : ''}` : `loop ${loop.id}: ${loop.status}`;
}

/** Until the loop ends (or the call is cancelled, or `timeoutS` passes): each change a progress notification. */
async function follow(core: Core, id: string, timeoutS: number | undefined, call: ToolCall): Promise<{ loop: LoopState; timedOut: boolean }> {
  let last = '';
  const read = (): LoopState => core.loops.get(id) ?? core.loops.loops.get(id)!;
  const timedOut = await waitUntil(
    () => {
      const loop = read();
      const now = stepLine(loop);
      if (now !== last) call.progress((last = now));
      return loop.status !== 'running';
    },
    { signal: call.signal, ...(timeoutS !== undefined ? { timeoutS } : {}) },
  );
  return { loop: read(), timedOut };
}

const start = defineTool({
  name: 'loop_start',
  title: 'Start a review loop',
  description: [
    'A review loop: the creator implements the task and commits, the reviewers review the pinned snapshot until every one says PASS',
    '(the creator fixes in between). Checked and stored here, then run by a process of its own that outlives this call; returns its',
    'loop ID at once unless wait: true. Reviewers: the named sessions, or all_reviewers, else the creator reviews itself.',
  ].join(' '),
  input: input({
    task: arg.text.required({ description: 'the task', max: 200_000 }),
    creator: arg.text.required({ description: 'the session that implements, commits and fixes', max: 64 }),
    reviewers: arg.texts({ description: 'the reviewing sessions (or human:NAME)', max: 20, itemMax: 70 }),
    all_reviewers: arg.flag({ description: 'every running reviewer session except the creator' }),
    planner: arg.text({ description: 'a session that writes a plan first', max: 70 }),
    plan_talk: arg.count({ description: 'turns the creator may challenge the plan (default 1 with a planner)', min: 0, max: 20 }),
    max_loop: arg.count({ description: 'review rounds at most (default 3)', min: 1, max: 100 }),
    max_rebut: arg.count({ description: 'times the creator may answer a finding with [REBUT: reason] (default 2)', min: 0, max: 100 }),
    review_only: arg.flag({ description: 'skip implementing: review what is there' }),
    worktree: arg.text({ description: 'review this checkout instead of the workspace (relative to it)', max: 4096 }),
    base: arg.text({ description: 'what the changes are measured against (default HEAD now)' }),
    reports_dir: arg.text({ description: 'where passing reports go, inside the workspace (default .mam/reports)', max: 4096 }),
    wait: arg.flag({ description: 'wait for the loop to end (progress notifications on each step)' }),
    wait_timeout_s: arg.seconds({ description: 'with wait: stop waiting after this many seconds (the loop goes on)' }),
  }),
  acts: true,
  hints: { destructiveHint: false, openWorldHint: false },
  cli: 'mam loop --task T --creator S [--reviewer A,B | --all-reviewer] … (run as mam loop resume ID in a process of its own)',
  async run(a, call) {
    const { core } = call;
    if (a.wait_timeout_s !== undefined && a.wait !== true) throw new UsageError('wait_timeout_s goes with wait: true');
    const stored = await core.loops.start({
      task: a.task, creator: a.creator,
      ...(a.reviewers !== undefined ? { reviewers: a.reviewers } : {}), ...(a.all_reviewers ? { allReviewers: true } : {}),
      ...(a.planner !== undefined ? { planner: a.planner } : {}), ...(a.plan_talk !== undefined ? { planTalk: a.plan_talk } : {}),
      ...(a.max_loop !== undefined ? { maxLoop: a.max_loop } : {}), ...(a.max_rebut !== undefined ? { maxRebut: a.max_rebut } : {}),
      ...(a.review_only ? { reviewOnly: true } : {}), ...(a.worktree !== undefined ? { worktree: a.worktree } : {}),
      ...(a.base !== undefined ? { base: a.base } : {}), ...(a.reports_dir !== undefined ? { reportsDir: a.reports_dir } : {}),
    });
    if (a.wait !== true) return { data: { loop: await loopRecord(core, stored) }, text: `loop ${stored.id} started on ${stored.checkout}: creator ${stored.creator}, reviewers ${stored.reviewers.join(', ')}` };
    const { loop, timedOut } = await follow(core, stored.id, a.wait_timeout_s, call);
    return { data: { loop: await loopRecord(core, loop), timed_out: timedOut }, text: loopLine(loop) };
  },
});

const status = defineTool({
  name: 'loop_status',
  title: "A loop's rounds and verdicts",
  description: "A review loop's state: its rounds (each pinned snapshot's base, head and tree), every reviewer's verdict and report, its steps (each job and what its agent handed in), tokens; default the newest loop.",
  input: input({ loop: arg.text({ description: 'the loop ID (l-…; default: the newest)', max: 96 }) }),
  acts: false,
  hints: { readOnlyHint: true },
  cli: 'mam loop status [ID] --json',
  async run(a, { core }) {
    const loop = a.loop !== undefined ? core.loops.loops.get(a.loop) : core.loops.list()[0];
    if (!loop) throw new UsageError(a.loop !== undefined ? `unknown loop '${a.loop}'` : 'no loops in this workspace');
    return { data: { loop: await loopRecord(core, loop) }, text: loopLine(loop) };
  },
});

export const loopTools: readonly Tool[] = [start, status];
