/**
 * The plan page's part of the report webview's protocol (./reportProtocol.ts holds the whole): what
 * the extension sends to draw a plan (src/views/plans/planPage.ts builds it), checked on arrival
 * like every message. Words are made by the extension; the page only lays them out.
 */

import { int, list, nullable, obj, str, type Schema } from '../core/base/schema';

/** A plan's ID, as `mam plan` makes them (PLAN_ID_PATTERN in src/core/plan/planState.ts; test/unit/planPage.test.ts keeps the two equal). */
export const PLAN_ID = /^p-\d{8}T\d{6}Z-[0-9a-f]{6}$/;
/** A loop's ID (a task links to its loop's report by it). */
export const LOOP_ID = /^l-[A-Za-z0-9-]{1,80}$/;

export interface PlanTaskModel {
  id: string;
  /** The task as the plan file says it (whole; the page shows its first line and the rest on hover). */
  task: string;
  /** pending, running, landed, failed, blocked, budget_exceeded, cancelled. */
  state: string;
  /** What follows the state in the Plans view: "after validate, errors", "review round 2", "a1b2c3d4 · 2 rounds", why it ended. */
  detail: string;
  needs: string[];
  /** Its review loop, once it has one: the page links to that loop's report. */
  loop_id: string | null;
  round: number | null;
  landed_commit: string | null;
  tokens: number;
  creator: string | null;
  reviewers: string[];
  why: string | null;
}

export interface PlanModel {
  folderIndex: number;
  plan: {
    id: string;
    title: string;
    status: string;
    reason: string | null;
    into: string;
    max_parallel: number;
    tokens: number;
    /** "3 of 5 landed". */
    landed: string;
    /** Who runs it, while it runs: "process 1234", "starting", or "stopped (Resume Plan goes on)". */
    runner: string | null;
    created_at: string;
    updated_at: string;
  };
  /** In the plan file's order. */
  tasks: PlanTaskModel[];
  /** The longest chain of needs (criticalPath in src/core/plan/planGraph.ts), first task first. */
  critical: string[];
  now: string;
}

const text = str();
const textOrNull = nullable(text);

export const planModel: Schema<PlanModel> = obj({
  folderIndex: int({ min: 0 }),
  plan: obj({
    id: str({ pattern: PLAN_ID }),
    title: text,
    status: text,
    reason: textOrNull,
    into: text,
    max_parallel: int({ min: 1 }),
    tokens: int({ min: 0 }),
    landed: text,
    runner: textOrNull,
    created_at: text,
    updated_at: text,
  }),
  tasks: list(
    obj({
      id: str({ min: 1 }),
      task: text,
      state: text,
      detail: text,
      needs: list(text),
      loop_id: nullable(str({ pattern: LOOP_ID })),
      round: nullable(int({ min: 0 })),
      landed_commit: textOrNull,
      tokens: int({ min: 0 }),
      creator: textOrNull,
      reviewers: list(text),
      why: textOrNull,
    }),
  ),
  critical: list(text),
  now: text,
});
