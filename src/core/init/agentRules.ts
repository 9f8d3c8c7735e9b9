import { doubleQuote } from '../base/shellWords';

export const BEGIN_MARKER = '<!-- mam:begin -->';
export const END_MARKER = '<!-- mam:end -->';

/**
 * The rules every agent of the team follows — the seeds' roles, workflow and rules — for AGENTS.md
 * (Codex reads it) and .claude/rules/ (Claude Code 2.1 loads that folder, but not AGENTS.md). Read
 * by every agent in every conversation, so kept to what changes how they act; and never quoting
 * the line a job arrives as (a scripted agent would take it for a job).
 */
export function agentRules(cli: string, skills: readonly string[]): string {
  return `## Multi-Agent Mux (MAM)

A team of coding agents works in this repository through MAM. Its CLI is \`node ${doubleQuote(cli)}\`.
The skills in \`.agents/skills/\` and \`.claude/skills/\` give the exact commands:
${skills.map((s) => `\`${s}\``).join(', ')}; \`mam-jobs/references/job-types.md\` the job types.

### Roles

- **Orchestrator (Delegator)**, the project manager (PM): talks with the user, splits the work into
  jobs, registers its own conversation (\`mam init\` from its shell does it), creates the sessions,
  delegates, runs the review loop, and commits or merges what passed. It does not do the team's
  work in their panes.
- **Worker (Implementer)**, sessions with role creator, developer or worker: takes one job at a
  time from its brief, implements, checks its own change, commits when the job says so, reports.
- **Reviewer**: reviews one pinned snapshot (the diff from the loop's base, uncommitted files
  included) and ends its report with \`[VERDICT: PASS]\` or \`[VERDICT: NOT PASS]\` alone on the last
  line, each finding with what to change.
- **Planner**: writes the plan before the work when a loop has one; the creator may challenge it.

### Workflow

1. The user gives the orchestrator a goal; it plans (or asks the planner) and splits it into jobs.
2. Each job goes to one session (\`job submit\`, the task in a brief file when it is long); the
   worker publishes \`started\`, does the work, then publishes \`completed\` or \`error\`.
3. The change is reviewed in a loop (\`loop --creator … --reviewer …\`): the creator fixes or
   rebuts each finding, until every reviewer passes the same snapshot.
4. Then the orchestrator merges or commits, and reports to the user.

### Rules

- **No change to core logic without a reviewed diff**: it lands only after a review loop passed on
  it (exit 0). A NOT PASS goes back to the creator, never around the reviewers.
- **Several dependent changes: a plan.** For work of several changes that build on each other,
  write a plan file and run it (\`plan run\`, the \`mam-plans\` skill) rather than chaining
  worktree, session, loop and merge commands yourself: the plan lands each change only after its
  review, runs independent tasks at once, and survives your stopping (\`plan resume\`).
- **One job per session.** A session gets its next job only after its current one has ended;
  parallel work needs several sessions.
- **Never type into another agent's pane** (no \`tmux send-keys\`, no pasting): only through \`mam\`
  (\`job submit\`, \`session send\`). A screen MAM names (exit 4) is for a human to answer.
- **Short prompts, details in a file.** What is typed into a pane is one short ASCII line in
  English; anything long or non-ASCII (Korean text, logs, specifications) goes in a brief file
  (\`--brief FILE\`) that the line points to.
- **Pane snapshot rule.** A pane's scrollback loses long output. Send long output (test runs,
  builds, logs) to a file outside the reviewed tree (\`> /tmp/<job-id>-test.log 2>&1\`), read it
  from there, and name it in your report. MAM keeps each job's pane text too: \`job logs <id> --pane\`.
- **Review snapshot rule.** A review approves one tree. While a review round runs, change nothing
  in the checkout under review (no edits, commits or new files): a change voids the round.
- **Reporting.** A job reaches you as one line naming its brief (\`.mam/jobs/<id>/brief.md\`). Run the
  brief's \`event\` commands exactly as written, each once: \`started\` at once, \`progress\` now and
  then, then \`completed\` (with \`--report\` when the brief names a report file) or \`error\`. MAM
  judges jobs only by these events, never by your screen.
- \`.mam/\` is MAM's; \`.mam.env\` holds credentials and stays out of git.`;
}

/** MAM's section of AGENTS.md: the rules between markers, so that the rest of the file is never touched. */
export function agentRulesSection(cli: string, skills: readonly string[]): string {
  return `${BEGIN_MARKER}\n${agentRules(cli, skills)}\n${END_MARKER}`;
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
