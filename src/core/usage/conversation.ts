import { isRecord } from '../base/schema';
import type { ModelCall } from './counts';

/**
 * An agent's conversation reduced to what usage needs, in the order the store wrote it: the typed
 * prompts that carry a MAM job line (jobs/brief.ts `injectedLine`), the model calls with their
 * usage, and the ends of the agent's turns.
 */
export type ConversationEntry =
  | { kind: 'job_line'; job: string; at: number | null }
  /** One model call, or — where the store keeps only a turn's totals (grok) — `requests` of them. */
  | { kind: 'call'; call: ModelCall; at: number | null; requests?: number }
  | { kind: 'turn_end'; at: number | null };

/** The job line MAM types: `MAM job <id>: read the brief at …`. */
const JOB_LINE = /MAM job ([A-Za-z0-9][A-Za-z0-9._-]{0,95}): read the brief at /;

export function jobOfPrompt(text: string): string | undefined {
  return JOB_LINE.exec(text)?.[1];
}

export function timeOf(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : t;
}

export function record(v: unknown): Record<string, unknown> | undefined {
  return isRecord(v) ? v : undefined;
}

/** The text of a content block (`{ type: 'text', text }`; any type unless `type` is given), or ''. */
export function textOf(block: unknown, type?: string): string {
  const b = record(block);
  return b && (type === undefined || b.type === type) && typeof b.text === 'string' ? b.text : '';
}
