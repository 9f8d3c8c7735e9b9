import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ExitCode } from '../../src/core/base/errors';
import { mamSkills, skillFile } from '../../src/core/init/skills';
import {
  assigneeText, BUDGET_KEYS, criticalPath, DEFAULTS_KEYS, dependantsOf, parsePlan, PLAN_KEYS, PlanError, planProblems, readyTasks, TASK_KEYS, topologicalOrder,
  type Plan, type TaskGraph,
} from '../../src/core/plan/planFile';
import { PLAN_EXAMPLE, planFormat } from '../../src/core/plan/planFormat';
import { REPO_ROOT } from '../support/helpers';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/plans/signup.yaml');

/** The one line a bad plan is refused with (a PlanError, exit 64), and every problem planProblems finds. */
function refused(text: string): { message: string; problems: string[] } {
  try {
    parsePlan(text, 'plan.yaml');
  } catch (err) {
    assert.ok(err instanceof PlanError, String(err));
    assert.equal(err.exitCode, ExitCode.usage);
    assert.ok(!err.message.includes('\n'), 'one line');
    assert.deepEqual(err.problems, planProblems(text, 'plan.yaml'));
    assert.equal(err.message, err.problems[0]);
    return { message: err.message, problems: planProblems(text, 'plan.yaml') };
  }
  assert.fail(`accepted:\n${text}`);
}

/** A plan of lines (1-based in the messages below: `lines[0]` is line 1). */
const plan = (...lines: string[]) => `${lines.join('\n')}\n`;
const head = ['title: T', 'defaults: { creator: claude, reviewers: [codex] }', 'tasks:'];

