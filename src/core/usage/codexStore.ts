import * as path from 'node:path';
import type { StoreContext } from '../agents/adapter';
import { listDir } from '../agents/store';
import { tokenCount, type ModelCall } from './counts';
import { readJsonLines } from '../base/jsonLines';
import { anyObject } from '../base/schema';
import { jobOfPrompt, record, textOf, timeOf, type ConversationEntry } from './conversation';

/** codex's rollout of a conversation: `$CODEX_HOME or ~/.codex` / sessions / YYYY / MM / DD / rollout-<time>-<id>.jsonl. */
export function codexRolloutFile(ctx: StoreContext, conversationId: string): string | undefined {
  const root = path.join(ctx.env.CODEX_HOME || path.join(ctx.home, '.codex'), 'sessions');
  const suffix = `-${conversationId}.jsonl`;
  // Newest date folders first: a conversation is usually recent.
  for (const y of listDir(root).sort().reverse()) {
    for (const m of listDir(path.join(root, y)).sort().reverse()) {
      for (const d of listDir(path.join(root, y, m)).sort().reverse()) {
        const name = listDir(path.join(root, y, m, d)).find((n) => n.startsWith('rollout-') && n.endsWith(suffix));
        if (name) return path.join(root, y, m, d, name);
      }
    }
  }
  return undefined;
}

/**
 * codex's rollout (0.171.0, test/fixtures/usage/): `event_msg` lines of payload type
 * `token_count` carry `info.last_token_usage` (the last model call) and the cumulative
 * `info.total_token_usage`; a record repeating the previous total (or with no info) is no new
 * call. The model is the latest `turn_context`'s. A user `response_item` message may be a job
 * line; `event_msg` `task_complete` ends a turn. OpenAI counts cached tokens inside input_tokens
 * and reasoning inside output_tokens, which is how MAM counts them too.
 */
export function readCodexRollout(file: string): ConversationEntry[] {
  const out: ConversationEntry[] = [];
  let model: string | null = null;
  let lastTotal = '';
  for (const line of readJsonLines(file, anyObject)) {
    const at = timeOf(line.timestamp);
    const payload = record(line.payload);
    if (!payload) continue;
    if (line.type === 'turn_context' && typeof payload.model === 'string') model = payload.model;
    else if (line.type === 'response_item' && payload.type === 'message' && payload.role === 'user') {
      const job = jobOfPrompt(inputText(payload.content));
      if (job) out.push({ kind: 'job_line', job, at });
    } else if (line.type === 'event_msg' && payload.type === 'token_count') {
      const info = record(payload.info);
      const last = record(info?.last_token_usage);
      if (!info || !last) continue;
      const total = JSON.stringify(info.total_token_usage ?? null);
      if (total === lastTotal) continue;
      lastTotal = total;
      out.push({ kind: 'call', call: codexCall(last, model), at });
    } else if (line.type === 'event_msg' && payload.type === 'task_complete') {
      out.push({ kind: 'turn_end', at });
    }
  }
  return out;
}

function codexCall(u: Record<string, unknown>, model: string | null): ModelCall {
  return {
    model,
    input_tokens: tokenCount(u.input_tokens),
    cached_input_tokens: tokenCount(u.cached_input_tokens),
    cache_write_input_tokens: 'cache_write_input_tokens' in u ? tokenCount(u.cache_write_input_tokens) : null,
    output_tokens: tokenCount(u.output_tokens),
    reasoning_output_tokens: 'reasoning_output_tokens' in u ? tokenCount(u.reasoning_output_tokens) : null,
  };
}

function inputText(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  return content.map((b) => textOf(b)).join('\n');
}
