import { UsageError } from '../base/errors';
import { printable } from '../base/ids';
import { int, isRecord, num, SchemaError, str, type Schema } from '../base/schema';
import { assigneeSchema, assigneeText, type Assignee } from './assignee';
import { branchName, commandLine, idText, oneLine, taskId, taskText, unknownKey } from './planFields';
import { findCycles } from './planGraph';
import { PlacedYaml, pathText, segmentsOf, type PlacedProblem, type Segment } from './yamlPlaces';

/**
 * A plan file (docs/plans.md): a goal split into tasks that need each other, each to be created,
 * reviewed and landed by a team the file names. This module reads one into a typed Plan, or names
 * every problem in one line with its place (`plan.yaml:7:5: tasks[1].needs[0]: unknown task …`).
 * It reads no registry and touches no disk: whether a named session exists or the target branch
 * is there is the runner's to check.
 */

export type { Assignee } from './assignee';
export { assigneeText } from './assignee';
export { criticalPath, dependantsOf, findCycles, readyTasks, topologicalOrder, type TaskGraph } from './planGraph';
export { TASK_ID_PATTERN, TASK_TEXT_LIMIT } from './planFields';

export const DEFAULT_MAX_PARALLEL = 2;
export const MAX_PARALLEL_LIMIT = 16;
export const DEFAULT_MAX_LOOP = 3;
/** A plan file larger than this is refused before it is parsed. */
export const PLAN_SIZE_LIMIT = 1_000_000;

export const PLAN_KEYS = ['title', 'into', 'validate', 'max_parallel', 'budget', 'defaults', 'tasks'] as const;
export const DEFAULTS_KEYS = ['creator', 'reviewers', 'planner', 'max_loop'] as const;
export const TASK_KEYS = ['id', 'task', 'needs', 'creator', 'reviewers', 'planner', 'max_loop', 'budget'] as const;
export const BUDGET_KEYS = ['tokens', 'cost_usd'] as const;

/** A limit on what a task, or the whole plan, may spend; at least one of the two is set. */
export interface PlanBudget {
  /** Tokens, as the agents' own stores count them (input, output, cache). */
  tokens?: number;
  /** Estimated cost in US dollars, where the models' prices are known. */
  cost_usd?: number;
}

/** What every task takes unless it names its own. */
export interface PlanDefaults {
  creator?: Assignee;
  reviewers?: Assignee[];
  planner?: Assignee;
  max_loop: number;
}

/** One task, the defaults applied: everything the runner needs to run it. */
export interface PlanTask {
  id: string;
  /** What to do, as written (the creator's task in the review loop). */
  task: string;
  /** The tasks that must have landed before this one starts, in the file's order; [] when none. */
  needs: string[];
  creator: Assignee;
  reviewers: Assignee[];
  planner?: Assignee;
  /** Review rounds before the loop counts as not passed. */
  max_loop: number;
  budget?: PlanBudget;
}

export interface Plan {
  title: string;
  /** The branch tasks land on; absent: the branch checked out in the primary worktree (the runner resolves it). */
  into?: string;
  /** The merge queue's validation, as written (a command line the queue splits into words, never a shell's). */
  validate?: string;
  max_parallel: number;
  /** For the whole plan; a task may have its own as well. */
  budget?: PlanBudget;
  defaults: PlanDefaults;
  /** In the file's order. */
  tasks: PlanTask[];
}

/** A plan that cannot be run: `message` is the first problem, `problems` all of them (exit 64). */
export class PlanError extends UsageError {
  constructor(readonly problems: readonly string[]) {
    super(problems[0] ?? 'the plan is not valid', 'bad_plan');
  }
}

/** The plan in `text` (`fileName` is how problems name the file), or a PlanError naming every problem. */
export function parsePlan(text: string, fileName: string): Plan {
  const { plan, problems } = readPlan(text, fileName);
  if (!plan || problems.length > 0) throw new PlanError(problems);
  return plan;
}

/** Every problem of the plan in `text`, each one line with its place, in the file's order; [] when it is valid. */
export function planProblems(text: string, fileName: string): string[] {
  return readPlan(text, fileName).problems;
}

