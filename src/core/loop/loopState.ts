import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkId } from '../base/ids';
import { readIfExists, writeFileAtomic } from '../store/atomicFile';
import type { ControlPlanePaths } from '../store/paths';
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
  /** reviewing → passed | not_passed | stale (the tree changed during the round: its approvals were discarded). */
  status: 'reviewing' | 'passed' | 'not_passed' | 'stale';
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
}

/** `.mam/loops/<id>.json`: everything a loop decided so far, written after every step. */
export interface LoopState extends LoopOptions {
  id: string;
  /** The task's first sentence, short (title.ts); loops recorded before it were titled from the task when shown. */
  title?: string;
  created_at: string;
  updated_at: string;
  status: 'running' | 'passed' | 'failed' | 'cancelled';
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
  constructor(private readonly paths: ControlPlanePaths) {}

  file(id: string): string {
    checkId(id, 'loop');
    return path.join(this.paths.loopsDir, `${id}.json`);
  }

  save(state: LoopState): void {
    this.paths.ensureDir();
    fs.mkdirSync(this.paths.loopsDir, { recursive: true });
    state.updated_at = new Date().toISOString();
    writeFileAtomic(this.file(state.id), `${JSON.stringify(state, null, 2)}\n`);
  }

  get(id: string): LoopState | undefined {
    checkId(id, 'loop');
    const bytes = readIfExists(this.file(id));
    return bytes ? (JSON.parse(bytes.toString('utf8')) as LoopState) : undefined;
  }

  /** Every loop, newest first. */
  list(): LoopState[] {
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.paths.loopsDir);
    } catch {
      return [];
    }
    const loops: LoopState[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      try {
        const loop = this.get(name.slice(0, -5));
        if (loop) loops.push(loop);
      } catch {
        // a file being written by hand, or broken: not a loop we can show
      }
    }
    return loops.sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
  }
}
