import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../base/errors';
import { printable } from '../base/ids';
import { writeFileAtomic } from '../store/atomicFile';
import type { JobRecord } from '../store/jobSchema';
import { sumUsage, type UsageSum } from '../usage/sum';
import type { LoopRound, LoopState, LoopStep } from './loopState';

/**
 * Where a passing loop keeps its reports: `dir` (relative to `baseDir`) as an absolute path, which
 * must lie inside the workspace — a team may commit them there (`.agents/reports`), but a loop never
 * writes outside its workspace. Symlinks are followed before judging, so a link cannot lead out.
 * `what` names where the value came from, for the one-line refusal.
 */
export function resolveReportsDir(workspace: string, dir: string, baseDir: string, what: string): string {
  const inside = path.relative(fs.realpathSync(workspace), realPathOfNearest(path.resolve(baseDir, dir)));
  if (!dir.trim() || inside === '' || inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)) {
    throw new UsageError(`${what} '${printable(dir, 80)}' is not a folder inside the workspace ${workspace}; name one inside it, such as .agents/reports`);
  }
  return path.join(workspace, inside);
}

/** `p` with its deepest existing ancestor resolved to its real path (the rest, not made yet, as written). */
function realPathOfNearest(p: string): string {
  const missing: string[] = [];
  for (let dir = p; ; dir = path.dirname(dir)) {
    try {
      return path.join(fs.realpathSync(dir), ...missing);
    } catch {
      if (path.dirname(dir) === dir) return p;
      missing.unshift(path.basename(dir));
    }
  }
}

/**
 * Promotes a passing round's reports to `<dir>/<reviewer>/report-<job>.md`, each beside
 * `report-<job>.identity.json` (the snapshot it approved, the reviewer, verdict, loop, round, job),
 * and notes each promoted path in the round's reviews.
 */
export function promoteReports(dir: string, state: LoopState, round: LoopRound): void {
  for (const review of round.reviews) {
    const step = state.steps.find((s) => s.key === review.step);
    // `human:alice` reviews land in `human-alice/`: a colon has no place in a folder name.
    const folder = path.join(dir, review.reviewer.replace(/^human:/, 'human-'));
    fs.mkdirSync(folder, { recursive: true });
    const report = path.join(folder, `report-${review.job_id}.md`);
    writeFileAtomic(report, step?.report && fs.existsSync(step.report) ? fs.readFileSync(step.report, 'utf8') : step?.text ?? '');
    const identity = { ...round.identity, reviewer: review.reviewer, verdict: review.verdict, round: round.n, loop: state.id, job: review.job_id };
    writeFileAtomic(path.join(folder, `report-${review.job_id}.identity.json`), `${JSON.stringify(identity, null, 2)}\n`);
    review.report = report;
  }
}

/** What a loop's jobs spent: per round (the creator's work that led into it, and its reviews), and in total. */
export interface LoopUsage {
  /** Planning, challenge and revision jobs, before the first round; absent when there were none. */
  planning?: UsageSum;
  rounds: Array<{ n: number; usage: UsageSum }>;
  total: UsageSum;
}

/**
 * The loop's usage from its jobs' records (`jobOf` reads one). Round n holds its reviews and the
 * creator's job that made what they reviewed: the implementation for round 1, the fix (or
 * rebuttal) for later rounds.
 */
export function loopUsage(state: LoopState, jobOf: (id: string) => JobRecord | undefined): LoopUsage {
  const byRound = new Map<number | null, LoopStep[]>();
  for (const step of state.steps) {
    const n = step.round ?? (step.kind === 'implement' ? 1 : null);
    byRound.set(n, [...(byRound.get(n) ?? []), step]);
  }
  const usageOf = (steps: readonly LoopStep[]): UsageSum => sumUsage(steps.map((s) => jobOf(s.job_id)?.usage));
  const planning = byRound.get(null);
  const rounds = [...byRound.keys()].filter((n): n is number => n !== null).sort((a, b) => a - b).map((n) => ({ n, usage: usageOf(byRound.get(n)!) }));
  return { ...(planning ? { planning: usageOf(planning) } : {}), rounds, total: usageOf(state.steps) };
}
