import * as fs from 'node:fs';
import { dateOn, systemClock } from '../base/clock';
import type { StoreContext } from '../agents/adapter';
import type { JobUsage } from '../store/jobUsageSchema';
import { claudeConversationFile, readClaudeConversation } from './claudeStore';
import { codexRolloutFile, readCodexRollout } from './codexStore';
import type { ConversationEntry } from './conversation';
import { copilotEventsFile, readCopilotEvents } from './copilotStore';
import { geminiConversationFiles, readGeminiConversation } from './geminiStore';
import { grokUpdatesFile, readGrokUpdates } from './grokStore';
import { opencodeConversation, readOpencodeMessages } from './opencodeStore';
import { qwenConversationFile, readQwenConversation } from './qwenStore';
import { sumJobWindow } from './window';

/**
 * One reader per agent whose store records usage: the conversation as usage needs it, or
 * undefined when the store does not hold it (yet).
 */
type UsageReader = (ctx: StoreContext, cwd: string, conversationId: string) => Promise<ConversationEntry[] | undefined>;

/** A store that keeps a conversation in one file. */
const oneFile = (file: (ctx: StoreContext, cwd: string, id: string) => string | undefined, read: (file: string) => ConversationEntry[]): UsageReader => async (ctx, cwd, id) => {
  const f = file(ctx, cwd, id);
  return f && fs.existsSync(f) ? read(f) : undefined;
};

const READERS: Readonly<Record<string, UsageReader>> = {
  claude: oneFile(claudeConversationFile, readClaudeConversation),
  codex: oneFile((ctx, _cwd, id) => codexRolloutFile(ctx, id), readCodexRollout),
  gemini: async (ctx, _cwd, id) => {
    const files = geminiConversationFiles(ctx, id);
    return files.length > 0 ? readGeminiConversation(files) : undefined;
  },
  qwen: oneFile(qwenConversationFile, readQwenConversation),
  copilot: oneFile((ctx, _cwd, id) => copilotEventsFile(ctx, id), readCopilotEvents),
  grok: oneFile((ctx, _cwd, id) => grokUpdatesFile(ctx, id), readGrokUpdates),
  opencode: async (ctx, _cwd, id) => {
    const conversation = await opencodeConversation(ctx, id);
    return conversation === undefined ? undefined : readOpencodeMessages(conversation);
  },
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
 * agent's own store. Never rejects: a store that cannot be read gives an UnavailableUsage saying why.
 */
export async function measureJobUsage(q: UsageQuery): Promise<JobUsage> {
  const measured_at = (q.now ?? dateOn(systemClock)).toISOString();
  const unavailable = (why: string, final: boolean): JobUsage => ({ agent: q.agent, unavailable: why, final, measured_at });
  const reader = READERS[q.agent];
  if (!reader) return unavailable(`not recorded by ${q.agent}`, true);
  // Not final: the conversation may be learnt, or the store written, later.
  if (!q.conversationId) return unavailable('the conversation is not known yet', false);
  const entries = await reader(q.ctx, q.cwd, q.conversationId).catch(() => undefined);
  if (!entries) return unavailable(`the conversation is not in ${q.agent}'s store`, false);
  const endedAt = q.endedAt ? Date.parse(q.endedAt) : null;
  const sum = sumJobWindow(entries, q.jobId, endedAt === null || Number.isNaN(endedAt) ? null : endedAt);
  if (!sum) return unavailable("the job's line is not in its conversation", false);
  return { agent: q.agent, conversation_id: q.conversationId, ...sum.totals, requests: sum.requests, models: sum.models, final: sum.closed, measured_at };
}
