import type { SkillText } from './skillText';
import type { Skill } from './skillText';

/**
 * Delegation (the seeds' multi-agent-mux-delegate-job), with the job types' reference beside it.
 * The first line of mam-jobs holding " job submit " is the plain delegation: agents (and the
 * real-agent init test) take that one.
 */
export function jobSkills(t: SkillText): Skill[] {
  const { mam, delegate, where, exits, mcp } = t;
  return [
    {
      name: 'mam-jobs',
      description: 'Delegate a task to a session of this Multi-Agent Mux (MAM) team as a tracked job and follow it to its end: submit, wait, status, logs, cancel, verify; a person as the assignee; the events a worker sends.',
      tags: ['delegate', 'job', 'mqtt', 'async', 'events'],
      related: ['mam-sessions', 'mam-loop', 'mam-remote'],
      prereq: ['mam-sessions'],
      files: [{ path: 'references/job-types.md', content: jobTypes(t) }],
      body: `# MAM jobs

A job is one task for one session, judged only by the events its agent sends, never by its screen.
${where}

Delegate and wait for the outcome (prints the job record as JSON):

\`\`\`sh
${mam} job submit --session <session> --prompt "<task>" --json
\`\`\`

- The line typed into the agent's pane stays short and ASCII. A long or non-ASCII task (Korean
  text, logs, a spec): write it to a file and pass \`--brief <file>\` instead of \`--prompt\`.
- \`--role <role>\`, \`--title <text>\`; \`--parent-job <id>\` when it is part of another job.
- Timers: \`--start-timeout\` T (180 s: no \`started\`, failed \`agent_blocked\`), \`--idle-timeout\` K×N
  (120 s without an event: \`deadline_timeout\`), \`--heartbeat\` N (30), \`--timeout\` the budget
  (3600 s: \`wall_clock_timeout\`). A dead agent fails its job at once (\`agent_exited\`).
- \`--type loop --reviewer <session>\` (worker, then reviewer, until PASS) and \`--type discuss
  --with <session>\` (two agents until both [AGREE]): see \`references/job-types.md\` beside this file.

## Several at once

\`\`\`sh
${mam} job submit --session <session> --prompt "<task>" --no-wait --json
${mam} job wait <id> <id2> --json
${mam} job wait <id> <id2> --any --timeout 600 --json
\`\`\`

- \`--no-wait\` returns once the task is delivered (note the \`id\`); its timers run with nobody watching.
- \`job wait\` waits for jobs submitted so; its exit status is the job table's below, and with
  \`--any\` the first job to end decides it. 75: \`--timeout\` passed with jobs still open (they go on).
- One job per session: a busy session makes submit wait, then exit 5. Parallel work needs
  several sessions.

## Follow, check, stop

\`\`\`sh
${mam} job status <id> --json
${mam} job logs <id>
${mam} job logs <id> --pane
${mam} job list --session <session> --json
${mam} job cancel <id>
${mam} job verify <id> --validate "<check command>"
\`\`\`

- States: registered, dispatched (delivered), started, then completed, failed, timeout or
  cancelled. The record's \`detail\` is the agent's summary, \`report\` its report file, \`reason\` and
  \`why\` what went wrong.
- \`logs\`: every accepted event and state change. \`logs --pane\`: the text of the agent's pane
  while the job ran (kept as \`pane.txt\` when it ended): read it there, not in the pane's
  scrollback, which loses long output.
${mcp(['job_submit', 'job_wait', 'job_status', 'job_logs', 'job_cancel'], '`job_wait` sends progress while it waits; cancelling the call stops the wait, not the job.')}
- \`cancel\` frees the session (it does not interrupt the agent's turn). \`verify\` runs a check (no
  shell; it gets MAM_JOB_ID, MAM_JOB_REPORT, MAM_JOB_DIR) and records it: exit 0 passed, 1 failed.

## A person as the assignee

\`\`\`sh
${mam} job submit --session human:<name> --prompt "<task>" --no-wait --json
\`\`\`

- Or the seeds' words \`--agent human --agent-session <name>\`. Same record, states and exit codes;
  nothing is typed anywhere; they start and complete it in VS Code or with the brief's commands.

## When you are the worker

A job reaches you as one line naming its brief (\`.mam/jobs/<id>/brief.md\`). Run the brief's
event commands exactly as written, each once; they look like this:

\`\`\`sh
${mam} event started --job <id> --heartbeat 30
${mam} event progress --job <id> --detail "<what you are doing>"
${mam} event completed --job <id> --detail "<summary>"
${mam} event error --job <id> --detail "<what went wrong>"
\`\`\`

- \`permission_required\` before you wait for a human; \`completed --report <file>\` hands in a
  report. The seeds' spelling works the same: \`event --job <id> --event <name> --detail <text>\`.

## The seeds' command

Agents that know \`multi-agent-mux-delegate-job\` (seed 004) can run it as installed beside MAM:
the same jobs, records and exit codes.

\`\`\`sh
${delegate} submit --agent <agent> --agent-session <session> --prompt "<task>" --role Worker
${delegate} status --job <id>
${delegate} logs <id>
${delegate} list
${delegate} verify --job <id> --validate "<check command>"
\`\`\`

${exits(
  '0: completed. Read `detail` (and `report`).',
  '1: failed: the agent reported an error, never acknowledged (`agent_blocked`), or exited. Read `job logs <id>` (and `--pane`); fix the task or the session, then submit again once.',
  `2: timeout (no event for too long, or over budget). Check \`${mam} session status\`; resubmit with a larger \`--timeout\` only if the work is long.`,
  `3: the broker is unusable. Run \`${mam} doctor\`; do not resubmit until it passes.`,
  `5: not delivered (session busy, unknown, stopped, or showing a screen). Check \`${mam} session status\`; wait for its job or pick another session.`,
  '75: `job wait --timeout` passed with the jobs still open. Wait again, or cancel them.',
)}
`,
    },
  ];
}

/** `references/job-types.md`: the seeds' DELEGATION_TYPES.md, as MAM runs each type. */
function jobTypes({ mam, where }: SkillText): string {
  return `# MAM job types

Every type is submitted with \`job submit\` (the mam-jobs skill), recorded, timed and ended like any
job. ${where}

## direct (the default)

\`\`\`sh
${mam} job submit --session <session> --prompt "<task>" --json
\`\`\`

One session does the task. MAM types one line naming the brief (\`.mam/jobs/<id>/brief.md\`); the
agent reports with \`event\` commands.

| state | when |
|---|---|
| registered | the record exists |
| dispatched | the line was delivered (for a person: assigned) |
| started | the agent's \`started\`; \`progress\`, \`heartbeat\`, \`permission_required\` keep it there |
| completed | its \`completed\` (exit 0) |
| failed | its \`error\` (\`agent_error\`), no \`started\` within T (\`agent_blocked\`), its process gone (\`agent_exited\`) (exit 1) |
| timeout | no event for K×N (\`deadline_timeout\`), over budget (\`wall_clock_timeout\`) (exit 2) |
| cancelled | \`job cancel\` (\`cancelled_by_user\`, exit 1), or never delivered: \`session_busy\`, \`target_not_found\` (exit 5) |

Exit 3: the broker is unusable and nothing is on disk yet.

## loop: a worker, then a reviewer, until PASS

\`\`\`sh
${mam} job submit --session <worker> --type loop --reviewer <reviewer> --prompt "<task>" --json
${mam} job submit --session <worker> --type loop --reviewer <reviewer> --max-iter 5 --brief <file> --json
\`\`\`

- Each iteration the worker gets the task (from the second on, with the reviewer's findings to
  address), then the reviewer gets the task and what the worker reported, and writes a report
  whose last line is \`[VERDICT: PASS]\` or \`[VERDICT: NOT PASS]\` alone. Anything else is NOT PASS.
- It ends at the first PASS, or after \`--max-iter\` iterations (default 3).
- The job \`submit\` prints is the parent: nothing is typed for it. Each step is a child job
  (\`parent_job\` is the parent's ID), delivered and judged like a direct job (\`job list --json\`).
- The parent ends completed ("PASS after N iteration(s)"), exit 0; failed \`max_iterations\`, exit 1;
  failed as a step that failed, with that step's exit; or cancelled.
- It is a review loop with one reviewer: \`loop list\` shows it, \`loop resume <loop-id>\` continues
  it after a crash. Several reviewers, a planner, pinned snapshots: the mam-loop skill.
- The seeds' words: \`--reviewer <agent> --reviewer-session <session>\`.

## discuss: two agents until both [AGREE]

\`\`\`sh
${mam} job submit --session <first> --type discuss --with <second> --prompt "<topic>" --json
${mam} job submit --session <first> --type discuss --with <second> --max-turns 8 --brief <file> --json
\`\`\`

- The two take turns (first, second, first …), each turn a child job that gets the topic and the
  discussion so far. A turn agrees when its answer (the \`completed\` detail, or its report) ends
  with \`[AGREE]\` alone on the last line.
- Two turns in a row agreeing (both sides) end it: the parent is completed ("agreed after N
  turns"), exit 0. After \`--max-turns\` (default 6) without that: failed \`no_agreement\`, exit 1,
  the transcript in \`.mam/jobs/<id>/transcript.md\`. A turn that fails ends it with that turn's exit.

## Flags every type takes

\`--timeout\`, \`--idle-timeout\`, \`--start-timeout\` and \`--heartbeat\` apply to each job (each step of
a loop, each turn of a discussion); \`--role\`, \`--title\` and \`--parent-job\` as for a direct job.
\`--no-wait\` is for direct jobs only: \`submit\` itself runs the turns of a loop or a discussion, so
it returns when they end.
`;
}
