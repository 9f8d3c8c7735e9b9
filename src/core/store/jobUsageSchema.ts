import { bool, custom, int, isRecord, lazy, nullable, obj, record, str, type Schema } from '../base/schema';

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

/** A record's `usage`: a reading with counts, or one that says why there are none (built on first use). */
export const jobUsageSchema: Schema<JobUsage> = /* @__PURE__ */ lazy(() => {
  const count = int({ min: 0, why: 'must be a non-negative integer' });
  const part = nullable(count, { why: 'must be a non-negative integer or null' });
  // Fields of a reading are named after `usage` with a space, as in `usage input_tokens must be …`.
  const spaced = (at: string, key: string): string => `${at} ${key}`;
  const countFields = { input_tokens: count, cached_input_tokens: count, cache_write_input_tokens: part, output_tokens: count, reasoning_output_tokens: part };
  const readingFields = { agent: str(), final: bool(), measured_at: str({ why: 'must be a time' }) };

  const tokenCounts: Schema<TokenCounts> = obj(countFields, { childPath: spaced });

  const measuredUsage: Schema<MeasuredUsage> = obj(
    { ...readingFields, ...countFields, conversation_id: str(), requests: int({ why: 'must be an integer' }), models: record(tokenCounts, { childPath: (at, model) => `${at}.${model.slice(0, 60)}:` }) },
    { childPath: spaced },
  );

  const unavailableUsage: Schema<UnavailableUsage> = obj({ ...readingFields, unavailable: str({ why: 'must be a sentence' }) }, { childPath: spaced });

  return custom((v, at) => (isRecord(v) && 'unavailable' in v ? unavailableUsage : measuredUsage).read(v, at));
});
