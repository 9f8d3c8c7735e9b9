import type { JobUsage } from '../store/jobUsageSchema';
import { estimateCost, type PriceTable } from './prices';
import type { UsageSum } from './sum';

const n = (v: number): string => v.toLocaleString('en-US');

/** "$0.04", "$1.23", "<$0.01". */
export function formatMoney(usd: number): string {
  return usd > 0 && usd < 0.01 ? '<$0.01' : `$${usd.toFixed(2)}`;
}

/**
 * One line for a job's usage: `12,345 in (10,000 cached) · 2,345 out · ≈ $0.04 (estimate)`, with
 * `(so far)` while the reading is not final; the sentence when nothing was measured. Money only
 * when every model of the job has a price.
 */
export function formatUsage(usage: JobUsage | UsageSum | null | undefined, prices: PriceTable): string | undefined {
  if (!usage) return undefined;
  if (!('models' in usage)) return usage.unavailable;
  if ('jobs' in usage && usage.measured === 0) return undefined;
  const cost = estimateCost(usage, prices);
  return [
    `${n(usage.input_tokens)} in (${n(usage.cached_input_tokens)} cached)`,
    `${n(usage.output_tokens)} out${usage.reasoning_output_tokens ? ` (${n(usage.reasoning_output_tokens)} reasoning)` : ''}`,
    ...(cost !== undefined ? [`≈ ${formatMoney(cost)} (estimate)`] : []),
  ].join(' · ') + (usage.final ? '' : ' (so far)') + ('jobs' in usage && usage.measured < usage.jobs ? ` (${usage.measured} of ${usage.jobs} jobs counted)` : '');
}
