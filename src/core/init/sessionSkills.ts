import { AGENT_NAMES } from '../agents/adapter';
import { SESSION_ROLES } from '../store/sessionSchema';
import type { SkillText } from './skillText';
import type { Skill } from './skillText';

/** The team itself: its sessions (the seeds' create, stop, resume and status), the monitor, the orchestrator. */
export function sessionSkills(t: SkillText): Skill[] {
  return [orchestrator(t), sessions(t), monitor(t)];
}

function sessions({ mam, where, exits, mcp }: SkillText): Skill {
  return {
    name: 'mam-sessions',
    description: 'Create, check, stop, resume and purge the agent sessions of this Multi-Agent Mux (MAM) team. Use before delegating, to add a worker or reviewer, or after a crash or reboot.',
    tags: ['sessions', 'create', 'stop', 'resume', 'status', 'tmux', 'herdr'],
    related: ['mam-jobs', 'mam-monitor', 'mam-worktrees'],
    prereq: ['mam-orchestrator'],
    body: `# MAM sessions

Each teammate is an agent CLI in its own pane of the workspace's own tmux server (never yours),
registered as a session with its conversation, so it can stop and later resume where it was. ${where}

## Look first

\`\`\`sh
${mam} session status --json
${mam} session list --json
\`\`\`

- \`status\` is read-only and never starts a server: each session's state (running, stopped,
  terminated, failed), whether its pane lives, the pane's command and folder, \`attention\` (a screen
  only a person can answer), its conversation ID, and drift: \`pane_gone\`, \`unregistered_pane\`,
  \`cwd_changed\`, \`stopped_but_alive\`, \`pid_changed\` (the mam-monitor skill repairs it).
- \`list\` reads the registry only. Look before you act.
${mcp(['session_list', 'session_create', 'session_send', 'session_stop', 'session_resume'])}

## Create

\`\`\`sh
${mam} session create --agent <agent> --name <name> --role <role> --onboard
${mam} session create --agent <agent> --name <name> --role creator --cwd <dir>
\`\`\`

- \`<agent>\`: ${AGENT_NAMES.filter((a) => a !== 'shell').join(', ')}. \`<role>\`: ${SESSION_ROLES.filter((r) => r !== 'orchestrator').join(', ')}.
  \`<name>\`: letters, digits, \`. _ -\`, up to 64, unique. The seeds' \`--session <name>\` works too.
- It waits until the agent is ready for input. A first-run screen instead (folder trust, a
  permissions warning, sign-in) is exit 4, named on stderr: never type into it, tell the human.
- \`--onboard\` then delegates an onboarding job that teaches the agent the event protocol
  (\`started\`, then \`completed\`) and waits for it (\`--onboard-timeout <seconds>\`, default the job
  budget). Exit 44: that job failed; 45: it did not finish in time. The session is kept either
  way: read the job's log (\`job logs <id>\`, the job is named), then stop the session or retry.
- \`--cwd <dir>\`: run it in another folder, such as an issue worktree (the mam-worktrees skill).
- \`--mux herdr\` or \`--herdr-session <server>\`: a herdr server instead of tmux; \`--server <name>\`
  names the server. \`--agent shell --command "<program> <args>"\` runs any program (no shell).

## Stop, resume, purge

\`\`\`sh
${mam} session stop <name>
${mam} session resume <name>
${mam} session resume --all
${mam} session stop <name> --purge-conversation --yes
\`\`\`

- \`stop\` asks the agent to exit its own way (\`/exit\`, Ctrl-C …), waits, then closes the pane; the
  session becomes \`stopped\` and keeps its conversation ID.
- \`resume\` continues that conversation (\`claude --resume\`, \`codex resume\`, \`gemini --resume\`,
  \`opencode --session\` …), only in the folder it ran in (\`--cwd <dir>\` must name that folder).
- \`resume --all\`: after a crash, a reboot or \`tmux kill-server\`, every session that was running
  comes back in its own conversation (those you stopped stay stopped). Jobs that were open on a
  dead agent end failed (\`agent_exited\`); a loop that was running is named: \`loop resume <loop-id>\`.
- \`--purge-conversation --yes\` deletes the agent's stored conversation instead of keeping it (with
  the agent's own delete command, or its files). It cannot be undone: the session can never be
  resumed (\`resumable: false\`). Without \`--yes\` nothing is deleted. Purge only when a human asks.

## A message to a running agent

\`\`\`sh
${mam} session send <name> --text "<one short line>"
\`\`\`

- Types one literal line, checked like a job's delivery. It is not tracked: give work with the
  mam-jobs skill. Never type into a pane yourself (no \`tmux send-keys\`).

${exits(
  '0: done.',
  '1: failed (`resume --all`: one could not be resumed). Read stderr and `session status`.',
  '4: the agent shows a screen only a person can answer (stderr names it and how). Tell the human; `session status` shows `attention` until it is answered.',
  '44: `--onboard`: the onboarding job failed. The session is kept; read `job logs <id>`.',
  '45: `--onboard`: onboarding did not finish in time. The session is kept; check `session status` for `attention`, then `job logs <id>`.',
)}
`,
  };
}

