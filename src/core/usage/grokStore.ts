import * as path from 'node:path';
import type { StoreContext } from '../agents/adapter';
import { listDir } from '../agents/store';
import { tokenCount, type ModelCall } from './counts';
import { readJsonLines } from '../base/jsonLines';
import { anyObject } from '../base/schema';
import { jobOfPrompt, record, type ConversationEntry } from './conversation';

/**
 * grok's log of a conversation: `$GROK_HOME or ~/.grok` / sessions / <URL-encoded cwd, or a slug
 * and hash when too long> / <id> / updates.jsonl — found by the conversation's folder name.
 */
export function grokUpdatesFile(ctx: StoreContext, conversationId: string): string | undefined {
  const root = path.join(ctx.env.GROK_HOME || path.join(ctx.home, '.grok'), 'sessions');
  for (const project of listDir(root)) {
    if (listDir(path.join(root, project)).includes(conversationId)) return path.join(root, project, conversationId, 'updates.jsonl');
  }
  return undefined;
}

/**
 * grok's updates (1.0.41, test/fixtures/usage/): ACP `session/update` lines — a
 * `user_message_chunk` per typed line — and, when a turn ends, an `_x.ai/session/update` of
 * `turn_completed` whose `usage` totals the turn: `modelUsage` per model {inputTokens (cached
 * included), cachedReadTokens, cacheCreationTokens, outputTokens (reasoning included),
 * reasoningTokens, modelCalls}. grok keeps no count per model call, so a turn's totals stand for
 * its `modelCalls` calls; its turn summaries are asked for apart and are not in them.
 */
export function readGrokUpdates(file: string): ConversationEntry[] {
  const out: ConversationEntry[] = [];
  for (const line of readJsonLines(file, anyObject)) {
    const params = record(line.params);
    const update = record(params?.update);
    const meta = record(params?._meta) ?? record(line._meta);
    const at = typeof meta?.agentTimestampMs === 'number' ? meta.agentTimestampMs : typeof line.timestamp === 'number' ? line.timestamp * 1000 : null;
    if (update?.sessionUpdate === 'user_message_chunk') {
      const content = record(update.content);
      const job = typeof content?.text === 'string' ? jobOfPrompt(content.text) : undefined;
      if (job) out.push({ kind: 'job_line', job, at });
    } else if (update?.sessionUpdate === 'turn_completed') {
      const usage = record(update.usage);
      const byModel = record(usage?.modelUsage);
      for (const [model, counts] of Object.entries(byModel ?? {})) {
        const c = record(counts);
        if (c) out.push({ kind: 'call', call: grokCall(c, model), at, requests: Math.max(1, tokenCount(c.modelCalls)) });
      }
      out.push({ kind: 'turn_end', at });
    }
  }
  return out;
}

function grokCall(c: Record<string, unknown>, model: string): ModelCall {
  return {
    model,
    input_tokens: tokenCount(c.inputTokens),
    cached_input_tokens: tokenCount(c.cachedReadTokens),
    cache_write_input_tokens: tokenCount(c.cacheCreationTokens),
    output_tokens: tokenCount(c.outputTokens),
    reasoning_output_tokens: tokenCount(c.reasoningTokens),
  };
}
