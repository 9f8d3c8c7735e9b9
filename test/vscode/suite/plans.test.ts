import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import type { PlanState } from '../../../src/core/plan/planState';
import { buildPlanModel } from '../../../src/views/plans/planPage';
import type { PlansNode } from '../../../src/views/plans/plansTree';
import { isHostMessage, isPageMessage } from '../../../src/webview/reportProtocol';
import { waitFor } from '../waitFor';
import { CANCEL, Prompts } from './prompts';
import { cleanUp, fakeAgentCommand, mamApi } from './support';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.invalid' };
/** A command line as the plan file and MAM_AGENT_COMMAND_* take it: each word quoted. */
const words = (argv: string[]) => argv.map((w) => JSON.stringify(w)).join(' ');

/**
 * Plans in VS Code, run for real: the window's folder becomes a git checkout (for this file only;
 * its .git goes again afterwards), claude is the scripted creator (each task's work in a file
 * named after its worktree) and codex the scripted reviewer, as test/integration/plan.test.ts
 * points them; each plan runs in a `mam plan resume` process of its own, as a user's does, and the
 * view follows its state file.
 */
describe('plans in VS Code: Run Plan from the palette, the Plans view, the plan page, a failed and a blocked task, Cancel Plan, a bad plan, Draft Plan', function () {
  this.timeout(300_000);
  let api: MamApi;
  let ws: string;
  const prompts = new Prompts();
  const engine = () => api.host.current[0]!.engine;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();
  const plans = () => engine().core.plans.listing().plans;
  const writePlan = (name: string, text: string) => fs.writeFileSync(path.join(ws, name), text);
  /** Waits until the plan has ended and its runner process has let go of it. */
  const ended = (id: string, bound = 240_000) => waitFor(`plan ${id} to end`, () => {
    const p = engine().core.plans.get(id);
    return p && p.status !== 'running' && p.owner === null ? p : undefined;
  }, bound);
  const newPlan = async (before: ReadonlySet<string>) => waitFor('the new plan', () => plans().find((p) => !before.has(p.id)));
  /** The view's rows of a plan's tasks: id → [description, icon]. */
  const taskRows = async (planId: string) => {
    const kids = (await api.plans.getChildren({ kind: 'plan', folderIndex: 0, planId })) as PlansNode[];
    return new Map(kids.map((n) => {
      const item = api.plans.getTreeItem(n);
      return [String(item.label), [String(item.description), (item.iconPath as vscode.ThemeIcon).id]] as const;
    }));
  };

  before(async () => {
    api = await mamApi();
    prompts.install();
    Object.assign(process.env, GIT_ENV);
    // The plan's runner is a process of its own with the window's environment: claude and codex are the scripted agents.
    process.env.MAM_AGENT_COMMAND_CLAUDE = words(fakeAgentCommand('creator', ['--file', '@cwd']));
    process.env.MAM_AGENT_COMMAND_CODEX = words(fakeAgentCommand('reviewer', [], 'codex'));
    ws = fs.realpathSync(engine().workspace);
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(ws, 'feature.txt'), 'the start\n');
    git('add', 'feature.txt');
    git('commit', '-q', '-m', 'initial');
  });
  after(async () => {
    prompts.restore();
    delete process.env.MAM_AGENT_COMMAND_CLAUDE;
    delete process.env.MAM_AGENT_COMMAND_CODEX;
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await cleanUp(api);
    for (const name of ['.git', 'feature.txt', 'plan.yaml', 'failing.yaml', 'slow.yaml', 'resumed.yaml', 'bad.yaml', 'drafted.yaml', ...fs.readdirSync(ws).filter((n) => /^[0-9a-f]{6}-.*\.txt$/.test(n))]) fs.rmSync(path.join(ws, name), { recursive: true, force: true });
    for (const dir of ['plans', 'merge', 'worktrees']) fs.rmSync(path.join(ws, '.mam', dir), { recursive: true, force: true });
  });
  afterEach(() => {
    assert.deepEqual(prompts.errors.splice(0), [], 'no command reported an error');
    assert.deepEqual(prompts.answers.splice(0), [], 'every prepared answer was asked for');
  });

  let landedPlan: PlanState;

  it('the folder’s .mam/plans/ exists before its first plan, so that the file watcher follows the first plan’s own folder', () => {
    assert.equal(plans().length, 0);
    assert.ok(fs.statSync(path.join(ws, '.mam', 'plans')).isDirectory());
  });

  it('Run Plan… from the palette: the plan file picked from the folder; each task goes pending → running → landed in the view, in dependency order; the plan page opens; the status bar counts the running tasks', async () => {
    writePlan('plan.yaml', `title: Three changes
max_parallel: 2
defaults: { creator: claude, reviewers: [codex], max_loop: 2 }
tasks:
  - id: one
    task: Add the first line
  - id: two
    task: Add the second line
  - id: three
    task: Add the third line, after both
    needs: [one, two]
`);
    // What the view and the status bar show, each time the view is told something changed.
    const seen = new Map<string, string[]>();
    const bar = new Set<string>();
    let planId: string | undefined;
    let reading = Promise.resolve();
    const watch = api.plans.onDidChangeTreeData(() => {
      reading = reading.then(async () => {
        if (api.statusBar.visible) bar.add(api.statusBar.item.text);
        if (!planId) return;
        for (const [task, [description]] of await taskRows(planId)) {
          const states = seen.get(task) ?? [];
          if (states.at(-1) !== description) states.push(description);
          seen.set(task, states);
        }
      });
    });
    const before = new Set(plans().map((p) => p.id));
    try {
      const started = api.plans.onDidChangeTreeData(() => void (planId ??= plans().find((p) => !before.has(p.id))?.id));
      prompts.answers.push('plan.yaml');
      await vscode.commands.executeCommand('mam.runPlan');
      started.dispose();
      const [pick] = prompts.asked.splice(0);
      assert.equal(pick?.kind, 'pick');
      assert.equal(pick?.title, 'Run Plan');
      assert.deepEqual(pick?.items?.map((i) => i.label), ['$(file) plan.yaml', '$(folder-opened) Browse…']);
      const plan = await newPlan(before);
      planId ??= plan.id;
      assert.equal(plan.title, 'Three changes');
      // Its page opened beside, named by the plan.
      const panel = await waitFor('the plan page', () => api.reports.open.find((p) => p.planId === plan.id)?.panel);
      assert.equal(panel.title, 'Plan: Three changes');
      await waitFor('the status bar to count the plan’s running tasks', () => [...bar].some((t) => / · [12] plan tasks?\b|\$\(hubot\) [12] plan tasks?\b/.test(t)), 60_000);
      landedPlan = await ended(plan.id);
      // The view hears the last change of the state file too.
      await waitFor('the view to show every task landed', async () => {
        await reading;
        return ['one', 'two', 'three'].every((t) => seen.get(t)?.at(-1)?.startsWith('landed · '));
      }, 30_000);
    } finally {
      watch.dispose();
    }
    assert.equal(landedPlan.status, 'landed', JSON.stringify(landedPlan.tasks.map((t) => [t.id, t.state, t.why])));
    // In the view: each task's states in order. three waited for both before it started.
    const states = (task: string) => (seen.get(task) ?? []).map((d) => d.split(' · ')[0]!).filter((s, i, all) => s !== all[i - 1]);
    assert.deepEqual(states('three'), ['pending', 'running', 'landed'], seen.get('three')?.join(' | '));
    assert.equal(seen.get('three')![0], 'pending · after one, two');
    for (const task of ['one', 'two']) {
      assert.ok(['pending,running,landed', 'running,landed'].includes(states(task).join()), `${task}: ${seen.get(task)?.join(' | ')}`);
    }
    const running = seen.get('three')!.filter((d) => d.startsWith('running'));
    assert.deepEqual(running.filter((d) => !/^running · (starting|making its worktree|starting its sessions|review loop|review round 1|merge queue|cleaning up)$/.test(d)), [], 'each step in words');
    // Landed: its commit on main, and the loop's round count.
    const rows = await taskRows(landedPlan.id);
    for (const t of landedPlan.tasks) {
      assert.deepEqual(rows.get(t.id), [`landed · ${t.landed_commit!.slice(0, 8)} · 1 round`, 'pass-filled']);
      assert.doesNotThrow(() => git('merge-base', '--is-ancestor', t.landed_commit!, 'main'), `${t.id} landed on main`);
    }
    const row = api.plans.getTreeItem({ kind: 'plan', folderIndex: 0, planId: landedPlan.id });
    assert.deepEqual([row.label, row.description, (row.iconPath as vscode.ThemeIcon).id, row.contextValue], ['Three changes', 'landed · 3 tasks', 'pass-filled', 'mam.plan.landed']);
    assert.match((row.tooltip as vscode.MarkdownString).value, /^\*\*Three changes\*\* — landed, 3 of 3 landed\n/);
    await waitFor('the status bar to count no plan task', () => api.statusBar.counts().planTasks === 0);
  });

  it('the plan page: each task with its state, needs, round and landed commit, the critical path; a task opens its own loop’s report and no other', async () => {
    const model = buildPlanModel(api.host, 0, landedPlan.id)!;
    assert.ok(isHostMessage({ type: 'plan', plan: model }), 'the model passes the page’s own check');
    assert.deepEqual(model.tasks.map((t) => [t.id, t.state, t.needs, t.round]), [['one', 'landed', [], 1], ['two', 'landed', [], 1], ['three', 'landed', ['one', 'two'], 1]]);
    assert.equal(model.plan.landed, '3 of 3 landed');
    // The longest chain of needs, by the time the tasks took: one or two, then three.
    assert.equal(model.critical.length, 2);
    assert.ok(['one', 'two'].includes(model.critical[0]!) && model.critical[1] === 'three', model.critical.join(' → '));
    // A click on a task posts its loop's ID; the extension opens only a loop of this plan.
    const loopOf = (id: string) => landedPlan.tasks.find((t) => t.id === id)!.loop_id!;
    assert.ok(isPageMessage({ type: 'openLoop', loopId: loopOf('three') }));
    assert.ok(!isPageMessage({ type: 'openLoop', loopId: '../l-x' }), 'an ID that is no loop ID is dropped');
    assert.ok(!isPageMessage({ type: 'openLoop', loopId: loopOf('one'), extra: 1 }), 'an unexpected field is dropped');
    assert.equal(api.reports.openTaskReport(0, landedPlan.id, 'l-20260101T000000Z-0000000'), false, 'a loop of no task of this plan');
    assert.equal(api.reports.openTaskReport(0, landedPlan.id, loopOf('three')), true);
    await waitFor('the loop’s report', () => api.reports.open.some((p) => p.loopId === loopOf('three')));
  });

  it('a task whose review does not pass fails; the task that needs it is blocked and says which; the plan ends failed', async () => {
    const refuser = { agent: 'shell', command: words(fakeAgentCommand('reviewer', ['--verdicts', 'NOT PASS'])) };
    writePlan('failing.yaml', `title: One refused
defaults: { creator: claude, reviewers: [codex], max_loop: 1 }
tasks:
  - id: refused
    task: Reviewed and refused
    reviewers: [${JSON.stringify(refuser)}]
  - id: after
    task: Needs the refused one
    needs: [refused]
`);
    const before = new Set(plans().map((p) => p.id));
    await vscode.commands.executeCommand('mam.runPlan', { folderIndex: 0, file: 'failing.yaml' });
    const plan = await ended((await newPlan(before)).id);
    assert.equal(plan.status, 'failed');
    const rows = await taskRows(plan.id);
    assert.deepEqual(rows.get('refused'), ['failed · 1 round · its loop did not pass (max_loop)', 'error']);
    assert.deepEqual(rows.get('after'), ['blocked · needs refused, which failed', 'lock']);
    const row = api.plans.getTreeItem({ kind: 'plan', folderIndex: 0, planId: plan.id });
    assert.deepEqual([row.description, (row.iconPath as vscode.ThemeIcon).id], ['failed · 0 of 2 landed', 'error']);
    const model = buildPlanModel(api.host, 0, plan.id)!;
    assert.deepEqual(model.tasks.map((t) => [t.id, t.state, t.loop_id !== null]), [['refused', 'failed', true], ['after', 'blocked', false]]);
    assert.deepEqual(model.critical, ['refused', 'after']);
  });

  it('Cancel Plan asks first; cancelled, the running task’s loop stops and nothing more starts', async () => {
    // A creator that works on and on: the task stays in its review loop until the plan is cancelled.
    const worker = { agent: 'shell', command: words(fakeAgentCommand('heartbeats')) };
    writePlan('slow.yaml', `title: Slow work
defaults: { creator: ${JSON.stringify(worker)}, reviewers: [codex], max_loop: 1 }
tasks:
  - id: slow
    task: Takes its time
  - id: next
    task: Needs the slow one
    needs: [slow]
`);
    const before = new Set(plans().map((p) => p.id));
    await vscode.commands.executeCommand('mam.runPlan', { folderIndex: 0, file: 'slow.yaml' });
    const { id } = await newPlan(before);
    const running = await waitFor('the slow task in its loop', () => engine().core.plans.get(id)?.tasks.find((t) => t.id === 'slow' && t.state === 'running' && t.loop_id), 120_000);
    await waitFor('the view to show it in review', async () => (await taskRows(id)).get('slow')?.[0].startsWith('running · review loop'), 30_000);
    // Asked, and answered no: nothing changes.
    prompts.answers.push('Slow work', CANCEL);
    await vscode.commands.executeCommand('mam.cancelPlan');
    assert.deepEqual(prompts.asked.splice(0).map((a) => [a.kind, a.title]), [['pick', 'Cancel Plan'], ['modal', 'Cancel the plan “Slow work”?']]);
    assert.equal(engine().core.plans.get(id)?.status, 'running');
    // Asked again, and answered yes.
    prompts.answers.push('Slow work', 'Cancel Plan');
    await vscode.commands.executeCommand('mam.cancelPlan');
    prompts.asked.splice(0);
    const plan = await ended(id, 60_000);
    assert.equal(plan.status, 'cancelled');
    assert.deepEqual(plan.tasks.map((t) => [t.id, t.state]), [['slow', 'cancelled'], ['next', 'cancelled']]);
    assert.equal(engine().core.loops.get(running.loop_id!)?.status, 'cancelled', 'its loop was cancelled');
    const rows = await taskRows(id);
    assert.deepEqual(rows.get('next'), ['cancelled · the plan was cancelled', 'circle-slash']);
    const row = api.plans.getTreeItem({ kind: 'plan', folderIndex: 0, planId: id });
    assert.deepEqual([row.description, row.contextValue], ['cancelled · 0 of 2 landed', 'mam.plan.cancelled']);
    // Cancelling again from the palette: no running plan is left to cancel.
    await vscode.commands.executeCommand('mam.cancelPlan');
    assert.deepEqual(prompts.infos.splice(0).filter((m) => m.includes('no plan')), ['MAM: no plan to cancel.']);
  });

  it('a plan whose runner died says so on its row; Resume Plan there goes on in a process of its own, and a live one is left alone', async () => {
    const worker = { agent: 'shell', command: words(fakeAgentCommand('heartbeats')) };
    writePlan('resumed.yaml', `title: Resumed work\ndefaults: { creator: ${JSON.stringify(worker)}, reviewers: [codex], max_loop: 1 }\ntasks:\n  - id: long\n    task: Goes on after a crash\n`);
    const before = new Set(plans().map((p) => p.id));
    await vscode.commands.executeCommand('mam.runPlan', { folderIndex: 0, file: 'resumed.yaml' });
    const { id } = await newPlan(before);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const { owner: first, loop } = await waitFor('its runner to reach the loop', () => {
      const p = engine().core.plans.get(id);
      return p?.owner && p.tasks[0]!.loop_id ? { owner: p.owner, loop: p.tasks[0]!.loop_id } : undefined;
    }, 120_000);
    // The runner dies (a crash): the window started it, so the test may end it, by its ID.
    process.kill(first.pid, 'SIGKILL');
    await waitFor('the runner to be gone', () => !alive(first.pid));
    const node: PlansNode = { kind: 'plan', folderIndex: 0, planId: id };
    let row = api.plans.getTreeItem(node);
    assert.deepEqual([row.description, row.contextValue], ['running · 0 of 1 landed · runner stopped', 'mam.plan.running.stopped']);
    // The hover's markdown escapes the parentheses; shown, they are plain.
    assert.ok((row.tooltip as vscode.MarkdownString).value.replace(/\\/g, '').includes(`- runner: stopped (process ${first.pid} is gone): Resume Plan goes on from where it was\n`));
    await vscode.commands.executeCommand('mam.resumePlan', node);
    const second = await waitFor('a new runner', () => {
      const owner = engine().core.plans.get(id)?.owner;
      return owner && owner.pid !== first.pid && alive(owner.pid) ? owner : undefined;
    }, 30_000);
    row = api.plans.getTreeItem(node);
    assert.deepEqual([row.description, row.contextValue], ['running · 0 of 1 landed', 'mam.plan.running.live']);
    await vscode.commands.executeCommand('mam.resumePlan', node);
    assert.ok(prompts.infos.splice(0).includes(`MAM: the plan “Resumed work” is being run by process ${second.pid}; nothing to resume.`));
    await engine().core.plans.cancel(id);
    assert.equal((await ended(id, 60_000)).status, 'cancelled');
    // Its loop was taken up by the new runner, not started again.
    assert.deepEqual(engine().core.loops.list().filter((l) => l.task === 'Goes on after a crash').map((l) => [l.id, l.status]), [[loop, 'cancelled']]);
  });

  it('a bad plan: Run Plan shows its one line and changes nothing', async () => {
    writePlan('bad.yaml', 'title: Bad\ntasks:\n  - { id: a, task: A, needs: [b], creator: claude, reviewers: [codex] }\n  - { id: b, task: B, needs: [a], creator: claude, reviewers: [codex] }\n');
    const before = plans().map((p) => p.id);
    const worktrees = git('worktree', 'list');
    prompts.answers.push('bad.yaml');
    await vscode.commands.executeCommand('mam.runPlan');
    prompts.asked.splice(0);
    const errors = prompts.errors.splice(0);
    assert.equal(errors.length, 1, errors.join(' | '));
    assert.match(errors[0]!, /^MAM: running the plan failed: bad\.yaml:\d+:\d+: .*cycle: (a → b → a|b → a → b)/);
    assert.ok(!errors[0]!.includes('\n'), 'one line');
    assert.deepEqual(plans().map((p) => p.id), before, 'no plan stored');
    assert.equal(git('worktree', 'list'), worktrees, 'no worktree made');
  });

  it('Draft Plan… asks for the goal, the planner and the file, then opens the plan the planner wrote', async () => {
    await engine().core.sessions.create({ name: 'plan-drafter', agent: 'claude', role: 'planner', cwd: ws, baseDir: ws, command: fakeAgentCommand('drafter') });
    prompts.answers.push('Email validation for signup', 'plan-drafter', 'drafted.yaml');
    await vscode.commands.executeCommand('mam.draftPlan');
    assert.deepEqual(prompts.steps(), ['1/3 The goal, e.g. Email validation for signup', '2/3 The session that drafts the plan', '3/3 The file to write, in the folder']);
    // The file step suggests a name that does not exist yet.
    assert.equal(prompts.asked.at(-1)?.value, 'plan-2.yaml');
    prompts.asked.splice(0);
    const file = path.join(ws, 'drafted.yaml');
    const editor = await waitFor('the drafted plan in an editor', () => vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === file));
    assert.match(editor.document.getText(), /^title: Drafted\n/);
    assert.ok(prompts.infos.splice(0).includes('MAM: drafted.yaml holds a plan of 2 tasks. Read it, edit it as you like, then run it.'));
  });
});
