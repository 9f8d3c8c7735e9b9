import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorMessage } from '../base/errors';
import { num, obj, optional, parse, record, type Schema } from '../base/schema';
import type { JobUsage, TokenCounts } from '../store/jobUsageSchema';
import type { UsageSum } from './sum';

/** US dollars per million tokens. `cached_input` and `cache_write` default to `input` when absent. */
export interface ModelPrice {
  input: number;
  cached_input?: number;
  cache_write?: number;
  output: number;
}

/** By model name: an exact name, or a prefix ending in `*` (the longest matching prefix wins). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * Built-in list prices, USD per million tokens, as Anthropic (anthropic.com/pricing: cache reads
 * 0.1× input, 5-minute cache writes 1.25×) and OpenAI (openai.com/api/pricing: cached input 0.1×)
 * published them; recorded 2025-11. Prices change: `.mam/prices.json` overrides any entry
 * (docs/usage.md). Reasoning tokens are billed as output, and are part of output_tokens.
 */
export const DEFAULT_PRICES: PriceTable = {
  'claude-opus-4-0*': { input: 15, cached_input: 1.5, cache_write: 18.75, output: 75 },
  'claude-opus-4-1*': { input: 15, cached_input: 1.5, cache_write: 18.75, output: 75 },
  'claude-opus-4-2025*': { input: 15, cached_input: 1.5, cache_write: 18.75, output: 75 },
  'claude-opus-4*': { input: 5, cached_input: 0.5, cache_write: 6.25, output: 25 },
  'claude-sonnet-4*': { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15 },
  'claude-3-7-sonnet*': { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15 },
  'claude-haiku-4*': { input: 1, cached_input: 0.1, cache_write: 1.25, output: 5 },
  'claude-3-5-haiku*': { input: 0.8, cached_input: 0.08, cache_write: 1, output: 4 },
  'gpt-5-mini*': { input: 0.25, cached_input: 0.025, output: 2 },
  'gpt-5-nano*': { input: 0.05, cached_input: 0.005, output: 0.4 },
  'gpt-5*': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-4.1*': { input: 2, cached_input: 0.5, output: 8 },
  'o4-mini*': { input: 1.1, cached_input: 0.275, output: 4.4 },
  'o3*': { input: 2, cached_input: 0.5, output: 8 },
};

/** The price of a model, or undefined when the table does not know it (then no money is shown). */
export function priceOf(table: PriceTable, model: string): ModelPrice | undefined {
  if (table[model]) return table[model];
  let best: { len: number; price: ModelPrice } | undefined;
  for (const [key, price] of Object.entries(table)) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (model.startsWith(prefix) && (!best || prefix.length > best.len)) best = { len: prefix.length, price };
  }
  return best?.price;
}

function costOf(c: TokenCounts, p: ModelPrice): number {
  const read = c.cached_input_tokens;
  const write = c.cache_write_input_tokens ?? 0;
  const fresh = Math.max(0, c.input_tokens - read - write);
  return (fresh * p.input + read * (p.cached_input ?? p.input) + write * (p.cache_write ?? p.input) + c.output_tokens * p.output) / 1e6;
}

/** An estimate in USD from the table, or undefined when any model of the job has no price. */
export function estimateCost(usage: JobUsage | UsageSum | null | undefined, table: PriceTable): number | undefined {
  if (!usage || !('models' in usage)) return undefined;
  let total = 0;
  for (const [model, counts] of Object.entries(usage.models)) {
    const price = priceOf(table, model);
    if (!price) return undefined;
    total += costOf(counts, price);
  }
  return total;
}

/**
 * The built-in table with the user's file laid over it: `{ "<model or prefix*>": { "input": N,
 * "cached_input": N, "cache_write": N, "output": N } }`, USD per million tokens. A malformed file
 * is ignored as a whole, with one warning naming what is wrong.
 */
export function loadPriceTable(file: string, warn: (message: string) => void): PriceTable {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return DEFAULT_PRICES;
  }
  const problem = (why: string): PriceTable => {
    warn(`${file}: ${why}; using the built-in prices`);
    return DEFAULT_PRICES;
  };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return problem(`not JSON (${errorMessage(err)})`);
  }
  try {
    return { ...DEFAULT_PRICES, ...parse(priceFile, raw, (why) => new Error(why), '') };
  } catch (err) {
    return problem(errorMessage(err));
  }
}

// Messages name the model, then what its entry lacks: `'gpt-x' needs output as a non-negative number …`.
const usd = (why: string): Schema<number> => num({ min: 0, why });
const atModel = (at: string): string => at;
const modelPrice: Schema<ModelPrice> = obj(
  {
    input: usd('needs input as a non-negative number (USD per million tokens)'),
    output: usd('needs output as a non-negative number (USD per million tokens)'),
    cached_input: optional(usd('has cached_input that is not a non-negative number')),
    cache_write: optional(usd('has cache_write that is not a non-negative number')),
  },
  { extra: 'refuse', childPath: atModel, why: 'must be an object such as { "input": 3, "output": 15 }' },
);
const priceFile = record(modelPrice, { childPath: (_, model) => `'${model.slice(0, 60)}'`, why: 'must be an object of model → prices' });

/** The workspace's price table: the built-in one with `.mam/prices.json` laid over it. */
export function workspacePrices(paths: { dir: string }, warn: (message: string) => void): PriceTable {
  return loadPriceTable(path.join(paths.dir, 'prices.json'), warn);
}
