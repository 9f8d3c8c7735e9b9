import * as path from 'node:path';
import type { StoreContext } from '../agents/adapter';
import { claudeSlug } from '../agents/claude';
import { tokenCount, type ModelCall } from './counts';
import { readJsonLines } from '../base/jsonLines';
import { anyObject } from '../base/schema';
import { jobOfPrompt, record, textOf, timeOf, type ConversationEntry } from './conversation';

/** claude's conversation file: `$CLAUDE_CONFIG_DIR or ~/.claude` / projects / <slug of cwd> / <id>.jsonl. */
export function claudeConversationFile(ctx: StoreContext, cwd: string, conversationId: string): string {
  const root = ctx.env.CLAUDE_CONFIG_DIR || path.join(ctx.home, '.claude');
  return path.join(root, 'projects', claudeSlug(cwd), `${conversationId}.jsonl`);
}

/**
 * claude's conversation JSONL (2.1.197, test/fixtures/usage/): an `assistant` line per content
 * block of an API message, each repeating the message's `message.usage` — counted once per
 * `message.id` (else `requestId`); a typed `user` line whose content is text (not a tool result)
 * may be a job line; the end of a turn is a `system` line of subtype `turn_duration`, or an
 * assistant message that stopped with `end_turn`. The file is not in time order: in a new
 * conversation claude writes the first reply before the prompt that asked for it, so the entries
 * are put in the order of their timestamps.
 */
export function readClaudeConversation(file: string): ConversationEntry[] {
  const out: ConversationEntry[] = [];
  const seen = new Set<string>();
  for (const line of readJsonLines(file, anyObject)) {
    const at = timeOf(line.timestamp);
    const message = record(line.message);
    if (line.type === 'user' && message && line.isSidechain !== true) {
      const job = jobOfPrompt(promptText(message.content));
      if (job) out.push({ kind: 'job_line', job, at });
    } else if (line.type === 'assistant' && message && line.isSidechain !== true) {
      const usage = record(message.usage);
      const key = typeof message.id === 'string' ? message.id : typeof line.requestId === 'string' ? line.requestId : undefined;
      if (usage && !(key && seen.has(key))) {
        if (key) seen.add(key);
        out.push({ kind: 'call', call: claudeCall(usage, message.model), at });
      }
      if (message.stop_reason === 'end_turn') out.push({ kind: 'turn_end', at });
    } else if (line.type === 'system' && line.subtype === 'turn_duration') {
      out.push({ kind: 'turn_end', at });
    }
  }
  return inTimeOrder(out);
}

/** Stable, by timestamp; an entry without one keeps the time of the entry before it. */
function inTimeOrder(entries: ConversationEntry[]): ConversationEntry[] {
  let last = -Infinity;
  const keyed = entries.map((e, i) => ({ e, i, t: (last = e.at ?? last) }));
  return keyed.sort((a, b) => a.t - b.t || a.i - b.i).map((k) => k.e);
}

/** Anthropic counts input_tokens apart from cache reads and writes: the input is their sum. */
function claudeCall(usage: Record<string, unknown>, model: unknown): ModelCall {
  const fresh = tokenCount(usage.input_tokens);
  const read = tokenCount(usage.cache_read_input_tokens);
  const write = tokenCount(usage.cache_creation_input_tokens);
  return {
    model: typeof model === 'string' ? model : null,
    input_tokens: fresh + read + write,
    cached_input_tokens: read,
    cache_write_input_tokens: write,
    output_tokens: tokenCount(usage.output_tokens),
    reasoning_output_tokens: null,
  };
}

/** What a person typed: a string, or text blocks; a tool result is not a prompt. */
function promptText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  if (content.some((b) => record(b)?.type === 'tool_result')) return '';
  return content.map((b) => textOf(b, 'text')).join('\n');
}
