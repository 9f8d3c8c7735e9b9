import { ValidationError } from '../base/errors';

/**
 * Tokens, counted the same way whatever the agent (docs/usage.md). `input_tokens` is every prompt
 * token the model read, cached or not (OpenAI's convention; Anthropic's `input_tokens` plus its two
 * cache fields); `cached_input_tokens` and `cache_write_input_tokens` are parts of it.
 * `output_tokens` is every generated token, reasoning included; `reasoning_output_tokens` is part
 * of it. A part an agent does not record is null.
 */
export interface TokenCounts {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number | null;
  output_tokens: number;
  reasoning_output_tokens: number | null;
}

/** What a job's conversation spent, from the agent's own store, as the job record keeps it. */
export interface MeasuredUsage extends TokenCounts {
  agent: string;
  /** The conversation the counts come from. */
  conversation_id: string;
  /** Model calls counted (claude: messages; codex: token_count records). */
  requests: number;
  /** The same counts per model, as the store names it: what the price estimate uses. */
  models: Record<string, TokenCounts>;
  /**
   * False while the job's last turn may still be written (the agent reports `completed` from a
   * tool call, before its final message): a later reading may add to it.
   */
  final: boolean;
  measured_at: string;
}

/** No counts: the agent does not record them, or the job's conversation cannot be found. */
export interface UnavailableUsage {
  agent: string;
  /** One sentence: "not recorded by gemini", "the conversation is not in claude's store", … */
  unavailable: string;
  final: boolean;
  measured_at: string;
}

export type JobUsage = MeasuredUsage | UnavailableUsage;

export function isMeasured(usage: JobUsage | null | undefined): usage is MeasuredUsage {
  return !!usage && !('unavailable' in usage);
}

const COUNT_FIELDS = ['input_tokens', 'cached_input_tokens', 'output_tokens'] as const;
const PART_FIELDS = ['cache_write_input_tokens', 'reasoning_output_tokens'] as const;

function countsProblem(v: Record<string, unknown>): string | undefined {
  for (const f of COUNT_FIELDS) if (!Number.isInteger(v[f]) || (v[f] as number) < 0) return `${f} must be a non-negative integer`;
  for (const f of PART_FIELDS) if (v[f] !== null && (!Number.isInteger(v[f]) || (v[f] as number) < 0)) return `${f} must be a non-negative integer or null`;
  return undefined;
}

/** Throws a ValidationError naming the field when a record's `usage` is malformed; absent or null is fine (older records). */
export function validateJobUsage(raw: unknown, where: string): void {
  if (raw === undefined || raw === null) return;
  const fail = (why: string): never => {
    throw new ValidationError(`${where}: usage ${why}`);
  };
  if (typeof raw !== 'object' || Array.isArray(raw)) fail('must be an object');
  const u = raw as Record<string, unknown>;
  if (typeof u.agent !== 'string') fail('agent must be a string');
  if (typeof u.final !== 'boolean') fail('final must be true or false');
  if (typeof u.measured_at !== 'string') fail('measured_at must be a time');
  if ('unavailable' in u) {
    if (typeof u.unavailable !== 'string') fail('unavailable must be a sentence');
    return;
  }
  const problem = countsProblem(u);
  if (problem) fail(problem);
  if (typeof u.conversation_id !== 'string') fail('conversation_id must be a string');
  if (!Number.isInteger(u.requests)) fail('requests must be an integer');
  if (typeof u.models !== 'object' || u.models === null || Array.isArray(u.models)) fail('models must be an object');
  for (const [model, counts] of Object.entries(u.models as Record<string, unknown>)) {
    const p = typeof counts === 'object' && counts !== null ? countsProblem(counts as Record<string, unknown>) : 'must be an object';
    if (p) fail(`models.${model.slice(0, 60)}: ${p}`);
  }
}
