import { strict as assert } from 'node:assert';
import { PLAN_ID_PATTERN, newTaskState, type TaskState } from '../../src/core/plan/planState';
import { landedText, planDescription, taskDescription, waitingFor } from '../../src/views/plans/planText';
import { edgePath, edgePorts, layoutPlan, pathEdges } from '../../src/webview/planLayout';
import { PLAN_ID } from '../../src/webview/planProtocol';
import { isHostMessage, isPageMessage, isPageState } from '../../src/webview/reportProtocol';

const task = (id: string, patch: Partial<TaskState> = {}): TaskState => ({ ...newTaskState(id), ...patch });

describe('the plan page and the Plans view: the layout of the graph, the words, the messages', () => {
  describe('layoutPlan: columns by depth, rows by what each task needs', () => {
    it('the issue’s plan: validate and errors first, docs after both', () => {
      const layout = layoutPlan([{ id: 'validate', needs: [] }, { id: 'errors', needs: [] }, { id: 'docs', needs: ['validate', 'errors'] }]);
      assert.deepEqual([...layout.at], [['validate', { column: 0, row: 0 }], ['errors', { column: 0, row: 1 }], ['docs', { column: 1, row: 0 }]]);
      assert.deepEqual([layout.columns, layout.rows], [2, 2]);
      assert.deepEqual(layout.edges, [{ from: 'validate', to: 'docs' }, { from: 'errors', to: 'docs' }]);
    });

    it('a task sits one column right of the deepest task it needs, and a column is ordered by the rows of what its tasks need', () => {
      // c needs b (row 1), d needs a (row 0): d above c in column 1 though c comes first in the file; e needs c and a: column 2.
      const layout = layoutPlan([{ id: 'a', needs: [] }, { id: 'b', needs: [] }, { id: 'c', needs: ['b'] }, { id: 'd', needs: ['a'] }, { id: 'e', needs: ['c', 'a'] }]);
      assert.deepEqual(Object.fromEntries(layout.at), { a: { column: 0, row: 0 }, b: { column: 0, row: 1 }, d: { column: 1, row: 0 }, c: { column: 1, row: 1 }, e: { column: 2, row: 0 } });
    });

    it('never loops on a graph that is not one: an unknown need is left out, a cycle goes to a last column', () => {
      const layout = layoutPlan([{ id: 'a', needs: ['ghost'] }, { id: 'b', needs: ['c'] }, { id: 'c', needs: ['b'] }]);
      assert.deepEqual(Object.fromEntries(layout.at), { a: { column: 0, row: 0 }, b: { column: 1, row: 0 }, c: { column: 1, row: 1 } });
      assert.deepEqual(layout.edges, [{ from: 'c', to: 'b' }, { from: 'b', to: 'c' }]);
      assert.deepEqual(layoutPlan([]), { at: new Map(), columns: 0, rows: 0, edges: [] });
    });

    it('an edge leaves the needed card’s right side and enters the dependant’s left side, horizontally', () => {
      assert.equal(edgePath({ left: 0, top: 0, width: 100, height: 40 }, { left: 160, top: 60, width: 100, height: 40 }), 'M 100 20 C 130 20, 130 80, 160 80');
      assert.deepEqual([...pathEdges(['a', 'c', 'e'])], ['a→c', 'c→e']);
    });

    it('two edges into one card enter it at two points, the upper from the upper card; one edge at the middle', () => {
      const boxes: Record<string, { left: number; top: number; width: number; height: number }> = {
        validate: { left: 0, top: 0, width: 100, height: 60 },
        errors: { left: 0, top: 80, width: 100, height: 60 },
        docs: { left: 160, top: 0, width: 100, height: 60 },
      };
      const ports = edgePorts([{ from: 'errors', to: 'docs' }, { from: 'validate', to: 'docs' }], (id) => boxes[id]);
      assert.deepEqual(Object.fromEntries(ports), { 'errors→docs': { y1: 110, y2: 40 }, 'validate→docs': { y1: 30, y2: 20 } });
    });
  });

  describe('the words: state first, then what the task waits for, its commit and rounds, why it ended', () => {
    const plan = { tasks: [task('validate', { state: 'landed' }), task('errors', { state: 'running' }), task('docs')] };

    it('a pending task says which of its needs have not landed', () => {
      assert.deepEqual(waitingFor(plan, ['validate', 'errors'], plan.tasks[2]!), ['errors']);
      assert.equal(taskDescription(task('docs'), ['validate', 'errors']), 'pending · after validate, errors');
      assert.equal(taskDescription(task('docs'), []), 'pending · ready');
    });

    it('a running task says its step, its round in review, and the tasks it may conflict with', () => {
      assert.equal(taskDescription(task('a', { state: 'running', step: 'worktree' }), []), 'running · making its worktree');
      assert.equal(taskDescription(task('a', { state: 'running', step: 'loop' }), [], 0), 'running · review loop');
      assert.equal(taskDescription(task('a', { state: 'running', step: 'loop' }), [], 2), 'running · review round 2');
      const waits = task('a', { state: 'running', step: 'queue', waits_for: ['b'] });
      assert.deepEqual(waitingFor(plan, [], waits), ['b']);
      assert.equal(taskDescription(waits, ['b']), 'running · merge queue · after b (may conflict)');
    });

    it('a landed task says its commit and rounds; one that ended otherwise says why, last', () => {
      assert.equal(taskDescription(task('a', { state: 'landed', landed_commit: '0123456789abcdef' }), [], 2), 'landed · 01234567 · 2 rounds');
      assert.equal(taskDescription(task('a', { state: 'failed', why: 'its loop l-1 did not pass (max_loop)', loop_id: 'l-1' }), [], 1), 'failed · 1 round · its loop did not pass (max_loop)', 'the loop’s ID is the row’s link, not its words');
      assert.equal(taskDescription(task('a', { state: 'blocked', why: 'needs b, which failed' }), []), 'blocked · needs b, which failed');
      assert.equal(taskDescription(task('a', { state: 'budget_exceeded', why: 'spent 9 tokens, over its budget of 1' }), [], 1), 'over budget · 1 round · spent 9 tokens, over its budget of 1');
      assert.equal(taskDescription(task('a', { state: 'failed', why: 'a\u001b[31m red\nline' }), []), 'failed · a\\x1b[31m red\\x0aline', 'control characters shown, never obeyed');
    });

    it('a plan: its state, then how many tasks landed; a runner that died says so', () => {
      assert.equal(landedText(plan), '1 of 3 landed');
      assert.equal(planDescription({ status: 'running', tasks: plan.tasks }, { kind: 'live', pid: 1, host: '' }), 'running · 1 of 3 landed');
      assert.equal(planDescription({ status: 'running', tasks: plan.tasks }, { kind: 'stopped', pid: 1 }), 'running · 1 of 3 landed · runner stopped');
      assert.equal(planDescription({ status: 'landed', tasks: plan.tasks }), 'landed · 3 tasks');
      assert.equal(planDescription({ status: 'failed', tasks: plan.tasks }), 'failed · 1 of 3 landed');
    });
  });

  describe('the messages', () => {
    it('the page’s plan ID pattern is the store’s', () => {
      assert.equal(PLAN_ID.source, PLAN_ID_PATTERN.source);
    });

    it('a plan page asks for a task’s loop report by a loop ID only, and for its run log with nothing else', () => {
      assert.ok(isPageMessage({ type: 'openLoop', loopId: 'l-20261130T140310Z-1a2b3c4d' }));
      for (const bad of ['', 'l-', '../l-1', 'l-1/../../x', 'p-20261130T140310Z-abcdef', 7]) assert.ok(!isPageMessage({ type: 'openLoop', loopId: bad }), String(bad));
      assert.ok(isPageMessage({ type: 'openPlanLog' }));
      assert.ok(!isPageMessage({ type: 'openPlanLog', file: '/etc/passwd' }));
    });

    it('the page keeps the loop or the plan it shows across a reload', () => {
      assert.ok(isPageState({ folderIndex: 0, planId: 'p-20261130T140310Z-abcdef' }));
      assert.ok(isPageState({ folderIndex: 0, loopId: 'l-1' }));
      assert.ok(!isPageState({ folderIndex: 0, planId: 'p-../../x' }));
    });

    it('a plan model is checked on arrival like a loop’s', () => {
      const plan = {
        folderIndex: 0,
        plan: { id: 'p-20261130T140310Z-abcdef', title: 'T', status: 'running', reason: null, into: 'main', max_parallel: 2, tokens: 0, landed: '0 of 1 landed', runner: 'starting', created_at: 'x', updated_at: 'x' },
        tasks: [{ id: 'a', task: 'A', state: 'pending', detail: 'ready', needs: [], loop_id: null, round: null, landed_commit: null, tokens: 0, creator: null, reviewers: [], why: null }],
        critical: ['a'],
        now: 'x',
      };
      assert.ok(isHostMessage({ type: 'plan', plan }));
      assert.ok(!isHostMessage({ type: 'plan', plan: { ...plan, tasks: [{ ...plan.tasks[0], loop_id: 'javascript:x' }] } }));
      assert.ok(!isHostMessage({ type: 'plan', plan: { ...plan, plan: { ...plan.plan, id: 'nope' } } }));
    });
  });
});