function readPlan(text: string, fileName: string): { plan?: Plan; problems: string[] } {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > PLAN_SIZE_LIMIT) return { problems: [`${printable(fileName, 200)}: the plan is ${bytes} bytes; a plan file holds at most ${PLAN_SIZE_LIMIT}`] };
  const parsed = PlacedYaml.parsed(text, fileName);
  if ('problems' in parsed) return { problems: parsed.problems };
  const r = new Reader(parsed.yaml);
  const plan = readTop(r, parsed.yaml.value);
  return { ...(plan && r.problems.length === 0 ? { plan } : {}), problems: r.sorted() };
}

/** Notes problems as it reads, so that one pass finds them all (at most one per field). */
class Reader {
  private readonly found: PlacedProblem[] = [];
  constructor(private readonly yaml: PlacedYaml) {}

  get problems(): readonly PlacedProblem[] {
    return this.found;
  }

  fail(path: readonly Segment[], why: string, atKey?: string): undefined {
    this.found.push(this.yaml.problem(path, why, atKey === undefined ? {} : { atKey }));
    return undefined;
  }

  /** `value` as `schema` reads it, or undefined with its problem noted. */
  read<T>(schema: Schema<T>, value: unknown, path: readonly Segment[]): T | undefined {
    try {
      return schema.read(value, pathText(path));
    } catch (err) {
      if (!(err instanceof SchemaError)) throw err;
      return this.fail(segmentsOf(err.field), err.why);
    }
  }

  /** A field that must be there: read, or noted as missing with `hint`. */
  required<T>(schema: Schema<T>, value: unknown, path: readonly Segment[], hint: string): T | undefined {
    return value === undefined || value === null ? this.fail(path, `is missing; ${hint}`) : this.read(schema, value, path);
  }

  /** A mapping holding none but `known` keys (each stranger noted at its key), or undefined when it is no mapping. */
  mapping(value: unknown, path: readonly Segment[], known: readonly string[], what: string): Record<string, unknown> | undefined {
    if (!isRecord(value)) return this.fail(path, `must be a mapping (${what})`);
    for (const key of Object.keys(value)) if (!known.includes(key)) this.fail(path, unknownKey(key, known), key);
    return value;
  }

  sorted(): string[] {
    return [...this.found].sort((a, b) => a.line - b.line || a.col - b.col).map((p) => p.text);
  }
}

function readTop(r: Reader, root: unknown): Plan | undefined {
  if (root === null || root === undefined) return r.fail([], 'the plan is empty; it needs at least a title and tasks');
  const top = r.mapping(root, [], PLAN_KEYS, `keys ${PLAN_KEYS.join(', ')}`);
  if (!top) return undefined;
  const title = r.required(oneLine(200), top.title, ['title'], 'name the plan in one line');
  const into = top.into === undefined ? undefined : r.read(branchName, top.into, ['into']);
  const validate = top.validate === undefined ? undefined : r.read(commandLine, top.validate, ['validate']);
  const maxParallel = top.max_parallel === undefined ? DEFAULT_MAX_PARALLEL : r.read(int({ min: 1, max: MAX_PARALLEL_LIMIT, why: `must be a whole number from 1 to ${MAX_PARALLEL_LIMIT}` }), top.max_parallel, ['max_parallel']);
  const budget = top.budget === undefined ? undefined : readBudget(r, top.budget, ['budget']);
  const defaults = top.defaults === undefined ? { max_loop: DEFAULT_MAX_LOOP } : readDefaults(r, top.defaults);
  const tasks = readTasks(r, top.tasks, defaults, top.defaults);
  if (title === undefined || maxParallel === undefined || !defaults || !tasks || r.problems.length > 0) return undefined;
  return {
    title,
    ...(into !== undefined ? { into } : {}),
    ...(validate !== undefined ? { validate } : {}),
    max_parallel: maxParallel,
    ...(budget ? { budget } : {}),
    defaults,
    tasks,
  };
}

