import { doubleQuote } from '../base/shellWords';

export const BEGIN_MARKER = '<!-- mam:begin -->';
export const END_MARKER = '<!-- mam:end -->';

/**
 * The rules every agent of the team follows, for AGENTS.md (Codex reads it) and .claude/rules/
 * (Claude Code 2.1 loads that folder, but not AGENTS.md). Kept short, and never quoting the line a
 * job arrives as (a scripted agent would take it for a job).
 */
export function agentRules(cli: string): string {
  return `## Multi-Agent Mux (MAM)

A team of coding agents works in this repository through MAM. Its CLI is \`node ${doubleQuote(cli)}\`;
the skills \`mam-sessions\`, \`mam-jobs\`, \`mam-loop\`, \`mam-worktrees\`, \`mam-remote\` (in \`.agents/skills/\`
and \`.claude/skills/\`) give the exact commands.

- **Roles.** The orchestrator plans and delegates; it does not do the team's work in their panes.
  Sessions play creator (implements, commits), reviewer (reviews one snapshot), planner, or worker.
- **One job per session.** Delegate with \`job submit\`; a session gets its next job only after its
  current one has ended.
- **Never type into another agent's pane** (no \`tmux send-keys\`, no pasting): only through \`mam\`
  (\`job submit\`, \`session send\`). A screen MAM names (exit 4) is for a human to answer.
- **Snapshot rule.** A review approves one tree. While a review round runs, change nothing in the
  checkout under review (no edits, commits or new files): a change voids the round.
- **Reporting.** A job reaches you as one line naming its brief (\`.mam/jobs/<id>/brief.md\`). Run the
  brief's \`event\` commands exactly as written, each once: \`started\` at once, \`progress\` now and then,
  then \`completed\` (with \`--report\` when the brief names a report file) or \`error\`. MAM judges jobs
  only by these events, never by your screen. A reviewer's report ends with \`[VERDICT: PASS]\` or
  \`[VERDICT: NOT PASS]\` alone on its last line.
- \`.mam/\` is MAM's; \`.mam.env\` holds credentials and stays out of git.`;
}

/** MAM's section of AGENTS.md: the rules between markers, so that the rest of the file is never touched. */
export function agentRulesSection(cli: string): string {
  return `${BEGIN_MARKER}\n${agentRules(cli)}\n${END_MARKER}`;
}

/** Where MAM's section lies in `text` (markers included), if it has one. */
export function findSection(text: string): { start: number; end: number; section: string } | undefined {
  const start = text.indexOf(BEGIN_MARKER);
  if (start < 0) return undefined;
  const close = text.indexOf(END_MARKER, start);
  if (close < 0) return undefined;
  const end = close + END_MARKER.length;
  return { start, end, section: text.slice(start, end) };
}

/** `text` with `section` appended after what is there; the separator is what was added before it. */
export function appendSection(text: string, section: string): { text: string; separator: string } {
  const separator = text === '' ? '' : text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
  return { text: `${text}${separator}${section}\n`, separator };
}

/** `text` with its section replaced by `section`. */
export function replaceSection(text: string, section: string): string {
  const found = findSection(text);
  if (!found) return text;
  return `${text.slice(0, found.start)}${section}${text.slice(found.end)}`;
}

/** `text` without its section: what `appendSection` added goes exactly (its separator too, when still there). */
export function removeSection(text: string, separator: string): string {
  const found = findSection(text);
  if (!found) return text;
  let start = found.start;
  let end = found.end;
  if (text[end] === '\n') end++;
  if (separator && text.slice(start - separator.length, start) === separator) start -= separator.length;
  return `${text.slice(0, start)}${text.slice(end)}`;
}
