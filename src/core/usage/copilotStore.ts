import * as path from 'node:path';
import type { StoreContext } from '../agents/adapter';
import { tokenCount, type ModelCall } from './counts';
import { readJsonLines } from '../base/jsonLines';
import { anyObject } from '../base/schema';
import { jobOfPrompt, record, timeOf, type ConversationEntry } from './conversation';

/** copilot's conversation: `$COPILOT_HOME or ~/.copilot` / session-state / <id> / events.jsonl. */
export function copilotEventsFile(ctx: StoreContext, conversationId: string): string {
  return path.join(ctx.env.COPILOT_HOME || path.join(ctx.home, '.copilot'), 'session-state', conversationId, 'events.jsonl');
}

/**
 * copilot's event log (1.0.102, test/fixtures/usage/): `user.message` (the typed text in
 * `data.content`), `session.usage_record` per model call (`data.usage`: inputTokens — cached
 * included —, cacheReadTokens, cacheWriteTokens, outputTokens, reasoningTokens, model) and
 * `assistant.message`, whose empty `toolRequests` ends the turn (its `assistant.turn_end` ends
 * each model call, not the person's turn).
 */
export function readCopilotEvents(file: string): ConversationEntry[] {
  const out: ConversationEntry[] = [];
  for (const line of readJsonLines(file, anyObject)) {
    const at = timeOf(line.timestamp);
    const data = record(line.data);
    if (!data) continue;
    if (line.type === 'user.message' && typeof data.content === 'string') {
      const job = jobOfPrompt(data.content);
      if (job) out.push({ kind: 'job_line', job, at });
    } else if (line.type === 'session.usage_record') {
      const usage = record(data.usage);
      if (usage) out.push({ kind: 'call', call: copilotCall(usage), at });
    } else if (line.type === 'assistant.message' && Array.isArray(data.toolRequests) && data.toolRequests.length === 0) {
      out.push({ kind: 'turn_end', at });
    }
  }
  return out;
}

function copilotCall(u: Record<string, unknown>): ModelCall {
  return {
    model: typeof u.model === 'string' ? u.model : null,
    input_tokens: tokenCount(u.inputTokens),
    cached_input_tokens: tokenCount(u.cacheReadTokens),
    cache_write_input_tokens: tokenCount(u.cacheWriteTokens),
    output_tokens: tokenCount(u.outputTokens),
    reasoning_output_tokens: tokenCount(u.reasoningTokens),
  };
}
