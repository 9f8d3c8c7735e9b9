import * as os from 'node:os';
import { printable } from '../../core/base/ids';
import { isAlive } from '../../core/base/process';
import type { PlanState, TaskState } from '../../core/plan/planState';

/**
 * What the Plans view and the plan page say about a plan and its tasks, in one place so that both
 * say the same: the state first, then what a task waits for, its round, its landed commit, and
 * last why it ended (the longest part, which a narrow side bar cuts first). No vscode import:
 * test/unit/planText.test.ts reads it in plain Node.
 */

/** "3 of 5 landed". */
export function landedText(plan: Pick<PlanState, 'tasks'>): string {
  return `${plan.tasks.filter((t) => t.state === 'landed').length} of ${plan.tasks.length} landed`;
}

/** Who runs a running plan: a live process, nobody yet (just started: its process is taking it over), or nobody any more. */
export type RunnerState = { kind: 'live'; pid: number; host: string } | { kind: 'starting' } | { kind: 'stopped'; pid: number };

/** The plan row's description: `running · 3 of 5 landed`; `landed · 3 tasks`; a runner that died says so. */
export function planDescription(plan: Pick<PlanState, 'status' | 'tasks'>, runner?: RunnerState): string {
  if (plan.status === 'landed') return `landed · ${plan.tasks.length} task${plan.tasks.length === 1 ? '' : 's'}`;
  const parts = [plan.status, landedText(plan)];
  if (plan.status === 'running' && runner?.kind === 'stopped') parts.push('runner stopped');
  return parts.join(' · ');
}

/** Who runs a running plan (undefined once it has ended): its owner process, if it is still alive. */
export function runnerOf(plan: Pick<PlanState, 'status' | 'owner'>): RunnerState | undefined {
  if (plan.status !== 'running') return undefined;
  const owner = plan.owner;
  if (!owner) return { kind: 'starting' };
  // A process on another host cannot be looked at from here: it counts as live.
  if (owner.host !== os.hostname() || isAlive(owner.pid)) return { kind: 'live', pid: owner.pid, host: owner.host === os.hostname() ? '' : owner.host };
  return { kind: 'stopped', pid: owner.pid };
}

/** The runner, in words for a tooltip or the page: "process 1234", "starting", "stopped (process 1234 is gone)". */
export function runnerText(runner: RunnerState): string {
  if (runner.kind === 'live') return `process ${runner.pid}${runner.host ? ` on ${printable(runner.host, 60)}` : ''}`;
  if (runner.kind === 'starting') return 'starting';
  return `stopped (process ${runner.pid} is gone): Resume Plan goes on from where it was`;
}

/**
 * What a task waits for: a pending one, the tasks it needs that have not landed; a running one,
 * the tasks predicted to conflict with it (`waits_for`). As `mam plan status` says it.
 */
export function waitingFor(plan: Pick<PlanState, 'tasks'>, needs: readonly string[], task: Pick<TaskState, 'state' | 'waits_for'>): string[] {
  if (task.state === 'pending') return needs.filter((n) => plan.tasks.find((x) => x.id === n)?.state !== 'landed');
  if (task.state === 'running') return task.waits_for;
  return [];
}

const STEP_WORDS: Record<NonNullable<TaskState['step']>, string> = {
  worktree: 'making its worktree',
  sessions: 'starting its sessions',
  loop: 'review loop',
  queue: 'merge queue',
  cleanup: 'cleaning up',
};

/** `2 rounds`, `1 round`; nothing before the loop's first round. */
export function roundsText(round: number | null | undefined): string | undefined {
  return round ? `${round} round${round === 1 ? '' : 's'}` : undefined;
}

/**
 * What follows a task's state: `after validate, errors` (pending), `review round 2` (running),
 * `a1b2c3d4 · 2 rounds` (landed), `1 round · its loop … did not pass` (ended otherwise).
 * `round` is the number of rounds its loop has had (undefined: no loop yet).
 */
export function taskDetail(task: Pick<TaskState, 'state' | 'step' | 'why' | 'landed_commit' | 'loop_id'>, waiting: readonly string[], round?: number | null): string {
  const list = (ids: readonly string[]) => ids.map((id) => printable(id, 40)).join(', ');
  switch (task.state) {
    case 'pending':
      return waiting.length > 0 ? `after ${list(waiting)}` : 'ready';
    case 'running': {
      const step = task.step === 'loop' && round ? `review round ${round}` : task.step ? STEP_WORDS[task.step] : 'starting';
      return [step, ...(waiting.length > 0 ? [`after ${list(waiting)} (may conflict)`] : [])].join(' · ');
    }
    case 'landed':
      return [task.landed_commit?.slice(0, 8), roundsText(round)].filter(Boolean).join(' · ');
    default: {
      // "its loop l-2026… did not pass": the row links to that loop, so its ID only pushes the point out of sight.
      const why = task.why && task.loop_id ? task.why.split(` ${task.loop_id}`).join('') : task.why;
      return [roundsText(round), why ? printable(why, 200) : undefined].filter(Boolean).join(' · ');
    }
  }
}

/** The task row's description: the state first, then the detail. */
export function taskDescription(task: Pick<TaskState, 'state' | 'step' | 'why' | 'landed_commit' | 'loop_id'>, waiting: readonly string[], round?: number | null): string {
  const detail = taskDetail(task, waiting, round);
  return detail ? `${stateWord(task.state)} · ${detail}` : stateWord(task.state);
}

/** A state as words: `budget_exceeded` → `over budget`. */
export function stateWord(state: string): string {
  return state === 'budget_exceeded' ? 'over budget' : state.replace(/_/g, ' ');
}

/** The first line of a task's text, for a row or a graph node (the whole text goes to the tooltip). */
export function taskHeadline(text: string, max = 80): string {
  return printable(text.trim().split('\n')[0]!.trim(), max);
}
