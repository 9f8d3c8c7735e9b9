import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import type { MergeQueueNode } from '../../../src/views/merge/mergeQueueTree';
import { waitFor } from '../waitFor';
import { Prompts } from './prompts';
import { cleanUp, fakeAgentCommand, mamApi } from './support';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.invalid' };

/**
 * The Merge Queue view: a passed loop's branch added from the Loops view, landed by Run Merge
 * Queue, shown with its state and log; a corrupt queue file named in the view. The workspace folder
 * becomes a git checkout for this file only (its .git goes again afterwards), with a worktree beside it.
 */
describe('the merge queue in VS Code: add from a passed loop, run, the view and its log', function () {
  this.timeout(120_000);
  let api: MamApi;
  let ws: string;
  let worktree: string;
  const prompts = new Prompts();
  const engine = () => api.host.current[0]!.engine;
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();

  before(async () => {
    api = await mamApi();
    prompts.install();
    Object.assign(process.env, GIT_ENV);
    ws = fs.realpathSync(engine().workspace);
    git(ws, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(ws, 'feature.txt'), 'the start\n');
    git(ws, 'add', 'feature.txt');
    git(ws, 'commit', '-q', '-m', 'initial');
    worktree = fs.realpathSync(fs.mkdtempSync(path.join(path.dirname(ws), 'mam-merge-wt-')));
    fs.rmdirSync(worktree);
    git(ws, 'worktree', 'add', '-q', '-b', 'feature-a', worktree);
  });
  after(async () => {
    prompts.restore();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await cleanUp(api);
    fs.rmSync(worktree, { recursive: true, force: true });
    fs.rmSync(path.join(ws, '.git'), { recursive: true, force: true });
    fs.rmSync(path.join(ws, 'feature.txt'), { force: true });
    fs.rmSync(path.join(ws, '.mam', 'merge'), { recursive: true, force: true });
  });
  afterEach(() => {
    assert.deepEqual(prompts.errors.splice(0), [], 'no command reported an error');
    assert.deepEqual(prompts.answers.splice(0), [], 'every prepared answer was asked for');
  });

  it('adds the branch of a passed loop, lands it with its validation, and shows the entry landed with its log', async () => {
    const session = (name: string, role: string, mode: string) => engine().core.sessions.create({ name, agent: 'claude', role, cwd: worktree, baseDir: ws, command: fakeAgentCommand(mode) });
    await session('mq-creator', 'creator', 'creator');
    await session('mq-reviewer', 'reviewer', 'reviewer');
    const loop = await engine().core.loops.run({ task: 'Make the start stronger', creator: 'mq-creator', reviewers: ['mq-reviewer'], worktree });
    assert.equal(loop.status, 'passed');

    // From the Loops view's row: the command asks only for the validation command.
    prompts.answers.push(`${process.execPath} -e process.exit(0)`);
    await vscode.commands.executeCommand('mam.enqueueMerge', { kind: 'loop', folderIndex: 0, loopId: loop.id });
    assert.deepEqual(prompts.asked.splice(0).map((a) => [a.kind, a.title]), [['input', 'Add to Merge Queue']]);
    const [entry] = engine().core.mergeQueue.reading().entries;
    assert.ok(entry, 'one entry queued');
    assert.equal(entry.branch, 'feature-a');
    assert.equal(entry.into, 'main');
    const node: MergeQueueNode = { kind: 'entry', folderIndex: 0, entryId: entry.id };
    await waitFor('the queued entry in the view', async () => ((await api.mergeQueue.getChildren()) as MergeQueueNode[]).some((n) => n.kind === 'entry' && n.entryId === entry.id));
    assert.equal(api.mergeQueue.getTreeItem(node).description, '→ main · queued');

    await vscode.commands.executeCommand('mam.runMergeQueue');
    assert.equal(git(ws, 'rev-parse', 'main^{tree}'), entry.reviewed.tree, 'main now holds the tree the reviewers passed');
    assert.ok(prompts.infos.includes('Merge queue: landed feature-a.'), prompts.infos.join(' | '));
    const item = api.mergeQueue.getTreeItem(node);
    assert.equal(item.description, '→ main · landed');
    assert.equal((item.iconPath as vscode.ThemeIcon).id, 'pass-filled');
    assert.equal(item.contextValue, 'mam.mergeEntry.landed');
    const log = (await api.mergeQueue.getChildren(node)).map((n) => String(api.mergeQueue.getTreeItem(n).label));
    assert.ok(log.some((l) => l === 'validation passed'), log.join(' | '));
    assert.match(log.at(-1)!, /^landed feature-a on main at [0-9a-f]{12}$/);

    // Show Log: the whole log, a real file in an ordinary editor.
    await vscode.commands.executeCommand('mam.showMergeLog', node);
    const editor = await waitFor('the log in an editor', () => vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === engine().core.mergeQueue.logFile(entry.id)));
    assert.match(editor.document.getText(), /validate: .* -e process\.exit\(0\)/);
  });

  it('names a queue file it cannot read in the view instead of showing an empty queue', async () => {
    const file = engine().core.mergeQueue.file;
    const good = fs.readFileSync(file);
    try {
      fs.writeFileSync(file, '{"version": 1, "entries": [{"id": 3}]}\n');
      await api.mergeQueue.getChildren();
      assert.equal(api.mergeQueue.problems.current.length, 1);
      assert.match(api.mergeQueue.problems.current[0]!, /queue\.json/);
    } finally {
      fs.writeFileSync(file, good);
    }
    await api.mergeQueue.getChildren();
    assert.deepEqual(api.mergeQueue.problems.current, []);
  });
});
