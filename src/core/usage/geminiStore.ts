import * as path from 'node:path';
import type { StoreContext } from '../agents/adapter';
import { listDir, readFirstLine } from '../agents/store';
import { tokenCount, type ModelCall } from './counts';
import { readJsonLines } from '../base/jsonLines';
import { anyObject } from '../base/schema';
import { jobOfPrompt, record, timeOf, type ConversationEntry } from './conversation';

/**
 * gemini's files of one conversation: `~/.gemini/tmp/<project>/chats/session-<time>-<first 8 of
 * the id>.jsonl` whose first line names the session. A resumed conversation goes on in a second
 * file under the same session ID, so there may be several.
 */
export function geminiConversationFiles(ctx: StoreContext, conversationId: string): string[] {
  const root = path.join(ctx.home, '.gemini', 'tmp');
  const suffix = `-${conversationId.slice(0, 8)}.jsonl`;
  const files: string[] = [];
  for (const project of listDir(root)) {
    const chats = path.join(root, project, 'chats');
    for (const name of listDir(chats)) {
      if (!name.startsWith('session-') || !name.endsWith(suffix)) continue;
      const first = record(safeJson(readFirstLine(path.join(chats, name))));
      if (first?.sessionId === conversationId) files.push(path.join(chats, name));
    }
  }
  return files.sort();
}

/**
 * gemini's conversation (0.61.0, test/fixtures/usage/): message records `{id, timestamp, type:
 * "user" | "gemini", content, tokens: {input, output, cached, thoughts, tool}, model, toolCalls}`,
 * and `{"$set": {messages: […]}}` lines that lay down several at once. A record is written again
 * when it changes (a reply gets its toolCalls), so the last version of each id counts, once. A
 * `gemini` reply with text and no tool calls ends a turn. Gemini counts cached tokens inside
 * `input` and thinking apart from `output`; MAM adds `tool` (tool-use prompt) to the input and
 * thinking to the output.
 */
export function readGeminiConversation(files: readonly string[]): ConversationEntry[] {
  const byId = new Map<string, Record<string, unknown>>();
  for (const file of files) {
    for (const line of readJsonLines(file, anyObject)) {
      const set = record(line.$set);
      const messages = Array.isArray(set?.messages) ? set.messages : [line];
      for (const m of messages) {
        const r = record(m);
        if (r && typeof r.id === 'string' && (r.type === 'user' || r.type === 'gemini')) byId.set(r.id, r);
      }
    }
  }
  const out: ConversationEntry[] = [];
  for (const r of [...byId.values()].sort((a, b) => (timeOf(a.timestamp) ?? 0) - (timeOf(b.timestamp) ?? 0))) {
    const at = timeOf(r.timestamp);
    if (r.type === 'user') {
      const job = jobOfPrompt(partsText(r.content));
      if (job) out.push({ kind: 'job_line', job, at });
      continue;
    }
    const tokens = record(r.tokens);
    if (tokens) out.push({ kind: 'call', call: geminiCall(tokens, r.model), at });
    const calls = Array.isArray(r.toolCalls) ? r.toolCalls.length : 0;
    if (calls === 0 && typeof r.content === 'string' && r.content.trim() !== '') out.push({ kind: 'turn_end', at });
  }
  return out;
}

function geminiCall(t: Record<string, unknown>, model: unknown): ModelCall {
  const thoughts = tokenCount(t.thoughts);
  return {
    model: typeof model === 'string' ? model : null,
    input_tokens: tokenCount(t.input) + tokenCount(t.tool),
    cached_input_tokens: tokenCount(t.cached),
    cache_write_input_tokens: null,
    output_tokens: tokenCount(t.output) + thoughts,
    reasoning_output_tokens: thoughts,
  };
}

/** A user message's text: a string, or parts with `text`. */
function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof record(p)?.text === 'string' ? (record(p)!.text as string) : '')).join('\n');
}

function safeJson(line: string | undefined): unknown {
  try {
    return line ? JSON.parse(line) : undefined;
  } catch {
    return undefined;
  }
}
