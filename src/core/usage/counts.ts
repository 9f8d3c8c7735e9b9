import type { TokenCounts } from '../store/jobUsageSchema';

/** One model call's usage as read from an agent's store, normalised (jobUsageSchema.ts says how). */
export interface ModelCall extends TokenCounts {
  model: string | null;
}

export function zeroCounts(): TokenCounts {
  return { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: null, output_tokens: 0, reasoning_output_tokens: null };
}

/** `a + b`; a part stays null only while neither side recorded it. */
export function addCounts(a: TokenCounts, b: TokenCounts): TokenCounts {
  const part = (x: number | null, y: number | null): number | null => (x === null && y === null ? null : (x ?? 0) + (y ?? 0));
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    cached_input_tokens: a.cached_input_tokens + b.cached_input_tokens,
    cache_write_input_tokens: part(a.cache_write_input_tokens, b.cache_write_input_tokens),
    output_tokens: a.output_tokens + b.output_tokens,
    reasoning_output_tokens: part(a.reasoning_output_tokens, b.reasoning_output_tokens),
  };
}

/** A count from a store: a non-negative integer, else 0 (a store never makes us throw). */
export function tokenCount(v: unknown): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0;
}
