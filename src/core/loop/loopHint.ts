import { custom, obj, oneOf, parse, str, type Infer } from '../base/schema';

/**
 * The loop's note at the end of each loop job's task: an HTML comment naming the loop, the step
 * and the round. Agents ignore it; scripted agents (the demo's, the tests') act on it, and the
 * jobs view shows a loop job under its loop. Written and read here, so the two stay in step.
 */
const loopHint = obj({
  loop: str(),
  step: oneOf(['plan', 'challenge', 'revise', 'implement', 'review', 'fix']),
  round: custom((v) => (typeof v === 'number' ? v : null)),
});
export type LoopHint = Infer<typeof loopHint>;

export function loopHintComment(hint: { loop: string; step: string; round: number | null }): string {
  return `<!-- mam-loop: ${JSON.stringify({ loop: hint.loop, step: hint.step, round: hint.round })} -->`;
}

/** The first loop note in `text`; null when there is none or it is not readable. */
export function parseLoopHint(text: string): LoopHint | null {
  const m = /<!-- mam-loop: (\{.*?\}) -->/.exec(text);
  if (!m) return null;
  try {
    return parse(loopHint, JSON.parse(m[1]!));
  } catch {
    return null;
  }
}
