import * as fs from 'node:fs';
import * as path from 'node:path';
import { isoOn, systemClock, type Clock } from '../base/clock';
import { errorMessage, ValidationError } from '../base/errors';
import { checkId } from '../base/ids';
import { bool, int, list, nullable, num, obj, oneOf, optional, parse, str, type Schema } from '../base/schema';
import { readJsonFile, writeFileAtomic } from '../store/atomicFile';
import type { ControlPlanePaths } from '../store/paths';
import { LOOP_STATUSES, ROUND_STATUSES, type LoopStatus, type RoundStatus } from './loopLifecycle';
import type { SnapshotIdentity } from './snapshot';
import type { Verdict } from './verdict';

/** One job the loop ran, by its step key (`plan`, `implement`, `r2:review:rev-a`, `r2:fix` …). */
export interface LoopStep {
  key: string;
  kind: 'plan' | 'challenge' | 'revise' | 'implement' | 'review' | 'fix';
  session: string;
  /** Chosen before the job is submitted, so a restarted loop finds it instead of submitting again. */
  job_id: string;
  round: number | null;
  /** `done` once the job ended; its outcome is kept so nothing is asked twice. */
  status: 'planned' | 'done';
  job_state?: string;
  job_reason?: string | null;
  /** What the agent handed in: its report, or its completion detail. */
  text?: string;
  report?: string | null;
}

export interface LoopReview {
  reviewer: string;
  step: string;
  job_id: string;
  verdict?: Verdict;
  /** Promoted report, when the round passed. */
  report?: string;
}

export interface LoopRound {
  n: number;
  identity: SnapshotIdentity;
  /** reviewing → passed | not_passed | stale (the tree changed during the round: its approvals were discarded); loopLifecycle.ts. */
  status: RoundStatus;
  reviews: LoopReview[];
  /** The creator's rebuttal that reviewers see in this round. */
  rebut?: string;
  /** Jobs the creator delegated (`--parent-job`), with their states, as shown to the reviewers. */
  children?: Array<{ id: string; state: string; session: string }>;
  /** A stale round: the paths that changed while it was reviewed (at most 50). */
  changed_during_review?: string[];
  started_at: string;
  finished_at?: string;
}

export interface LoopOptions {
  task: string;
  creator: string;
  planner: string | null;
  plan_talk: number;
  reviewers: string[];
  max_loop: number;
  max_rebut: number;
  review_only: boolean;
  /** The checkout under review (the workspace, or --worktree DIR). */
  checkout: string;
  base: string;
  /**
   * Where passing reports are promoted (absolute, inside the workspace: --reports-dir, else the
   * reportsDir setting). Absent in loops recorded before it was: they used `.mam/reports`.
   */
  reports_dir?: string;
  /** Present when the loop carries out a `mam job submit --type loop` job (jobLoop.ts). */
  job?: LoopJob;
}

/**
 * A `--type loop` job run as a loop: one worker (the creator), one reviewer. Its reviewer reviews
 * what the worker reported, as that job type always has, so its rounds pin no snapshot and it
 * needs no git checkout.
 */
export interface LoopJob {
  /** The parent job (type loop): the loop's jobs are its children, and it ends when the loop ends. */
  id: string;
  /** The submit's timing flags, given to every job of the loop. */
  timeout_s?: number;
  idle_timeout_s?: number;
  start_timeout_s?: number;
  heartbeat_s?: number;
}

/** `.mam/loops/<id>.json`: everything a loop decided so far, written after every step. */
export interface LoopState extends LoopOptions {
  id: string;
  /** The task's first sentence, short (title.ts); loops recorded before it were titled from the task when shown. */
  title?: string;
  created_at: string;
  updated_at: string;
  /** running → passed | failed | cancelled (loopLifecycle.ts). */
  status: LoopStatus;
  reason: string | null;
  exit_code: number | null;
  owner: { pid: number; host: string } | null;
  plan: string | null;
  steps: LoopStep[];
  rounds: LoopRound[];
  rebuts_used: number;
}

/** The loops of a workspace on disk; every save replaces the whole file atomically. */
export class LoopStore {
  constructor(
    private readonly paths: ControlPlanePaths,
    private readonly clock: Clock = systemClock,
  ) {}