function monitor({ mam, where, exits }: SkillText): Skill {
  return {
    name: 'mam-monitor',
    description: 'Keep a Multi-Agent Mux (MAM) team in order while no VS Code window watches it: repair session drift, apply job events, enforce the timers of jobs nobody waits on (mam monitor).',
    tags: ['monitor', 'reconcile', 'drift', 'timers', 'outbox'],
    related: ['mam-sessions', 'mam-jobs'],
    prereq: ['mam-sessions'],
    body: `# MAM monitor

What the VS Code extension does in the background, headless. ${where}

\`\`\`sh
${mam} session monitor --once --json
${mam} monitor --once
${mam} monitor --interval 10
\`\`\`

- \`session monitor --once\` repairs session drift once and exits: a session whose pane is gone
  becomes \`terminated\`; a live pane on the workspace's server that nobody registered is registered;
  a stopped session whose pane lives is \`running\` again; a create or resume killed midway is
  cleaned up. A changed folder is only reported. Run it when \`session status\` shows drift.
- \`monitor\` does that every \`--interval\` seconds (5) and also: applies job events as they arrive
  (from the outboxes on disk while the broker is down), enforces the timers of jobs nobody waits
  on (\`--no-wait\`, or a submitter that died), and warns when running sessions' worktrees change
  the same files. It prints one line per change. \`--once\`: one pass, then exit.

## When to run one

- VS Code open on this folder with the extension (trusted, \`mam.monitor.autoStart\` on, the default):
  it already runs the monitor; do not start another.
- No VS Code: a \`--no-wait\` job's timers are enforced anyway (by the embedded broker's job
  warden, or a watcher the submit starts on a broker of your own). Start a monitor for a long
  stretch of work, to keep drift repaired and see jobs and overlaps as they change; or run
  \`session monitor --once\` before you act.
- Two monitors do no harm (every decision is re-checked under the job's lock), only noise.

## Run and stop it

It runs until stopped, so never in the foreground of your own shell tool (the call would not
return). Ask the human to run it in a terminal, or start it in the background with its output in
a file (a pane loses long output), and keep its process ID:

\`\`\`sh
nohup ${mam} monitor > .mam/monitor.log 2>&1 &
echo $! > .mam/monitor.pid
\`\`\`

Read \`.mam/monitor.log\` to see what it did. Stop it with \`kill "$(cat .mam/monitor.pid)"\` (SIGTERM;
Ctrl-C where it runs in a terminal): it finishes its pass and exits 0. It also stops by itself
when this workspace's \`.mam/\` is deleted.

${exits('0: stopped (or `--once` done).')}
`,
  };
}

function orchestrator({ mam, where, exits }: SkillText): Skill {
  return {
    name: 'mam-orchestrator',
    description: 'Register the orchestrating agent’s own conversation with Multi-Agent Mux (MAM), so that it is never taken for a sub-agent’s. Use once per orchestrator conversation, before creating sessions.',
    tags: ['orchestrator', 'onboarding', 'conversation', 'register'],
    related: ['mam-sessions', 'mam-jobs'],
    prereq: [],
    body: `# MAM orchestrator

You, the agent that plans and delegates, are the orchestrator: not a session of the team. ${where}

## Why register

MAM resumes each session in its own conversation, so it learns each agent's conversation ID,
for some agents (codex, opencode, hermes) from the agent's own store by folder and start time.
Your conversation lives in that same store, often in the same folder. Registered, it is never
taken for a sub-agent's: otherwise a new session could be recorded with your conversation, and
its \`resume\` would reopen your conversation in another pane, or \`stop --purge-conversation\`
would delete it.

## Register

\`mam init\` run from your own shell tool registers you (the setup a person asks you to run):

\`\`\`sh
${mam} init --json
\`\`\`

- It finds the agent CLI it runs under: claude by \`CLAUDE_CODE_SESSION_ID\`, codex by the
  conversation file it holds open (else \`CODEX_THREAD_ID\`). Its \`orchestrator\` field (or the
  \`Orchestrator:\` line) says whether it registered you, and why not.
- An agent that is itself a MAM session is never registered: it is a sub-agent.

Otherwise, register the conversation yourself:

\`\`\`sh
${mam} orchestrator register --agent <agent> --conversation <conversation-id> --json
\`\`\`

- \`<agent>\`: the CLI you are (claude, codex, gemini, opencode …). Your conversation ID: in claude
  \`echo "$CLAUDE_CODE_SESSION_ID"\`, in codex \`echo "$CODEX_THREAD_ID"\`; else the one your CLI shows.
- Registering again changes nothing. Registered conversations are listed in
  \`.mam/orchestrators.json\`.
- Register before you create sessions, and again when you start a new conversation (a fresh start,
  or clearing your history): it has a new ID.

${exits('0: registered (or already registered; `init` also when nobody could be registered: read `orchestrator`).')}
`,
  };
}
