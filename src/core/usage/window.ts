import type { TokenCounts } from '../store/jobUsageSchema';
import { addCounts, zeroCounts } from './counts';
import type { ConversationEntry } from './conversation';

export interface WindowSum {
  totals: TokenCounts;
  models: Record<string, TokenCounts>;
  requests: number;
  /** The window is closed: nothing the store writes later can belong to the job. */
  closed: boolean;
}

/**
 * The job's share of a conversation (docs/usage.md, "The window"): it opens at the prompt carrying
 * the job's line and closes at whichever comes first — the next job's line, or the end of the
 * first turn that ends at or after the job's end (`endedAt`). The agent reports `completed` from a
 * tool call and writes its final message after it: closing at the turn's end counts that message.
 * While the job is open (`endedAt` null) or its last turn has not ended, the window is still open.
 * Undefined when the conversation holds no line of the job.
 */
export function sumJobWindow(entries: readonly ConversationEntry[], jobId: string, endedAt: number | null): WindowSum | undefined {
  const start = entries.findIndex((e) => e.kind === 'job_line' && e.job === jobId);
  if (start < 0) return undefined;
  let totals = zeroCounts();
  const models: Record<string, TokenCounts> = {};
  let requests = 0;
  let closed = false;
  for (const e of entries.slice(start + 1)) {
    if (e.kind === 'job_line') {
      if (e.job === jobId) continue; // the same line typed again (a redelivery)
      closed = true;
      break;
    }
    if (e.kind === 'turn_end') {
      if (endedAt !== null && e.at !== null && e.at >= endedAt) {
        closed = true;
        break;
      }
      continue;
    }
    totals = addCounts(totals, e.call);
    const name = e.call.model ?? 'unknown';
    models[name] = addCounts(models[name] ?? zeroCounts(), e.call);
    requests += e.requests ?? 1;
  }
  return { totals, models, requests, closed };
}
