import type { StoreContext } from '../agents/adapter';
import { opencodeDatabase } from '../agents/opencode';
import { openSnapshot } from '../agents/sqliteSnapshot';
import { tokenCount, type ModelCall } from './counts';
import { jobOfPrompt, record, type ConversationEntry } from './conversation';

/**
 * opencode's conversation from its database (agents/opencode.ts: a snapshot with the write-ahead
 * log laid over it), in the shape `opencode export <id>` prints: `messages[]` of `{info, parts}`.
 * Undefined when the database does not hold the conversation.
 */
export async function opencodeConversation(ctx: StoreContext, conversationId: string): Promise<unknown> {
  const db = await openSnapshot(opencodeDatabase(ctx));
  if (!db) return undefined;
  try {
    if (!db.exec('SELECT 1 FROM session WHERE id = ?', [conversationId])[0]) return undefined;
    const parts = new Map<string, unknown[]>();
    for (const [messageId, data] of db.exec('SELECT message_id, data FROM part WHERE session_id = ? ORDER BY time_created, id', [conversationId])[0]?.values ?? []) {
      const list = parts.get(String(messageId)) ?? [];
      list.push(parseJson(data));
      parts.set(String(messageId), list);
    }
    const rows = db.exec('SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id', [conversationId])[0]?.values ?? [];
    return { messages: rows.map(([id, data]) => ({ info: { ...record(parseJson(data)), id: String(id) }, parts: parts.get(String(id)) ?? [] })) };
  } catch {
    return undefined; // not the schema we know
  } finally {
    db.close();
  }
}

function parseJson(v: unknown): unknown {
  try {
    return typeof v === 'string' ? (JSON.parse(v) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The conversation (1.18.33, test/fixtures/usage/): `messages[]` of `{info, parts}`. A `user` message's text parts
 * may hold a job line; an `assistant` message is one model call, with `info.tokens` {input — cache
 * excluded —, output — reasoning excluded —, reasoning, cache: {read, write}} and `info.modelID`;
 * one that finished for any reason but tool calls ends the turn (`info.time.completed`).
 */
export function readOpencodeMessages(exported: unknown): ConversationEntry[] {
  const out: ConversationEntry[] = [];
  const messages = Array.isArray(record(exported)?.messages) ? (record(exported)!.messages as unknown[]) : [];
  for (const m of messages) {
    const info = record(record(m)?.info);
    const time = record(info?.time);
    const at = typeof time?.created === 'number' ? time.created : null;
    if (info?.role === 'user') {
      const parts = Array.isArray(record(m)?.parts) ? (record(m)!.parts as unknown[]).map(record) : [];
      const job = jobOfPrompt(parts.map((p) => (p?.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('\n'));
      if (job) out.push({ kind: 'job_line', job, at });
    } else if (info?.role === 'assistant') {
      const tokens = record(info.tokens);
      if (tokens) out.push({ kind: 'call', call: opencodeCall(tokens, info.modelID), at });
      const completed = typeof time?.completed === 'number' ? time.completed : null;
      if (completed !== null && typeof info.finish === 'string' && info.finish !== 'tool-calls') out.push({ kind: 'turn_end', at: completed });
    }
  }
  return out;
}

function opencodeCall(t: Record<string, unknown>, model: unknown): ModelCall {
  const cache = record(t.cache);
  const read = tokenCount(cache?.read);
  const write = tokenCount(cache?.write);
  const reasoning = tokenCount(t.reasoning);
  return {
    model: typeof model === 'string' ? model : null,
    input_tokens: tokenCount(t.input) + read + write,
    cached_input_tokens: read,
    cache_write_input_tokens: write,
    output_tokens: tokenCount(t.output) + reasoning,
    reasoning_output_tokens: reasoning,
  };
}