  file(id: string): string {
    checkId(id, 'loop');
    return path.join(this.paths.loopsDir, `${id}.json`);
  }

  save(state: LoopState): void {
    this.paths.ensureDir();
    fs.mkdirSync(this.paths.loopsDir, { recursive: true });
    state.updated_at = isoOn(this.clock);
    writeFileAtomic(this.file(state.id), `${JSON.stringify(state, null, 2)}\n`);
  }

  get(id: string): LoopState | undefined {
    checkId(id, 'loop');
    const file = this.file(id);
    return readJsonFile(file, (raw) => validateLoopState(raw, file));
  }

  /** Every loop, newest first. */
  list(): LoopState[] {
    return this.listing().loops;
  }

  /** The loops, newest first, and the files that are not a loop (broken, or edited by hand), with why. */
  listing(): { loops: LoopState[]; unreadable: Array<{ file: string; why: string }> } {
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.paths.loopsDir);
    } catch {
      return { loops: [], unreadable: [] };
    }
    const loops: LoopState[] = [];
    const unreadable: Array<{ file: string; why: string }> = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      try {
        const loop = this.get(name.slice(0, -5));
        if (loop) loops.push(loop);
      } catch (err) {
        unreadable.push({ file: name, why: errorMessage(err) });
      }
    }
    return { loops: loops.sort((a, b) => (a.created_at < b.created_at ? 1 : -1)), unreadable };
  }
}

const text = str();
const count = int({ min: 0, why: 'must be a whole number' });
const seconds = optional(num({ min: 0, why: 'must be a number of seconds' }));
const STEP_KINDS: readonly LoopStep['kind'][] = ['plan', 'challenge', 'revise', 'implement', 'review', 'fix'];
const VERDICTS: readonly Verdict[] = ['PASS', 'NOT PASS'];

const stepSchema: Schema<LoopStep> = obj({
  key: text,
  kind: oneOf(STEP_KINDS),
  session: text,
  job_id: text,
  round: nullable(count),
  status: oneOf(['planned', 'done']),
  job_state: optional(text),
  job_reason: optional(nullable(text)),
  text: optional(text),
  report: optional(nullable(text)),
});

const roundSchema: Schema<LoopRound> = obj({
  n: count,
  identity: obj({ base: text, head: text, tree: text }),
  status: oneOf(ROUND_STATUSES),
  reviews: list(obj({ reviewer: text, step: text, job_id: text, verdict: optional(oneOf(VERDICTS)), report: optional(text) }), { why: 'must be an array' }),
  rebut: optional(text),
  children: optional(list(obj({ id: text, state: text, session: text }), { why: 'must be an array' })),
  changed_during_review: optional(list(text, { why: 'must list paths' })),
  started_at: text,
  finished_at: optional(text),
});

const loopStateSchema: Schema<LoopState> = obj({
  id: text,
  task: text,
  creator: text,
  checkout: text,
  base: text,
  created_at: text,
  updated_at: text,
  title: optional(text),
  reports_dir: optional(text),
  planner: nullable(text),
  reason: nullable(text),
  plan: nullable(text),
  plan_talk: count,
  max_rebut: count,
  rebuts_used: count,
  max_loop: int({ min: 1, why: 'must be a whole number ≥ 1' }),
  review_only: bool(),
  status: oneOf(LOOP_STATUSES),
  exit_code: nullable(int(), { why: 'must be a whole number or null' }),
  reviewers: list(text, { min: 1, why: 'must name at least one session' }),
  owner: nullable(obj({ pid: int({ why: 'must be a process ID' }), host: text })),
  job: optional(obj({ id: text, timeout_s: seconds, idle_timeout_s: seconds, start_timeout_s: seconds, heartbeat_s: seconds })),
  steps: list(stepSchema, { why: 'must be an array' }),
  rounds: list(roundSchema, { why: 'must be an array' }),
});

/**
 * A loop's state as read from disk, checked before anything trusts it: a file that is corrupt or
 * was edited by hand gives one error naming the file and the field, never a crash deep inside
 * the runner. Fields older loops lack (title, reports_dir, job) may be missing.
 */
export function validateLoopState(raw: unknown, where = 'loop state'): LoopState {
  return parse(loopStateSchema, raw, (problem) => new ValidationError(`${where}: ${problem}; fix or remove the file`), 'the loop state');
}
