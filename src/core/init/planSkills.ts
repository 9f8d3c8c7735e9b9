import { planFormat } from '../plan/planFormat';
import type { Skill, SkillText } from './skillText';

/** Plans: a goal as a task graph MAM runs to landed code (docs/plans.md). */
export function planSkills(t: SkillText): Skill[] {
  return [plans(t)];
}

function plans({ mam, where, exits, mcp }: SkillText): Skill {
  return {
    name: 'mam-plans',
    description: 'Turn a goal of several dependent changes into a Multi-Agent Mux (MAM) plan file (tasks, needs, creators, reviewers, budgets) and run it to reviewed, landed code: write, check, run, status, resume, cancel, draft.',
    tags: ['plan', 'tasks', 'dependencies', 'orchestration', 'budget', 'merge'],
    related: ['mam-loop', 'mam-worktrees', 'mam-jobs', 'mam-sessions'],
    prereq: ['mam-sessions'],
    body: `# MAM plans

For work of several changes that build on each other, write a plan and let MAM run it, rather than
chaining worktree, session, loop and merge commands yourself. Each task gets its own worktree from
the target's tip, a creator session and a review loop, and lands through the merge queue once its
reviewers passed it; tasks run side by side where no \`needs\` orders them. The run's state is on
disk: it survives your stopping. ${where}

## The file

${planFormat()}

## Writing a good plan

- One reviewable change per task: what a reviewer reads in one sitting and a creator gets right
  within \`max_loop\` rounds (a function and its test, one endpoint, one section of the docs).
- \`needs\` only where a task builds on another's code (calls what it adds, changes what it writes).
  Every needless need makes the plan run in sequence. Tasks that only touch the same files need
  none: MAM does not start two tasks predicted to conflict at once.
- The task text is the creator's whole brief: what to change, where, and which test shows it works.
  A long specification goes in a file in the repository that the task names.
- At least one reviewer other than the creator, best another agent; \`human:NAME\` where a person
  must sign off. Set \`validate\` to the project's test command, and a \`budget\` when spend matters.

## Run and follow

\`\`\`sh
${mam} plan run <file> --json
${mam} plan status <plan-id> --json
${mam} plan list
${mam} plan resume <plan-id>
${mam} plan cancel <plan-id>
${mam} plan draft --goal "<goal>" --planner <session> --out <file>
\`\`\`

- \`plan run\` checks the whole file before it creates anything: a bad plan exits 64 with every
  problem one line (\`plan.yaml:7:5: tasks[1].needs[0]: unknown task 'valdate' …\`). Fix each and run
  again. A valid plan runs until every task has ended, which can take hours: if your shell tool has
  a time limit, start it in the background with its output in a file, and follow \`plan status\`.
- \`plan status\` shows each task's state, needs, session, loop round, landed commit, tokens and what
  it waits for. A failed task blocks the tasks that need it (each says why); the others go on. A task
  over its budget is \`budget_exceeded\`: its branch and worktree are kept for a person to look at.
- After a crash or a reboot, \`plan resume <plan-id>\`: nothing landed or passed is redone, no agent is
  asked twice. Never rerun \`plan run\` for a plan that exists.
- \`plan draft\` asks a planner session for a plan in this format and writes it to \`--out\`: read it,
  edit it, then run it.
${mcp(['plan_run', 'plan_status'])}

${exits(
  '0: every task landed.',
  "1: a task failed, was blocked or crossed a budget. Read `plan status <plan-id>` and the failed task's loop (`loop status`) for why.",
  `5: could not start (a named session missing or busy, no target branch). Check \`${mam} session status\`.`,
)}
`,
  };
}
