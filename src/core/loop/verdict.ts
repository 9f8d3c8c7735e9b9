import { lastLine } from '../jobs/compositeJobs';

/**
 * Verdicts are read strictly (SPEC §7): the token must stand alone on the report's last non-empty
 * line. Anything else — no verdict, a verdict earlier in the text, decoration around it — counts
 * as NOT PASS, so a reviewer cannot pass a change by accident.
 */
export type Verdict = 'PASS' | 'NOT PASS';

export function verdictOf(report: string): Verdict {
  const last = lastLine(report);
  return last === '[VERDICT: PASS]' ? 'PASS' : 'NOT PASS';
}

/** True when a reviewer explicitly gave a verdict line (PASS or NOT PASS). */
export function hasVerdictLine(report: string): boolean {
  return /^\[VERDICT: (PASS|NOT PASS)\]$/.test(lastLine(report));
}

/** `[REBUT: reason]` anywhere in a creator's answer; the reason, or undefined. */
export function rebuttalOf(text: string): string | undefined {
  return /\[REBUT:([^\]]*)\]/.exec(text)?.[1]?.trim() || undefined;
}
