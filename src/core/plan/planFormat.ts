import { AGENT_NAMES } from '../agents';
import { DEFAULT_MAX_LOOP, DEFAULT_MAX_PARALLEL, MAX_PARALLEL_LIMIT } from './planFile';

/**
 * The plan file's format as an agent needs it: for the mam-plans skill, and for the brief of a
 * planner asked to draft a plan. docs/plans.md is the full reference for people; this is its
 * core, built from the parser's own constants so the two cannot drift apart.
 */

/** The example, as valid YAML (the second task's text holds ': ', so it is quoted). */
export const PLAN_EXAMPLE = `title: Email validation for signup
into: main
validate: npm test
max_parallel: 2
budget: { tokens: 2000000 }
defaults: { creator: claude, reviewers: [codex], max_loop: 3 }
tasks:
  - id: validate
    task: "Add validate(email) to src/signup.js, with a test"
  - id: errors
    task: "Make signup() return { ok: false, error } for invalid input"
  - id: docs
    task: Document validate() in README.md
    needs: [validate, errors]
    reviewers: [human:alice]
`;

export function planFormat(): string {
  const agents = AGENT_NAMES.filter((a) => a !== 'shell').join(', ');
  return `\`\`\`yaml
${PLAN_EXAMPLE}\`\`\`

- \`title\` (required): the plan's name, one line.
- \`into\`: the branch every task lands on (default: the branch checked out in the primary worktree).
- \`validate\`: the command the merge queue runs before each landing, e.g. \`npm test\` (split into words
  as a shell would, never run by one; optional).
- \`max_parallel\`: tasks at once, 1 to ${MAX_PARALLEL_LIMIT} (default ${DEFAULT_MAX_PARALLEL}).
- \`budget\`: \`{ tokens: N, cost_usd: X }\` (either or both) for the whole plan; a task may have its own.
- \`defaults\`: \`creator\`, \`reviewers\`, \`planner\`, \`max_loop\` (review rounds, default ${DEFAULT_MAX_LOOP}) for every
  task that does not name its own.
- \`tasks\` (required): each has \`id\` (unique; lowercase letters, digits, \`.\`, \`_\`, \`-\`; up to 40),
  \`task\` (what to do; in quotes when it holds \`: \`), and may have \`needs\` (ids of tasks that must
  land first), \`creator\`, \`reviewers\` (a list), \`planner\`, \`max_loop\`, \`budget\`.
- An assignee (\`creator\`, each of \`reviewers\`, \`planner\`) is one of:
  - an agent's name, and a new session of it is made for the task:
    ${agents};
  - the name of a session that exists;
  - \`human:NAME\`, a person (as reviewer or planner);
  - \`{ agent: shell, command: "program args" }\`, any program.
- Refused, each problem one line with its place (\`plan.yaml:7:5: tasks[1].needs[0]: unknown task …\`):
  an unknown key, a duplicate id, a need of an unknown task or of itself, a cycle of needs, a task
  left without a creator or a reviewer after the defaults.`;
}