function readDefaults(r: Reader, value: unknown): PlanDefaults | undefined {
  const path = ['defaults'];
  const d = r.mapping(value, path, DEFAULTS_KEYS, `keys ${DEFAULTS_KEYS.join(', ')}`);
  if (!d) return undefined;
  const creator = d.creator === undefined ? undefined : r.read(assigneeSchema('creator'), d.creator, [...path, 'creator']);
  const reviewers = d.reviewers === undefined ? undefined : readReviewers(r, d.reviewers, [...path, 'reviewers']);
  const planner = d.planner === undefined ? undefined : r.read(assigneeSchema('planner'), d.planner, [...path, 'planner']);
  const maxLoop = d.max_loop === undefined ? DEFAULT_MAX_LOOP : r.read(int({ min: 1 }), d.max_loop, [...path, 'max_loop']);
  if (maxLoop === undefined) return undefined;
  return { ...(creator ? { creator } : {}), ...(reviewers ? { reviewers } : {}), ...(planner ? { planner } : {}), max_loop: maxLoop };
}

/** A task as read, with what the graph rules need even when other fields of it are wrong. */
interface TaskDraft {
  index: number;
  id?: string;
  needs: Array<{ id: string; index: number }>;
  task?: PlanTask;
}

function readTasks(r: Reader, value: unknown, defaults: PlanDefaults | undefined, rawDefaults: unknown): PlanTask[] | undefined {
  if (value === undefined || value === null) return r.fail(['tasks'], 'is missing; list the tasks, each with an id and a task');
  if (!Array.isArray(value)) return r.fail(['tasks'], 'must be a list of tasks (each `- id: …` with a task)');
  if (value.length === 0) return r.fail(['tasks'], 'is empty; a plan has at least one task');
  const given = (key: string) => isRecord(rawDefaults) && rawDefaults[key] !== undefined;
  const drafts = value.map((v, i) => readTask(r, v, i, defaults, { creator: given('creator'), reviewers: given('reviewers') }));
  checkGraph(r, drafts);
  return drafts.every((d) => d.task) ? drafts.map((d) => d.task!) : undefined;
}

function readTask(r: Reader, value: unknown, index: number, defaults: PlanDefaults | undefined, inDefaults: { creator: boolean; reviewers: boolean }): TaskDraft {
  const path = ['tasks', index];
  const draft: TaskDraft = { index, needs: [] };
  const t = r.mapping(value, path, TASK_KEYS, 'id, task and the other keys of a task');
  if (!t) return draft;
  draft.id = r.required(taskId, t.id, [...path, 'id'], 'give the task a short id (validate, docs-2)');
  const task = r.required(taskText, t.task, [...path, 'task'], 'say what to do');
  if (t.needs !== undefined && t.needs !== null) {
    if (!Array.isArray(t.needs)) r.fail([...path, 'needs'], 'must be a list of task ids, e.g. [validate, errors]');
    else t.needs.forEach((n, j) => {
      const id = r.read(str({ min: 1, why: 'must be the id of another task' }), idText(n), [...path, 'needs', j]);
      if (id !== undefined) draft.needs.push({ id, index: j });
    });
  }
  const creator = t.creator === undefined ? copy(defaults?.creator) : r.read(assigneeSchema('creator'), t.creator, [...path, 'creator']);
  const reviewers = t.reviewers === undefined ? copy(defaults?.reviewers) : readReviewers(r, t.reviewers, [...path, 'reviewers']);
  const planner = t.planner === undefined ? copy(defaults?.planner) : r.read(assigneeSchema('planner'), t.planner, [...path, 'planner']);
  const maxLoop = t.max_loop === undefined ? defaults?.max_loop : r.read(int({ min: 1 }), t.max_loop, [...path, 'max_loop']);
  const budget = t.budget === undefined ? undefined : readBudget(r, t.budget, [...path, 'budget']);
  // Missing after the defaults, unless the field is there but wrong (already said).
  if (creator === undefined && t.creator === undefined && !inDefaults.creator) r.fail(path, 'no creator; name one here (creator: claude) or in defaults');
  if (reviewers === undefined && t.reviewers === undefined && !inDefaults.reviewers) r.fail(path, 'no reviewers; name them here (reviewers: [codex]) or in defaults');
  const needs = draft.needs.map((n) => n.id);
  if (draft.id !== undefined && task !== undefined && creator && reviewers && maxLoop !== undefined && (t.budget === undefined || budget)) {
    draft.task = { id: draft.id, task, needs, creator, reviewers, ...(planner ? { planner } : {}), max_loop: maxLoop, ...(budget ? { budget } : {}) };
  }
  return draft;
}

