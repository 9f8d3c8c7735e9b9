import * as fs from 'node:fs';
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

/**
 * The JSON objects of a JSON-lines file, in order. A line that does not parse is skipped: the last
 * one may be half written (the agent is still writing it), and stores hold foreign lines.
 */
export function jsonLines(file: string): Array<Record<string, unknown>> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // torn or foreign
    }
  }
  return out;
}

export function timeOf(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : t;
}

export function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
