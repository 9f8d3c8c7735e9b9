import * as path from 'node:path';
import type { StoreContext } from '../agents/adapter';
import { qwenChatsDir } from '../agents/qwen';
import { tokenCount, type ModelCall } from './counts';
import { readJsonLines } from '../base/jsonLines';
import { anyObject } from '../base/schema';
import { jobOfPrompt, record, timeOf, type ConversationEntry } from './conversation';

/** qwen's conversation file: `~/.qwen/projects/<cwd, non-alphanumerics as ->/chats/<id>.jsonl`. */
export function qwenConversationFile(ctx: StoreContext, cwd: string, conversationId: string): string {
  return path.join(qwenChatsDir(ctx, cwd), `${conversationId}.jsonl`);
}

/**
 * qwen's conversation (0.15.10, test/fixtures/usage/): a `user` line per typed prompt
 * (`message.parts[].text`), an `assistant` line per model answer with `usageMetadata`
 * {promptTokenCount, candidatesTokenCount, cachedContentTokenCount, thoughtsTokenCount} and
 * `model`; an answer without a `functionCall` part ends the turn. qwen fills these from the
 * OpenAI-compatible usage of its provider: the prompt count holds the cached tokens, the candidates
 * count the reasoning (its `completion_tokens`).
 */
export function readQwenConversation(file: string): ConversationEntry[] {
  const out: ConversationEntry[] = [];
  for (const line of readJsonLines(file, anyObject)) {
    const at = timeOf(line.timestamp);
    const message = record(line.message);
    const parts = Array.isArray(message?.parts) ? message.parts.map(record) : [];
    if (line.type === 'user') {
      const job = jobOfPrompt(parts.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('\n'));
      if (job) out.push({ kind: 'job_line', job, at });
    } else if (line.type === 'assistant') {
      const usage = record(line.usageMetadata);
      if (usage) out.push({ kind: 'call', call: qwenCall(usage, line.model), at });
      if (!parts.some((p) => p?.functionCall)) out.push({ kind: 'turn_end', at });
    }
  }
  return out;
}

function qwenCall(u: Record<string, unknown>, model: unknown): ModelCall {
  return {
    model: typeof model === 'string' ? model : null,
    input_tokens: tokenCount(u.promptTokenCount),
    cached_input_tokens: tokenCount(u.cachedContentTokenCount),
    cache_write_input_tokens: null,
    output_tokens: tokenCount(u.candidatesTokenCount),
    reasoning_output_tokens: tokenCount(u.thoughtsTokenCount),
  };
}
