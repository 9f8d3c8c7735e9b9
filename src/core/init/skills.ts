import { AGENT_NAMES } from '../agents/adapter';
import { doubleQuote } from '../base/shellWords';
import { SESSION_ROLES } from '../store/sessionSchema';

/** One skill as Claude Code and Codex read it: a folder holding SKILL.md with `name` and `description`. */
export interface Skill {
  name: string;
  /** When to use it: agents pick a skill by this line alone. */
  description: string;
  body: string;
}

/** Where the agents look for a workspace's skills: Codex (and the open standard), Claude Code. */
export const SKILL_ROOTS = ['.agents/skills', '.claude/skills'] as const;

/**
 * The skills an orchestrating agent needs to run a MAM team, with every command line spelled out
 * with `cli` (the absolute path of the bundled CLI), so no install or PATH is needed. Short on
 * purpose: they are read by agents with limited context.
 */
export function mamSkills(cli: string, workspace: string): Skill[] {
  const mam = `node ${doubleQuote(cli)}`;
  const where = `Run every command from inside \`${workspace}\`. Each takes \`--help\`; read commands take \`--json\`.`;
  const exits = (...lines: string[]) => ['## Exit codes', '', ...lines.map((l) => `- ${l}`), `- 64: bad flags or input; nothing changed. Fix the command from the one-line error.`, `- 70: a MAM bug. Report stderr (\`MAM_DEBUG=1\` adds the stack).`].join('\n');
  return [
    {
      name: 'mam-sessions',
      description: 'Create, stop, resume and check the agent sessions of this Multi-Agent Mux (MAM) team. Use before delegating, to add a worker or reviewer, or after a crash or reboot.',
      body: `# MAM sessions

Each teammate is an agent CLI in its own pane, registered as a session. ${where}

\`\`\`sh
${mam} session status --json
${mam} session create --agent <agent> --name <name> --role <role>
${mam} session stop <name>
${mam} session resume <name>
${mam} session resume --all
\`\`\`

- \`status\` is read-only: each session's state, whether its pane lives, \`attention\` (a screen only a
  person can answer), its conversation ID and drift. Look before you act.
- \`<agent>\`: ${AGENT_NAMES.filter((a) => a !== 'shell').join(', ')}. \`<role>\`: ${SESSION_ROLES.filter((r) => r !== 'orchestrator').join(', ')}.
  \`<name>\`: letters, digits, \`. _ -\`, unique. \`--cwd <dir>\` runs it in an issue worktree.
- \`stop\` keeps the conversation; \`resume\` continues it in the same folder. \`resume --all\` brings back
  every session that was running when its server died (crash, reboot, \`tmux kill-server\`).
- Give work only with the mam-jobs skill. Never type into a pane yourself (no \`tmux send-keys\`).

${exits(
  '0: done.',
  '4: the agent shows a screen only a person can answer (stderr names it and how). Do not type into it: tell the human; `session status` shows `attention` until it is answered.',
  '1: failed (`resume --all`: one could not be resumed). Read stderr and `session status`.',
)}
`,
    },
    {
      name: 'mam-jobs',
      description: 'Delegate a task to a session of this Multi-Agent Mux (MAM) team as a tracked job, and follow it to its end (submit, status, logs, cancel, verify).',
      body: `# MAM jobs

A job is one task for one session, judged only by the events its agent sends. ${where}

Delegate and wait for the outcome (prints the job record as JSON):

\`\`\`sh
${mam} job submit --session <session> --prompt "<task>" --json
\`\`\`

- A long or non-ASCII task: write it to a file and pass \`--brief <file>\` instead of \`--prompt\`.
- \`--no-wait\`: return once the task is delivered; note the \`id\` and follow it:

\`\`\`sh
${mam} job status <id> --json
${mam} job logs <id>
${mam} job list --session <session>
${mam} job cancel <id>
${mam} job verify <id> --validate "<check command>"
\`\`\`

- States: registered, dispatched, started, then completed, failed, timeout or cancelled. The record's
  \`detail\` is the agent's summary, \`report\` its report file, \`why\` what went wrong.
- One job per session: a busy session makes submit wait, then exit 5. Never type into a pane.
- \`verify\` runs a check on the result: exit 0 passed, 1 failed.
- \`--session human:<name>\` assigns the task to a person instead: same record and states; they
  start and complete it in VS Code or with the brief's commands. Use \`--no-wait\` and check later.

${exits(
  '0: completed. Read `detail` (and `report`).',
  '1: failed: the agent reported an error, or never acknowledged (`agent_blocked`), or exited. Read `job logs <id>`; fix the task or the session, then submit again once.',
  `2: timeout (no event for too long, or over budget). Check \`${mam} session status\`; resubmit with a larger \`--timeout\` only if the work is long.`,
  `3: the broker is unusable. Run \`${mam} doctor\`; do not resubmit until it passes.`,
  `5: not delivered (session busy, unknown, stopped, or showing a screen). Check \`${mam} session status\`; wait for its job or pick another session.`,
)}
`,
    },
    {
      name: 'mam-loop',
      description: 'Run a Multi-Agent Mux (MAM) review loop (creator implements, reviewers review a pinned snapshot until all say PASS) and read its verdicts and reports.',
      body: `# MAM review loop

The creator implements and commits; every reviewer reviews the same pinned snapshot; findings go back
to the creator until all reviewers say PASS in one round. ${where}

\`\`\`sh
${mam} loop --task "<task>" --creator <creator> --reviewer <reviewer1>,<reviewer2> --json
${mam} loop status <loop-id> --json
${mam} loop list
${mam} loop resume <loop-id>
${mam} loop cancel <loop-id>
\`\`\`

- Options: \`--planner <session>\` plans first; \`--review-only\` reviews what is there; \`--all-reviewer\`
  takes every running reviewer; \`--worktree <dir>\` reviews an issue worktree; \`--max-loop <n>\` rounds (3).
- Read \`status\` (passed, failed, cancelled) and each round's \`reviews[].verdict\` and \`report\`. Passing
  reports are kept under the reports folder \`loop status\` prints (\`.mam/reports/<reviewer>/\` by default).
- Snapshot rule: while a round is reviewed, change nothing in that checkout (no edits, commits or new
  files). A change voids the round and it is reviewed again.
- A loop whose process died continues with \`loop resume <loop-id>\` (no job is asked twice).

${exits(
  '0: passed: every reviewer passed the same round.',
  '1: not passed within `--max-loop`, or a job failed. Read the last round\'s reports; fix, or run the loop again.',
  `5: could not start (another loop on this checkout, a session busy or stopped). Check \`${mam} loop list\` and \`${mam} session status\`.`,
)}
`,
    },
    {
      name: 'mam-worktrees',
      description: 'Give a Multi-Agent Mux (MAM) creator its own git checkout for an issue (prepare, remove), so parallel work and reviews do not disturb each other.',
      body: `# MAM worktrees

