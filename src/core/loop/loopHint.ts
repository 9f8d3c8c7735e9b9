/**
 * The loop's note at the end of each loop job's task: an HTML comment naming the loop, the step
 * and the round. Agents ignore it; scripted agents (the demo's, the tests') act on it, and the
 * jobs view shows a loop job under its loop. Written and read here, so the two stay in step.
 */
export interface LoopHint {
  loop: string;
  step: 'plan' | 'challenge' | 'revise' | 'implement' | 'review' | 'fix';
  round: number | null;
}

export function loopHintComment(hint: { loop: string; step: string; round: number | null }): string {
  return `<!-- mam-loop: ${JSON.stringify({ loop: hint.loop, step: hint.step, round: hint.round })} -->`;
}

/** The first loop note in `text`; null when there is none or it is not readable. */
export function parseLoopHint(text: string): LoopHint | null {
  const m = /<!-- mam-loop: (\{.*?\}) -->/.exec(text);
  if (!m) return null;
  try {
    const hint = JSON.parse(m[1]!) as Partial<LoopHint>;
    if (typeof hint.loop !== 'string' || typeof hint.step !== 'string') return null;
    return { loop: hint.loop, step: hint.step, round: typeof hint.round === 'number' ? hint.round : null };
  } catch {
    return null;
  }
}
