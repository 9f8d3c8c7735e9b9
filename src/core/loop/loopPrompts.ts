import { loopHintComment } from './loopHint';
import type { LoopRound, LoopState } from './loopState';

/**
 * The task text of each job the loop hands out. Each ends with an HTML comment naming the loop,
 * the step and the round: agents ignore it; scripted agents (the demo's, the tests') read it.
 */
function hint(state: LoopState, step: string, round: number | null): string {
  return `\n\n${loopHintComment({ loop: state.id, step, round })}`;
}

export function planPrompt(state: LoopState): string {
  return `Write an implementation plan for this task, to be carried out by ${state.creator} in ${state.checkout}.
Write the plan to the report file the Protocol below names and hand it in (\`completed --report\`).

### Task

${state.task}${hint(state, 'plan', null)}`;
}

export function challengePrompt(state: LoopState, plan: string, turn: number): string {
  return `${state.planner} wrote this plan for a task you will implement (turn ${turn} of at most ${state.plan_talk}).
Challenge it: point out what is wrong, missing or risky. If it is good as it is, end your answer (the
--detail or --report of \`completed\`) with [AGREE] alone on its last line.

### Task

${state.task}

### Plan

${plan}${hint(state, 'challenge', null)}`;
}

export function revisePrompt(state: LoopState, plan: string, challenge: string): string {
  return `${state.creator} challenged your plan. Revise it, write the whole revised plan to the report file the Protocol below names, and hand it in.

### Your plan

${plan}

### The challenge

${challenge}${hint(state, 'revise', null)}`;
}

export function implementPrompt(state: LoopState): string {
  return `Implement this task in ${state.checkout} and commit your changes there (git commit), then report
completion with a one-line summary. If you delegate parts of it, pass this job's ID as --parent-job so
the review waits for them.

### Task

${state.task}
${state.plan ? `\n### The agreed plan\n\n${state.plan}\n` : ''}${hint(state, 'implement', null)}`;
}

export function reviewPrompt(state: LoopState, round: LoopRound, diff: string, previous: LoopRound | undefined): string {
  const children = round.children?.length
    ? `\n### Jobs the creator delegated\n\n${round.children.map((c) => `- ${c.id} (${c.session}): ${c.state}`).join('\n')}\n`
    : '';
  const earlier = previous
    ? `\n### The previous round\n\nYour verdicts then: ${previous.reviews.map((r) => `${r.reviewer}: ${r.verdict ?? 'none'}`).join(', ')}.${round.rebut ? `\nThe creator answers a finding: [REBUT: ${round.rebut}]. Weigh it; if it convinces you, you may pass.` : ''}\n`
    : '';
  return `Review round ${round.n} of the loop ${state.id}: review the changes below for this task, as they stand
in ${state.checkout} — base ${round.identity.base.slice(0, 12)}, head ${round.identity.head.slice(0, 12)}, tree
${round.identity.tree.slice(0, 12)} (uncommitted files included). Do not change the code yourself.

Write a report with your findings to the report file the Protocol below names (never into the checkout:
that would change the code under review) and hand it in with \`completed --report\`. End the report
with your verdict alone on its last line: [VERDICT: PASS] or [VERDICT: NOT PASS]. Anything else counts
as NOT PASS.

### Task

${state.task}
${children}${earlier}
### The changes (git diff ${round.identity.base.slice(0, 12)} ${round.identity.tree.slice(0, 12)})

\`\`\`diff
${diff}
\`\`\`${hint(state, 'review', round.n)}`;
}

export function fixPrompt(state: LoopState, round: LoopRound, findings: Array<{ reviewer: string; text: string }>): string {
  const rebutsLeft = state.max_rebut - state.rebuts_used;
  return `The reviewers did not pass round ${round.n} of your work on this task. Address their findings in
${state.checkout} and commit. ${rebutsLeft > 0 ? `If a finding is wrong, you may answer it instead with [REBUT: your reason] in your completion detail or report (${rebutsLeft} rebuttal${rebutsLeft === 1 ? '' : 's'} left); the reviewers will see it.` : 'You have no rebuttals left: fix what they found.'}

### Task

${state.task}

### Findings

${findings.map((f) => `#### ${f.reviewer}\n\n${f.text.trim()}`).join('\n\n')}${hint(state, 'fix', round.n)}`;
}
