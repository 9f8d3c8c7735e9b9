import { isMeasured, type JobUsage, type TokenCounts } from '../store/jobUsageSchema';
import { addCounts, zeroCounts } from './counts';

/** Several jobs' usage added up (a loop's round, a whole loop). */
export interface UsageSum extends TokenCounts {
  models: Record<string, TokenCounts>;
  /** Jobs added; of them, those with counts (the others' agents record none, or are not read yet). */
  jobs: number;
  measured: number;
  /** Every job's reading is final. */
  final: boolean;
}

export function sumUsage(usages: ReadonlyArray<JobUsage | null | undefined>): UsageSum {
  let sum: UsageSum = { ...zeroCounts(), models: {}, jobs: 0, measured: 0, final: true };
  for (const u of usages) {
    sum.jobs++;
    if (!u || !u.final) sum.final = false;
    if (!isMeasured(u)) continue;
    const models = { ...sum.models };
    for (const [m, c] of Object.entries(u.models)) models[m] = addCounts(models[m] ?? zeroCounts(), c);
    sum = { ...sum, ...addCounts(sum, u), models, measured: sum.measured + 1 };
  }
  return sum;
}
