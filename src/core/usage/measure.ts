import * as fs from 'node:fs';
import type { StoreContext } from '../agents/adapter';
import type { JobUsage } from '../store/jobUsageSchema';
import { claudeConversationFile, readClaudeConversation } from './claudeStore';
import { codexRolloutFile, readCodexRollout } from './codexStore';
import type { ConversationEntry } from './conversation';
import { sumJobWindow } from './window';

/** One reader per agent whose store records usage: where its conversation is, and how to read it. */
interface UsageReader {
  file(ctx: StoreContext, cwd: string, conversationId: string): string | undefined;
  read(file: string): ConversationEntry[];
}

const READERS: Readonly<Record<string, UsageReader>> = {
  claude: { file: claudeConversationFile, read: readClaudeConversation },
  codex: { file: (ctx, _cwd, id) => codexRolloutFile(ctx, id), read: readCodexRollout },
};

/** Agents whose store MAM reads usage from. */
export const USAGE_AGENTS: readonly string[] = Object.keys(READERS);

export interface UsageQuery {
  agent: string;
  ctx: StoreContext;
  /** The session's folder (claude's store is per folder). */
  cwd: string;
  conversationId: string | null;
  jobId: string;
  /** When the job ended (ISO), or null while it is open. */
  endedAt: string | null | undefined;
  now?: Date;
}

/**
 * What the job's conversation spent between its delivery and its end (window.ts), read from the
 * agent's own store. Never throws: a store that cannot be read gives an UnavailableUsage saying why.
 */
export function measureJobUsage(q: UsageQuery): JobUsage {
  const measured_at = (q.now ?? new Date()).toISOString();
  const unavailable = (why: string, final: boolean): JobUsage => ({ agent: q.agent, unavailable: why, final, measured_at });
  const reader = READERS[q.agent];
  if (!reader) return unavailable(`not recorded by ${q.agent}`, true);
  // Not final: the conversation may be learnt, or the store written, later.
  if (!q.conversationId) return unavailable('the conversation is not known yet', false);
  const file = reader.file(q.ctx, q.cwd, q.conversationId);
  if (!file || !fs.existsSync(file)) return unavailable(`the conversation is not in ${q.agent}'s store`, false);
  const endedAt = q.endedAt ? Date.parse(q.endedAt) : null;
  const sum = sumJobWindow(reader.read(file), q.jobId, endedAt === null || Number.isNaN(endedAt) ? null : endedAt);
  if (!sum) return unavailable("the job's line is not in its conversation", false);
  return { agent: q.agent, conversation_id: q.conversationId, ...sum.totals, requests: sum.requests, models: sum.models, final: sum.closed, measured_at };
}