An issue worktree is a checkout at \`.mam/worktrees/<issue>\` on branch \`mam/<issue>\`. ${where}

\`\`\`sh
${mam} worktree prepare <issue> --json
${mam} session create --agent <agent> --name <name> --role creator --cwd "${workspace}/.mam/worktrees/<issue>"
${mam} loop --task "<task>" --creator <name> --reviewer <reviewer> --worktree "${workspace}/.mam/worktrees/<issue>"
${mam} worktree remove <issue>
\`\`\`

- \`prepare\` reuses an existing worktree; \`--base <rev>\` starts the branch elsewhere (default HEAD).
- \`remove\` refuses while the worktree or a submodule holds unsaved work (changes, untracked files,
  unpushed commits, stashes) and names it; the branch is kept. Merge or push first.

${exits('0: done.', '1: refused or failed (unsaved work named on stderr). Save or discard that work, then remove again.')}
`,
    },
    {
      name: 'mam-remote',
      description: 'Send a Multi-Agent Mux (MAM) job to a session on another host through a shared MQTT broker (remote runners).',
      body: `# MAM remote runners

Both hosts' \`.mam.env\` name the same private broker (\`MQTT_BROKER\`, \`MQTT_PORT\`, \`MQTT_USERNAME\`,
\`MQTT_PASSWORD\`, TLS off loopback) and the same \`MAM_DISPATCH_SECRET\` (16+ characters). ${where}

On the other host (a person starts it there; it runs until stopped):

\`\`\`sh
${mam} remote run --name <runner> --session <session>
\`\`\`

Here, delegate as with the mam-jobs skill, naming the runner:

\`\`\`sh
${mam} job submit --session remote:<runner> --prompt "<task>" --json
${mam} job submit --session remote:<runner>/<session> --prompt "<task>" --json
\`\`\`

- The second form picks the session when the runner was started without \`--session\`.
- \`job status\`, \`job logs\` and \`job cancel\` work as for local jobs; a cancel frees the remote session.

${exits(
  '0: completed.',
  '1: failed (the agent\'s error, or the remote session is missing). Read `job logs <id>`.',
  '2: timeout. Check `job logs <id>`.',
  `3: the shared broker is unusable. Run \`${mam} doctor\` (and on the other host).`,
  '5: not delivered (the runner never took it). Ask whether the runner is running.',
)}
`,
    },
  ];
}

/** SKILL.md: YAML frontmatter (name, description) and the body. */
export function skillFile(skill: Skill): string {
  return `---\nname: ${skill.name}\ndescription: ${JSON.stringify(skill.description)}\n---\n\n${skill.body}`;
}
