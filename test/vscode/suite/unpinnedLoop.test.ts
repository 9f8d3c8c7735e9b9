import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import type { LoopsNode } from '../../../src/views/loops/loopsTree';
import { buildModel } from '../../../src/views/loops/reportPanel';
import { NO_SNAPSHOT } from '../../../src/views/loops/snapshotDocuments';
import { isHostMessage } from '../../../src/webview/reportProtocol';
import { Prompts } from './prompts';
import { cleanUp, fakeAgentCommand, mamApi, REPO_ROOT } from './support';
import { waitFor } from '../waitFor';

/**
 * A `mam job submit --type loop` job runs as a loop whose rounds pin no snapshot (its reviewer
 * reviews what the worker reported, in a folder that need not be a git checkout): the Loops tree,
 * Open Changes and the report show its rounds without a diff, and nothing fails.
 */
describe('a `--type loop` job in VS Code: rounds without a snapshot', function () {
  this.timeout(120_000);
  let api: MamApi;
  let loopId: string;
  const prompts = new Prompts();
  const engine = () => api.host.current[0]!.engine;

  before(async () => {
    api = await mamApi();
    prompts.install();
    // The workspace folder is no git checkout: the job's loop works in it as it is.
    const workspace = api.host.current[0]!.folder.uri.fsPath;
    const session = (name: string, role: string, mode: string, extra: string[] = []) => engine().core.sessions.create({ name, agent: 'claude', role, cwd: workspace, baseDir: workspace, command: fakeAgentCommand(mode, extra) });
    await session('job-worker', 'worker', 'instant');
    await session('job-reviewer', 'reviewer', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    const before = new Set(engine().core.loops.list().map((l) => l.id));
    const cli = [path.join(REPO_ROOT, 'dist/cli.js'), 'job', 'submit', '--workspace', workspace, '--session', 'job-worker', '--type', 'loop', '--reviewer', 'job-reviewer', '--prompt', 'Tidy the notes'];
    // Not execFileSync: the extension host must go on running while the loop does.
    const exit = await new Promise<number>((resolve) => execFile(process.execPath, cli, { env: process.env }, (err) => resolve(err ? Number((err as { code?: unknown }).code ?? 1) : 0)));
    assert.equal(exit, 0);
    const loop = engine().core.loops.list().find((l) => !before.has(l.id))!;
    assert.ok(loop.job, 'the loop carries the job');
    assert.deepEqual([loop.status, loop.rounds.map((r) => r.identity.tree)], ['passed', ['', '']]);
    loopId = loop.id;
    // Its pass is announced once the extension sees the loop's state (a file watch, after the CLI
    // exits): waited for here, so that it never falls among the messages a test below counts.
    await waitFor('the loop’s own notification', () => api.notifier.shown.find((n) => n.kind === 'loop' && n.loopId === loopId), 30_000);
  });
  after(async () => {
    prompts.restore();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await cleanUp(api);
  });
  afterEach(() => {
    assert.deepEqual(prompts.errors.splice(0), [], 'no command reported an error');
  });

  it('the Loops tree shows its rounds and verdicts, with no changed files and no Open Changes on a round', async () => {
    const rounds = (await api.loops.getChildren({ kind: 'loop', folderIndex: 0, loopId })) as LoopsNode[];
    assert.deepEqual(rounds.map((r) => (r.kind === 'round' ? r.round : 0)), [2, 1]);
    const item = api.loops.getTreeItem(rounds[1]!);
    assert.equal(item.description, 'not passed · what the worker reported');
    assert.equal(item.contextValue, 'mam.round.unpinned', 'the menus that open changes match mam.round only');
    const children = (await api.loops.getChildren(rounds[1]!)) as LoopsNode[];
    assert.deepEqual(children.map((c) => c.kind), ['review']);
    assert.equal(api.loops.getTreeItem(children[0]!).description, 'NOT PASS');
  });

  it('Open Changes, for the loop or a round, says in one line that there is no snapshot, and opens nothing', async () => {
    const from = prompts.infos.length;
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('mam.openChanges', { folderIndex: 0, loopId });
    await vscode.commands.executeCommand('mam.openChanges', { folderIndex: 0, loopId, round: 1 });
    await vscode.commands.executeCommand('mam.openChangesSinceLastRound', { folderIndex: 0, loopId, round: 2 });
    assert.deepEqual(prompts.infos.slice(from), [NO_SNAPSHOT, NO_SNAPSHOT, NO_SNAPSHOT]);
    assert.equal(vscode.window.tabGroups.all.flatMap((g) => g.tabs).length, 0, 'no diff editor opened');
  });

  it('the report draws the rounds with their verdicts, marked as without a snapshot and without files', async () => {
    const model = (await buildModel(api.host, 0, loopId))!;
    assert.ok(isHostMessage({ type: 'model', model }), 'the model passes the page’s own check');
    assert.deepEqual(model.rounds.map((r) => [r.n, r.status, r.pinned, r.files.length, r.reviews.map((v) => v.verdict)]), [
      [1, 'not_passed', false, 0, ['NOT PASS']],
      [2, 'passed', false, 0, ['PASS']],
    ]);
    await vscode.commands.executeCommand('mam.openReport', { folderIndex: 0, loopId });
    assert.equal(api.reports.open.filter((p) => p.loopId === loopId).length, 1);
  });
});
