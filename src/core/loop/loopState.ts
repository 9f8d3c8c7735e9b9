import * as fs from 'node:fs';
import * as path from 'node:path';
import { systemClock, type Clock } from '../base/clock';
import { errorMessage, ValidationError } from '../base/errors';
import { checkId, printable } from '../base/ids';
import { readIfExists, writeFileAtomic } from '../store/atomicFile';
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
    state.updated_at = new Date(this.clock.now()).toISOString();
    writeFileAtomic(this.file(state.id), `${JSON.stringify(state, null, 2)}\n`);
  }

  get(id: string): LoopState | undefined {
    checkId(id, 'loop');
    const file = this.file(id);
    const bytes = readIfExists(file);
    if (!bytes) return undefined;
    let raw: unknown;
    try {
      raw = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      throw new ValidationError(`${file}: not JSON (${(err as Error).message}); fix or remove the file`);
    }
    return validateLoopState(raw, file);
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

/**
 * A loop's state as read from disk, checked before anything trusts it: a file that is corrupt or
 * was edited by hand gives one error naming the file and the field, never a crash deep inside
 * the runner. Fields older loops lack (title, reports_dir, job) may be missing.
 */
export function validateLoopState(raw: unknown, where = 'loop state'): LoopState {
  const fail = (field: string, why: string): never => {
    throw new ValidationError(`${where}: ${field} ${why}; fix or remove the file`);
  };
  const object = (v: unknown, field: string): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : fail(field, 'must be an object'));
  const string = (o: Record<string, unknown>, f: string, at: string, optional = false): void => {
    if (!(typeof o[f] === 'string' || (optional && o[f] === undefined))) fail(`${at}${f}`, 'must be a string');
  };
  const nullableString = (o: Record<string, unknown>, f: string, at: string, optional = false): void => {
    if (!(typeof o[f] === 'string' || o[f] === null || (optional && o[f] === undefined))) fail(`${at}${f}`, 'must be a string or null');
  };
  const count = (o: Record<string, unknown>, f: string, at: string, optional = false): void => {
    if (!((Number.isInteger(o[f]) && (o[f] as number) >= 0) || (optional && o[f] === undefined))) fail(`${at}${f}`, 'must be a whole number');
  };
  const oneOf = (o: Record<string, unknown>, f: string, at: string, values: readonly unknown[]): void => {
    if (!values.includes(o[f])) fail(`${at}${f}`, `must be one of ${values.join(', ')} (got '${printable(String(o[f]), 40)}')`);
  };
  const array = (v: unknown, field: string): unknown[] => (Array.isArray(v) ? v : fail(field, 'must be an array'));

  const s = object(raw, 'the loop state');
  for (const f of ['id', 'task', 'creator', 'checkout', 'base', 'created_at', 'updated_at']) string(s, f, '');
  for (const f of ['title', 'reports_dir']) string(s, f, '', true);
  for (const f of ['planner', 'reason', 'plan']) nullableString(s, f, '');
  for (const f of ['plan_talk', 'max_rebut', 'rebuts_used']) count(s, f, '');
  if (!(Number.isInteger(s.max_loop) && (s.max_loop as number) >= 1)) fail('max_loop', 'must be a whole number ≥ 1');
  if (typeof s.review_only !== 'boolean') fail('review_only', 'must be true or false');
  oneOf(s, 'status', '', LOOP_STATUSES);
  if (s.exit_code !== null && !Number.isInteger(s.exit_code)) fail('exit_code', 'must be a whole number or null');
  const reviewers = array(s.reviewers, 'reviewers');
  if (reviewers.length === 0 || reviewers.some((r) => typeof r !== 'string')) fail('reviewers', 'must name at least one session');
  if (s.owner !== null) {
    const owner = object(s.owner, 'owner');
    if (!Number.isInteger(owner.pid)) fail('owner.pid', 'must be a process ID');
    string(owner, 'host', 'owner.');
  }
  if (s.job !== undefined) {
    const job = object(s.job, 'job');
    string(job, 'id', 'job.');
    for (const f of ['timeout_s', 'idle_timeout_s', 'start_timeout_s', 'heartbeat_s']) {
      if (job[f] !== undefined && !(typeof job[f] === 'number' && (job[f] as number) >= 0)) fail(`job.${f}`, 'must be a number of seconds');
    }
  }
  array(s.steps, 'steps').forEach((raw, i) => {
    const at = `steps[${i}].`;
    const step = object(raw, `steps[${i}]`);
    for (const f of ['key', 'session', 'job_id']) string(step, f, at);
    oneOf(step, 'kind', at, STEP_KINDS);
    oneOf(step, 'status', at, ['planned', 'done']);
    if (step.round !== null) count(step, 'round', at);
    string(step, 'job_state', at, true);
    string(step, 'text', at, true);
    nullableString(step, 'job_reason', at, true);
    nullableString(step, 'report', at, true);
  });
  array(s.rounds, 'rounds').forEach((raw, i) => {
    const at = `rounds[${i}].`;
    const round = object(raw, `rounds[${i}]`);
    count(round, 'n', at);
    oneOf(round, 'status', at, ROUND_STATUSES);
    const identity = object(round.identity, `${at}identity`);
    for (const f of ['base', 'head', 'tree']) string(identity, f, `${at}identity.`);
    string(round, 'started_at', at);
    string(round, 'finished_at', at, true);
    string(round, 'rebut', at, true);
    if (round.children !== undefined) {
      array(round.children, `${at}children`).forEach((raw, j) => {
        const child = object(raw, `${at}children[${j}]`);
        for (const f of ['id', 'state', 'session']) string(child, f, `${at}children[${j}].`);
      });
    }
    if (round.changed_during_review !== undefined && array(round.changed_during_review, `${at}changed_during_review`).some((p) => typeof p !== 'string')) fail(`${at}changed_during_review`, 'must list paths');
    array(round.reviews, `${at}reviews`).forEach((raw, j) => {
      const review = object(raw, `${at}reviews[${j}]`);
      for (const f of ['reviewer', 'step', 'job_id']) string(review, f, `${at}reviews[${j}].`);
      if (review.verdict !== undefined) oneOf(review, 'verdict', `${at}reviews[${j}].`, ['PASS', 'NOT PASS']);
      string(review, 'report', `${at}reviews[${j}].`, true);
    });
  });
  return s as unknown as LoopState;
}

const STEP_KINDS: readonly LoopStep['kind'][] = ['plan', 'challenge', 'revise', 'implement', 'review', 'fix'];
