import { AGENT_NAMES, isAgentName, type AgentName } from '../agents';
import { UsageError } from '../base/errors';
import { nameProblem, printable } from '../base/ids';
import { custom, fieldPath, isRecord, reject, type Schema } from '../base/schema';
import { splitWords } from '../base/shellWords';

/**
 * Who does a part of a plan's task: its creator, its reviewers, its planner. Told apart at parse
 * time by form alone; whether a named session exists is the runner's to check (the registry is not
 * read while a file is parsed).
 */
export type Assignee =
  /**
   * A session of this agent is created for the task, in the task's worktree. `command` replaces the
   * agent's program (split into words, never given to a shell); the `shell` agent must have one.
   */
  | { kind: 'agent'; agent: AgentName; command?: string[] }
  /** A session that exists already, by its name (not an agent's name): the runner checks it runs. */
  | { kind: 'session'; name: string }
  /** A person, `human:NAME`: a reviewer or a planner who answers from VS Code or a terminal. */
  | { kind: 'person'; name: string };

export type AssigneeRole = 'creator' | 'reviewer' | 'planner';

const PERSON = 'human:';
const FORMS = `an agent (${AGENT_NAMES.filter((a) => a !== 'shell').join(', ')}), a session's name, human:NAME, or { agent: shell, command: "program args" }`;

/**
 * An assignee as the plan file writes it: `claude`, `my-session`, `human:alice`,
 * `{ agent: shell, command: "node agent.js" }` (or `{ agent: codex, command: "…" }`). A person
 * cannot be a creator: the review loop's creator is an agent's session that writes the code.
 */
export function assigneeSchema(role: AssigneeRole): Schema<Assignee> {
  return custom((v, at) => {
    if (typeof v === 'string') return fromName(v, role, at);
    if (isRecord(v)) return fromObject(v, at);
    return reject(at, `must be ${FORMS} (got ${shown(v)})`);
  });
}

function fromName(name: string, role: AssigneeRole, at: string): Assignee {
  if (name.startsWith(PERSON)) {
    if (role === 'creator') return reject(at, `a person ('${printable(name, 60)}') cannot be the creator: the creator is an agent's session that writes the code; name an agent or a session`);
    const person = name.slice(PERSON.length);
    const problem = nameProblem(person, "person's name");
    return problem ? reject(at, problem) : { kind: 'person', name: person };
  }
  if (name === 'shell') return reject(at, 'the shell agent runs a program: write { agent: shell, command: "program args" }');
  if (isAgentName(name)) return { kind: 'agent', agent: name };
  const problem = nameProblem(name, 'session name');
  if (problem) return reject(at, `${problem}; an assignee is ${FORMS}`);
  return { kind: 'session', name };
}

function fromObject(v: Record<string, unknown>, at: string): Assignee {
  for (const key of Object.keys(v)) {
    if (key !== 'agent' && key !== 'command') reject(at, `unknown key '${printable(key, 40)}' (an agent is written { agent: NAME, command: "program args" })`);
  }
  const agent = v.agent;
  if (typeof agent !== 'string') return reject(fieldPath(at, 'agent'), `must be one of ${AGENT_NAMES.join(', ')}`);
  if (!isAgentName(agent)) return reject(fieldPath(at, 'agent'), `unknown agent '${printable(agent, 40)}' (known: ${AGENT_NAMES.join(', ')})`);
  if (v.command === undefined) {
    return agent === 'shell' ? reject(at, '{ agent: shell } needs command: "program args"') : { kind: 'agent', agent };
  }
  const where = fieldPath(at, 'command');
  if (typeof v.command !== 'string') return reject(where, 'must be a command line (a string: "program args")');
  let words: string[];
  try {
    words = splitWords(v.command);
  } catch (err) {
    return reject(where, err instanceof UsageError ? err.message.replace(/: [\s\S]*$/, '') : String(err));
  }
  if (words.length === 0) return reject(where, 'is empty; name a program');
  return { kind: 'agent', agent, command: words };
}

function shown(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  return printable(String(v), 40);
}

/** An assignee as the plan file would write it (for status lines and views). */
export function assigneeText(a: Assignee): string {
  switch (a.kind) {
    case 'person':
      return `${PERSON}${a.name}`;
    case 'session':
      return a.name;
    case 'agent':
      return a.command ? `${a.agent} (${a.command.join(' ')})` : a.agent;
  }
}