describe('plan files (core/plan/planFile.ts)', () => {
  it("reads the issue's example: defaults applied to every task, the plan's own keys kept as written", () => {
    const read = parsePlan(fs.readFileSync(FIXTURE, 'utf8'), 'signup.yaml');
    const claude = { kind: 'agent', agent: 'claude' } as const;
    const codex = { kind: 'agent', agent: 'codex' } as const;
    const expected: Plan = {
      title: 'Email validation for signup',
      into: 'main',
      validate: 'npm test',
      max_parallel: 2,
      budget: { tokens: 2000000 },
      defaults: { creator: claude, reviewers: [codex], max_loop: 3 },
      tasks: [
        { id: 'validate', task: 'Add validate(email) to src/signup.js, with a test', needs: [], creator: claude, reviewers: [codex], max_loop: 3 },
        { id: 'errors', task: 'Make signup() return { ok: false, error } for invalid input', needs: [], creator: claude, reviewers: [codex], max_loop: 3 },
        { id: 'docs', task: 'Document validate() in README.md', needs: ['validate', 'errors'], creator: claude, reviewers: [{ kind: 'person', name: 'alice' }], max_loop: 3 },
      ],
    };
    assert.deepEqual(read, expected);
    assert.deepEqual(JSON.parse(JSON.stringify(read)), expected, 'plain data: it survives JSON as it is');
    read.tasks[0]!.reviewers.push({ kind: 'agent', agent: 'gemini' });
    assert.deepEqual(read.tasks[1]!.reviewers, [codex], 'no two tasks share a default');
  });

  it('the defaults a plan leaves out; every kind of assignee; a task overriding the defaults', () => {
    const read = parsePlan(plan(
      'title: Small',
      'tasks:',
      '  - id: one',
      '    task: |',
      '      Do one thing.',
      '      Then another.',
      '    creator: my-creator',
      '    reviewers: [gemini, human:alice, reviewer.2, { agent: shell, command: "node \'my agent.js\' --mode reviewer" }]',
      '    planner: human:bob',
      '    max_loop: 5',
      '    budget: { tokens: 100000, cost_usd: 2.5 }',
      '  - id: 2',
      '    task: Two',
      '    needs: [one]',
      '    creator: { agent: codex, command: /opt/codex-beta/bin/codex }',
      '    reviewers: [claude]',
    ), 'small.yaml');
    assert.equal(read.max_parallel, 2);
    assert.equal('into' in read || 'validate' in read || 'budget' in read, false);
    assert.deepEqual(read.defaults, { max_loop: 3 });
    assert.deepEqual(read.tasks[0], {
      id: 'one', task: 'Do one thing.\nThen another.\n', needs: [], creator: { kind: 'session', name: 'my-creator' },
      reviewers: [{ kind: 'agent', agent: 'gemini' }, { kind: 'person', name: 'alice' }, { kind: 'session', name: 'reviewer.2' }, { kind: 'agent', agent: 'shell', command: ['node', 'my agent.js', '--mode', 'reviewer'] }],
      planner: { kind: 'person', name: 'bob' }, max_loop: 5, budget: { tokens: 100000, cost_usd: 2.5 },
    });
    assert.deepEqual(read.tasks[1], { id: '2', task: 'Two', needs: ['one'], creator: { kind: 'agent', agent: 'codex', command: ['/opt/codex-beta/bin/codex'] }, reviewers: [{ kind: 'agent', agent: 'claude' }], max_loop: 3 });
    assert.deepEqual(read.tasks[0]!.reviewers.map(assigneeText), ['gemini', 'human:alice', 'reviewer.2', 'shell (node my agent.js --mode reviewer)']);
  });

  it('refuses each broken rule in one line: the file, line:column, the field, what is wrong', () => {
    const cases: Array<[string, string]> = [
      // An unknown need, named with the tasks there are.
      [plan(...head, '  - id: validate', '    task: V', '  - id: errors', '    task: E', '    needs:', '      - valdate', '  - id: docs', '    task: D'),
        "plan.yaml:9:9: tasks[1].needs[0]: unknown task 'valdate' (known: validate, errors, docs)"],
      // A cycle, named along its needs.
      [plan(...head, '  - id: a', '    task: A', '    needs: [c]', '  - id: b', '    task: B', '    needs: [a]', '  - id: c', '    task: C', '    needs: [b]'),
        'plan.yaml:6:13: tasks[0].needs[0]: tasks form a cycle: a → c → b → a'],
      [plan(...head, '  - id: a', '    task: A', '    needs: [a]'), "plan.yaml:6:13: tasks[0].needs[0]: a task cannot need itself ('a')"],
      [plan(...head, '  - id: a', '    task: A', '  - id: a', '    task: B'), "plan.yaml:6:9: tasks[1].id: duplicate id 'a' (tasks[0] has it)"],
      [plan(...head, '  - id: A b', '    task: A'), "plan.yaml:4:9: tasks[0].id: 'A b' is not a task id: up to 40 lowercase letters, digits, '.', '_' and '-', starting with a letter or a digit"],
      [plan(...head, '  - task: A'), 'plan.yaml:4:5: tasks[0].id: is missing; give the task a short id (validate, docs-2)'],
      [plan(...head, '  - id: a', '    task: "  "'), 'plan.yaml:5:11: tasks[0].task: is empty; say what to do'],
      [plan(...head, '  - id: a', '    task: "A\\e[2J"'), "plan.yaml:5:11: tasks[0].task: holds a control character ('\\x1b')"],
      [plan(...head, '  - id: a', '    task: !!binary aGVsbG8='), 'plan.yaml:5:20: tasks[0].task: must be text: what to do'],
      [plan(...head, '  - id: a', `    task: ${'x'.repeat(20_001)}`), 'plan.yaml:5:11: tasks[0].task: is 20001 characters long; the limit is 20000: put longer details in a file the task names'],
      [plan(...head, '  - id: a', '    task: A', '    needs: b'), 'plan.yaml:6:12: tasks[0].needs: must be a list of task ids, e.g. [validate, errors]'],
      [plan(...head, '  - id: a', '    task: A', '    reviewers: codex'), 'plan.yaml:6:16: tasks[0].reviewers: must be a list, e.g. [codex] or [codex, human:alice]'],
      // A bad agent, and something that is no assignee at all.
      [plan(...head, '  - id: a', '    task: A', '    creator: { agent: shel }'), "plan.yaml:6:23: tasks[0].creator.agent: unknown agent 'shel' (known: claude, codex, gemini, opencode, copilot, qwen, hermes, grok, agy, shell)"],
      [plan(...head, '  - id: a', '    task: A', '    creator: 42'),
        'plan.yaml:6:14: tasks[0].creator: must be an agent (claude, codex, gemini, opencode, copilot, qwen, hermes, grok, agy), a session\'s name, human:NAME, or { agent: shell, command: "program args" } (got 42)'],
      [plan(...head, '  - id: a', '    task: A', '    creator: shell'), 'plan.yaml:6:14: tasks[0].creator: the shell agent runs a program: write { agent: shell, command: "program args" }'],
      [plan(...head, '  - id: a', '    task: A', '    creator: { agent: shell }'), 'plan.yaml:6:14: tasks[0].creator: { agent: shell } needs command: "program args"'],
      [plan(...head, '  - id: a', '    task: A', '    creator: human:alice'),
        "plan.yaml:6:14: tasks[0].creator: a person ('human:alice') cannot be the creator: the creator is an agent's session that writes the code; name an agent or a session"],
      [plan(...head, '  - id: a', '    task: A', '    reviewers: [my/session]'),
        "plan.yaml:6:17: tasks[0].reviewers[0]: session name 'my/session' contains '/'; use only letters, digits, '.', '_' and '-'; an assignee is an agent (claude, codex, gemini, opencode, copilot, qwen, hermes, grok, agy), a session's name, human:NAME, or { agent: shell, command: \"program args\" }"],
      [plan(...head, '  - id: a', '    task: A', '    reviewers: [codex, codex]'), "plan.yaml:6:24: tasks[0].reviewers[1]: 'codex' is named twice"],
      // A typo in a key never passes silently.
      [plan(...head, '  - id: a', '    task: A', '    need: [b]'), "plan.yaml:6:5: tasks[0]: unknown key 'need'; did you mean 'needs'?"],
      [plan('title: T', 'paralel: 3', 'tasks: []'), "plan.yaml:2:1: unknown key 'paralel' (known: title, into, validate, max_parallel, budget, defaults, tasks)"],
      // Every task has a creator and a reviewer once the defaults are applied.
      [plan('title: T', 'defaults: { creator: claude }', 'tasks:', '  - id: a', '    task: A'), 'plan.yaml:4:5: tasks[0]: no reviewers; name them here (reviewers: [codex]) or in defaults'],
      [plan('title: T', 'tasks:', '  - id: a', '    task: A', '    reviewers: [codex]'), 'plan.yaml:3:5: tasks[0]: no creator; name one here (creator: claude) or in defaults'],
      [plan(...head, '  - id: a', '    task: A', '    reviewers: []'), 'plan.yaml:6:16: tasks[0].reviewers: is empty; name at least one reviewer'],
      [plan('title: T', 'max_parallel: 0', ...head.slice(1), '  - id: a', '    task: A'), 'plan.yaml:2:15: max_parallel: must be a whole number from 1 to 16'],
      [plan('title: T', 'max_parallel: 2.5', ...head.slice(1), '  - id: a', '    task: A'), 'plan.yaml:2:15: max_parallel: must be a whole number from 1 to 16'],
      [plan('title: T', 'budget: {}', ...head.slice(1), '  - id: a', '    task: A'), 'plan.yaml:2:9: budget: names neither tokens nor cost_usd'],
      // (an unclosed quote runs to the end of the file, where the parser notices it)
      [plan('title: T', 'validate: "npm test', ...head.slice(1), '  - id: a', '    task: A'), 'plan.yaml:7:1: not valid YAML: Missing closing "quote'],
      [plan('title: T', "validate: npm 'test", ...head.slice(1), '  - id: a', '    task: A'), "plan.yaml:2:11: validate: unterminated ' in command (quotes as in a shell)"],
      [plan('title: T', 'into: -main', ...head.slice(1), '  - id: a', '    task: A'), "plan.yaml:2:7: into: '-main' is not a branch name"],
      [plan('title: T', ...head.slice(1), '  - id: a', '    task: A', '    max_loop: 0'), 'plan.yaml:6:15: tasks[0].max_loop: must be a whole number ≥ 1'],
      [plan('defaults: { creator: claude, reviewers: [codex] }', 'tasks:', '  - id: a', '    task: A'), 'plan.yaml:1:1: title: is missing; name the plan in one line'],
      [plan('title: T', 'tasks: []'), 'plan.yaml:2:8: tasks: is empty; a plan has at least one task'],
      [plan('- title: T'), 'plan.yaml:1:1: must be a mapping (keys title, into, validate, max_parallel, budget, defaults, tasks)'],
      ['', 'plan.yaml:1:1: the plan is empty; it needs at least a title and tasks'],
      // YAML itself: the parser's place, and a word for the mistake a task's text invites.
      [plan(...head, '  - id: a', '    task: Make signup() return { ok: false } for bad input'),
        'plan.yaml:5:11: not valid YAML: YAML reads \': \' in this value as the start of a nested mapping: put the value in quotes (task: "…"), or fix the indentation'],
      [plan(...head, '  - id: a', '    task: A', '    needs: [b'), 'plan.yaml:7:1: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]'],
      [plan('title: T', 'title: U'), 'plan.yaml:2:1: not valid YAML: Map keys must be unique'],
      [plan('title: T', '---', 'title: U'), "plan.yaml:2:1: not valid YAML: a plan is one YAML document; a second '---' starts another"],
    ];
    assert.deepEqual(cases.map(([text]) => refused(text).message), cases.map(([, message]) => message));
  });

  it('control characters in what the user wrote are shown, never obeyed', () => {
    assert.equal(refused(plan(...head, '  - id: a', '    task: A', '    needs: ["b\\e]0;owned\\a"]')).message, "plan.yaml:6:13: tasks[0].needs[0]: unknown task 'b\\x1b]0;owned\\x07' (known: a)");
    assert.equal(refused(plan(...head, '  - id: a', '    task: A', '    "x\\e[2J": 1')).message, "plan.yaml:6:5: tasks[0]: unknown key 'x\\x1b[2J' (known: id, task, needs, creator, reviewers, planner, max_loop, budget)");
    assert.equal(refused(plan('title: "A\\nB"', ...head.slice(1), '  - id: a', '    task: A')).message, "plan.yaml:1:8: title: must be one line without control characters (holds '\\x0a')");
    assert.match(planProblems('title: T\n', 'my\u001b[31mplan.yaml')[0]!, /^my\\x1b\[31mplan\.yaml:1:1: /);
  });

  it('planProblems names every problem at once, in the order of the file', () => {
    const problems = refused(plan(
      'title: T',
      'max_parallel: 17',
      'defaults: { creator: { agent: shel }, reviewers: [codex] }',
      'tasks:',
      '  - id: validate',
      '    task: V',
      '    need: [errors]',
      '  - id: errors',
      '    task: E',
      '    needs: [valdate]',
      '  - id: validate',
      '    task: again',
    )).problems;
    assert.deepEqual(problems, [
      'plan.yaml:2:15: max_parallel: must be a whole number from 1 to 16',
      "plan.yaml:3:31: defaults.creator.agent: unknown agent 'shel' (known: claude, codex, gemini, opencode, copilot, qwen, hermes, grok, agy, shell)",
      "plan.yaml:7:5: tasks[0]: unknown key 'need'; did you mean 'needs'?",
      "plan.yaml:10:13: tasks[1].needs[0]: unknown task 'valdate' (known: validate, errors)",
      "plan.yaml:11:9: tasks[2].id: duplicate id 'validate' (tasks[0] has it)",
    ]);
    assert.deepEqual(planProblems(fs.readFileSync(FIXTURE, 'utf8'), 'signup.yaml'), []);
  });

  it('a file too large is refused before it is parsed', () => {
    assert.deepEqual(planProblems(`title: ${'x'.repeat(1_000_001)}\n`, 'big.yaml'), ['big.yaml: the plan is 1000009 bytes; a plan file holds at most 1000000']);
  });
});

describe('what teaches the format (docs/plans.md, core/plan/planFormat.ts, the mam-plans skill)', () => {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs/plans.md'), 'utf8');
  const fixture = fs.readFileSync(FIXTURE, 'utf8');

  it('their example is the fixture, and parses', () => {
    assert.deepEqual(parsePlan(PLAN_EXAMPLE, 'example.yaml'), parsePlan(fixture, 'signup.yaml'));
    assert.ok(doc.includes(`\`\`\`yaml\n${fixture}\`\`\``), 'docs/plans.md shows the fixture as it is');
  });

  it('they name every key a plan may hold', () => {
    for (const key of [...PLAN_KEYS, ...DEFAULTS_KEYS, ...TASK_KEYS, ...BUDGET_KEYS]) {
      assert.ok(doc.includes(`\`${key}\``), `docs/plans.md names ${key}`);
      assert.ok(planFormat().includes(`\`${key}\``) || planFormat().includes(`${key}: `), `planFormat names ${key}`);
    }
    const skill = mamSkills('/opt/mam/dist/cli.js', '/w').find((s) => s.name === 'mam-plans')!;
    assert.ok(skillFile(skill).includes(planFormat()), 'the skill carries the format');
  });
});

describe('the task graph (core/plan/planGraph.ts)', () => {
  // a ← b, a ← c, {b, c} ← d: the diamond; e stands alone.
  const diamond: TaskGraph = { tasks: [{ id: 'd', needs: ['b', 'c'] }, { id: 'b', needs: ['a'] }, { id: 'c', needs: ['a'] }, { id: 'a', needs: [] }, { id: 'e', needs: [] }] };
  const example = parsePlan(fs.readFileSync(FIXTURE, 'utf8'), 'signup.yaml');

  it('orders every task after what it needs, the file deciding among the free ones', () => {
    assert.deepEqual(topologicalOrder(diamond), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(topologicalOrder(example), ['validate', 'errors', 'docs']);
    assert.throws(() => topologicalOrder({ tasks: [{ id: 'x', needs: ['y'] }, { id: 'y', needs: ['x'] }] }), /x, y cannot be ordered/);
  });

  it('ready: every need landed, not landed, running or finished itself', () => {
    const none = new Set<string>();
    assert.deepEqual(readyTasks(diamond, none, none), ['a', 'e']);
    assert.deepEqual(readyTasks(diamond, new Set(['a']), new Set(['e'])), ['b', 'c']);
    assert.deepEqual(readyTasks(diamond, new Set(['a', 'b']), new Set(['c'])), ['e']);
    assert.deepEqual(readyTasks(diamond, new Set(['a', 'b', 'c', 'e']), none), ['d']);
    assert.deepEqual(readyTasks(diamond, new Set(['a', 'b']), none, new Set(['c', 'e'])), [], 'c failed: d waits for it forever');
    assert.deepEqual(readyTasks(example, new Set(['validate']), new Set(['errors'])), []);
    assert.deepEqual(readyTasks(example, new Set(['validate', 'errors']), none), ['docs']);
  });

  it('dependants: everything a failure blocks, through other tasks too', () => {
    assert.deepEqual(dependantsOf(diamond, 'a'), ['d', 'b', 'c']);
    assert.deepEqual(dependantsOf(diamond, 'b'), ['d']);
    assert.deepEqual(dependantsOf(diamond, 'd'), []);
    assert.deepEqual(dependantsOf(example, 'errors'), ['docs']);
  });

  it('critical path: the longest chain of needs, by task count or by durations', () => {
    assert.deepEqual(criticalPath(diamond), ['a', 'b', 'd']);
    assert.deepEqual(criticalPath(diamond, new Map([['a', 1], ['b', 1], ['c', 5], ['d', 1], ['e', 2]])), ['a', 'c', 'd']);
    assert.deepEqual(criticalPath(diamond, new Map([['a', 1], ['b', 1], ['c', 1], ['d', 1], ['e', 4]])), ['e'], 'one long task alone outlasts the chain');
    assert.deepEqual(criticalPath(diamond, new Map([['a', 2], ['b', 2], ['d', 2], ['e', 5]])), ['a', 'c', 'd'], 'c, not yet measured, counts as the mean (2.75)');
    assert.deepEqual(criticalPath(example), ['validate', 'docs']);
    assert.deepEqual(criticalPath(example, new Map([['validate', 10], ['errors', 30], ['docs', 5]])), ['errors', 'docs']);
  });
});