/** Ids unique, every need a known other task named once, no cycle. */
function checkGraph(r: Reader, drafts: readonly TaskDraft[]): void {
  const first = new Map<string, number>();
  for (const d of drafts) {
    if (d.id === undefined) continue;
    const seen = first.get(d.id);
    if (seen === undefined) first.set(d.id, d.index);
    else r.fail(['tasks', d.index, 'id'], `duplicate id '${d.id}' (tasks[${seen}] has it)`);
  }
  const known = [...first.keys()];
  const edges: Array<{ id: string; needs: string[] }> = [];
  for (const d of drafts) {
    const at = (j: number) => ['tasks', d.index, 'needs', j];
    const named = new Set<string>();
    const good: string[] = [];
    for (const n of d.needs) {
      if (n.id === d.id) r.fail(at(n.index), `a task cannot need itself ('${n.id}')`);
      else if (!first.has(n.id)) r.fail(at(n.index), `unknown task '${printable(n.id, 40)}' (known: ${known.join(', ')})`);
      else if (named.has(n.id)) r.fail(at(n.index), `'${n.id}' is named twice`);
      else good.push(n.id);
      named.add(n.id);
    }
    if (d.id !== undefined && first.get(d.id) === d.index) edges.push({ id: d.id, needs: good });
  }
  for (const cycle of findCycles({ tasks: edges })) {
    const from = drafts[first.get(cycle[0]!)!]!;
    const need = from.needs.find((n) => n.id === cycle[1])!;
    r.fail(['tasks', from.index, 'needs', need.index], `tasks form a cycle: ${cycle.join(' → ')}`);
  }
}

function readReviewers(r: Reader, value: unknown, path: readonly Segment[]): Assignee[] | undefined {
  if (!Array.isArray(value)) return r.fail(path, 'must be a list, e.g. [codex] or [codex, human:alice]');
  if (value.length === 0) return r.fail(path, 'is empty; name at least one reviewer');
  const out: Assignee[] = [];
  let wrong = false;
  value.forEach((v, i) => {
    const a = r.read(assigneeSchema('reviewer'), v, [...path, i]);
    if (a === undefined) {
      wrong = true;
    } else if (out.some((o) => assigneeText(o) === assigneeText(a))) {
      r.fail([...path, i], `'${printable(assigneeText(a), 60)}' is named twice`);
      wrong = true;
    } else {
      out.push(a);
    }
  });
  return wrong ? undefined : out;
}

function readBudget(r: Reader, value: unknown, path: readonly Segment[]): PlanBudget | undefined {
  const b = r.mapping(value, path, BUDGET_KEYS, 'tokens and/or cost_usd, e.g. { tokens: 2000000 }');
  if (!b) return undefined;
  if (b.tokens === undefined && b.cost_usd === undefined) return r.fail(path, 'names neither tokens nor cost_usd');
  const tokens = b.tokens === undefined ? undefined : r.read(int({ min: 1 }), b.tokens, [...path, 'tokens']);
  const cost = b.cost_usd === undefined ? undefined : r.read(num({ above: 0 }), b.cost_usd, [...path, 'cost_usd']);
  if ((b.tokens !== undefined && tokens === undefined) || (b.cost_usd !== undefined && cost === undefined)) return undefined;
  return { ...(tokens !== undefined ? { tokens } : {}), ...(cost !== undefined ? { cost_usd: cost } : {}) };
}

/** A default as a task's own, so that no two tasks share (and a runner never changes another's by) one object. */
function copy<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}
