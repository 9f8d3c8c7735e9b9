import type { SkillText } from './skillText';
import type { Skill } from './skillText';

/** The review loop, the creators' own checkouts, and jobs on another host. */
export function reviewSkills(t: SkillText): Skill[] {
  return [loop(t), worktrees(t), remote(t)];
}

function loop({ mam, where, exits, mcp }: SkillText): Skill {
  return {
    name: 'mam-loop',
    description: 'Run a Multi-Agent Mux (MAM) review loop (creator implements, reviewers review a pinned snapshot until all say PASS) and read its verdicts and reports.',
    tags: ['review', 'loop', 'verdict', 'snapshot', 'planner'],
    related: ['mam-jobs', 'mam-worktrees', 'mam-sessions', 'mam-plans'],
    prereq: ['mam-sessions'],
    body: `# MAM review loop

The creator implements and commits; every reviewer reviews the same pinned snapshot; findings go back
to the creator until all reviewers say PASS in one round. No change to core logic lands without a
loop that passed. ${where}

\`\`\`sh
${mam} loop --task "<task>" --creator <creator> --reviewer <reviewer1>,<reviewer2> --json
${mam} loop status <loop-id> --json
${mam} loop list
${mam} loop resume <loop-id>
${mam} loop cancel <loop-id>
\`\`\`

${mcp(['loop_start', 'loop_status'])}
- Reviewers: \`--reviewer A,B\`, or \`--all-reviewer\` (every running reviewer session but the creator);
  with neither, the creator reviews itself.
- \`--planner <session>\` writes a plan first, which the creator may challenge \`--plan-talk <n>\` times;
  \`--review-only\` reviews what is there; \`--max-loop <n>\` rounds (3); \`--max-rebut <n>\` times the
  creator may answer a finding with \`[REBUT: reason]\` instead of a fix (2).
- \`--worktree <dir>\` reviews an issue worktree (the mam-worktrees skill); \`--base <rev>\` is what the
  changes are measured against (default HEAD when the loop starts).
- Each round pins base, head and a hash of the whole working tree (uncommitted files included). A
  review passes only with \`[VERDICT: PASS]\` alone on its report's last line; anything else is NOT PASS.
- Read \`status\` (passed, failed, cancelled) and each round's \`reviews[].verdict\` and \`report\`. Passing
  reports are kept, each beside its identity (\`report-<job>.identity.json\`), under the reports folder
  \`loop status\` prints (\`.mam/reports/<reviewer>/\` by default; \`--reports-dir <dir>\` to commit them).
- Snapshot rule: while a round is reviewed, change nothing in that checkout (no edits, commits or new
  files). A change voids the round and it is reviewed again.
- A loop whose process died continues with \`loop resume <loop-id>\` (no job is asked twice).

${exits(
  '0: passed: every reviewer passed the same round.',
  "1: not passed within `--max-loop`, or a job failed. Read the last round's reports; fix, or run the loop again.",
  `5: could not start (another loop on this checkout, a session busy or stopped). Check \`${mam} loop list\` and \`${mam} session status\`.`,
)}
`,
  };
}

function worktrees({ mam, where, exits, workspace, mcp }: SkillText): Skill {
  return {
    name: 'mam-worktrees',
    description: 'Give a Multi-Agent Mux (MAM) creator its own git checkout for an issue (prepare, remove), so parallel work and reviews do not disturb each other.',
    tags: ['git', 'worktree', 'issue', 'creator'],
    related: ['mam-loop', 'mam-sessions'],
    prereq: ['mam-sessions'],
    body: `# MAM worktrees

An issue worktree is a checkout at \`.mam/worktrees/<issue>\` on branch \`mam/<issue>\`. ${where}

\`\`\`sh
${mam} worktree prepare <issue> --json
${mam} session create --agent <agent> --name <name> --role creator --cwd "${workspace}/.mam/worktrees/<issue>"
${mam} loop --task "<task>" --creator <name> --reviewer <reviewer> --worktree "${workspace}/.mam/worktrees/<issue>"
${mam} worktree remove <issue>
\`\`\`

- \`prepare\` reuses an existing worktree and initializes submodules; \`--base <rev>\` starts the branch
  elsewhere (default HEAD).
- \`remove\` refuses while the worktree or a submodule holds unsaved work (changes, untracked files,
  unpushed commits, stashes) and names it; the branch is kept. Merge or push first.
- Running sessions whose worktrees change the same files (and whether they would merge):
  \`${mam} conflicts --json\`.
${mcp(['conflicts', 'merge_enqueue', 'merge_status'])}

${exits('0: done.', '1: refused or failed (unsaved work named on stderr). Save or discard that work, then remove again.')}
`,
  };
}

function remote({ mam, where, exits }: SkillText): Skill {
  return {
    name: 'mam-remote',
    description: 'Send a Multi-Agent Mux (MAM) job to a session on another host through a shared MQTT broker (remote runners).',
    tags: ['remote', 'runner', 'mqtt', 'dispatch'],
    related: ['mam-jobs'],
    prereq: ['mam-jobs'],
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
- A dispatch carries the job's token signed, not encrypted: only on a private broker.

${exits(
  '0: completed.',
  "1: failed (the agent's error, or the remote session is missing). Read `job logs <id>`.",
  '2: timeout. Check `job logs <id>`.',
  `3: the shared broker is unusable. Run \`${mam} doctor\` (and on the other host).`,
  '5: not delivered (the runner never took it). Ask whether the runner is running.',
)}
`,
  };
}
