import { strict as assert } from 'node:assert';
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import type { LoopsNode } from '../../../src/views/loopsTree';
import { waitFor } from '../waitFor';
import { cleanUp, fakeAgentCommand, mamApi, REPO_ROOT } from './support';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.invalid' };

describe('the review loop in VS Code: command, Loops tree, report webview, diffs', function () {
  this.timeout(120_000);
  let api: MamApi;
  let repo: string;
  before(async () => {
    api = await mamApi();
    Object.assign(process.env, GIT_ENV); // the agents' tmux server inherits the extension host's environment
    repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-loop-repo-')));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, ...GIT_ENV } });
    git('init', '-q');
    fs.writeFileSync(path.join(repo, 'feature.txt'), 'the start\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
  });
  after(async () => {
    await cleanUp(api);
    fs.rmSync(repo, { recursive: true, force: true });
  });

  const engine = () => api.host.current[0]!.engine;

  it('runs a loop from the command: NOT PASS, then PASS, shown in the Loops tree and the report webview', async () => {
    const session = (name: string, role: string, mode: string, extra: string[] = []) => engine().createSession({ name, agent: 'claude', role, cwd: repo, baseDir: repo, command: fakeAgentCommand(mode, extra) });
    await session('loop-creator', 'creator', 'creator');
    await session('loop-reviewer', 'reviewer', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    await vscode.commands.executeCommand('mam.runLoop', { folderIndex: 0, creator: 'loop-creator', reviewers: ['loop-reviewer'], task: 'Make the start stronger', worktree: repo });
    const loop = engine().listLoops()[0]!;
    assert.equal(loop.status, 'passed');
    assert.deepEqual(loop.rounds.map((r) => r.status), ['not_passed', 'passed']);
    const told = await waitFor('the loop result notification', () => api.notifier.shown.find((n) => n.kind === 'loop' && n.loopId === loop.id));
    assert.equal(told.message, 'MAM: every reviewer passed “Make the start stronger” in round 2.');

    const loops = (await api.loops.getChildren()) as LoopsNode[];
    assert.ok(loops.some((n) => n.kind === 'loop' && n.loopId === loop.id));
    const item = api.loops.getTreeItem({ kind: 'loop', folderIndex: 0, loopId: loop.id });
    assert.equal(item.label, 'Make the start stronger');
    assert.match(String(item.description), /^passed · 2 rounds/);
    const rounds = (await api.loops.getChildren({ kind: 'loop', folderIndex: 0, loopId: loop.id })) as LoopsNode[];
    const verdicts = (await api.loops.getChildren(rounds.find((r) => r.kind === 'round' && r.round === 1)!)) as LoopsNode[];
    const review = verdicts.find((v) => v.kind === 'review')!;
    assert.equal(api.loops.getTreeItem(review).description, 'NOT PASS');
    const files = (await api.loops.getChildren(verdicts.find((v) => v.kind === 'files')!)) as LoopsNode[];
    assert.deepEqual(files.map((f) => (f.kind === 'file' ? f.path : '')), ['feature.txt']);

    // The report webview opened when the loop started.
    await waitFor('the report panel', () => api.reports.open.some((p) => p.loopId === loop.id));
    await vscode.commands.executeCommand('mam.openReport', { folderIndex: 0, loopId: loop.id });
    assert.equal(api.reports.open.filter((p) => p.loopId === loop.id).length, 1, 'opening it again reveals the same panel');
  });

  it('opens the changes of a round as diffs in the editor (base ↔ the reviewed tree)', async () => {
    const loop = engine().listLoops()[0]!;
    await vscode.commands.executeCommand('mam.openChanges', { folderIndex: 0, loopId: loop.id, round: 2 });
    const diff = await waitFor('a diff tab', () =>
      vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'mam-snapshot'),
    );
    const input = diff.input as vscode.TabInputTextDiff;
    assert.equal(path.basename(input.modified.path), 'feature.txt');
    const right = await vscode.workspace.openTextDocument(input.modified);
    const left = await vscode.workspace.openTextDocument(input.original);
    assert.equal(left.getText(), 'the start\n');
    assert.equal(right.getText(), 'the start\nimplement\nfix r1\n');
  });

  it('announces a loop run by the mam CLI outside the window when it ends', async () => {
    const before = new Set(engine().listLoops().map((l) => l.id));
    const workspace = api.host.current[0]!.folder.uri.fsPath;
    const cli = [path.join(REPO_ROOT, 'dist/cli.js'), 'loop', '--workspace', workspace, '--task', 'Say it again', '--creator', 'loop-creator', '--reviewer', 'loop-reviewer', '--worktree', repo];
    // Not execFileSync: the extension host must go on running while the loop does.
    const exit = await new Promise<number>((resolve) => execFile(process.execPath, cli, { env: { ...process.env, ...GIT_ENV } }, (err) => resolve(err ? Number((err as { code?: unknown }).code ?? 1) : 0)));
    assert.equal(exit, 0);
    const loop = engine().listLoops().find((l) => !before.has(l.id))!;
    const told = await waitFor('the notification of the CLI loop', () => api.notifier.shown.find((n) => n.kind === 'loop' && n.loopId === loop.id));
    assert.equal(told.message, 'MAM: every reviewer passed “Say it again” in round 1.');
  });

  it('never announces a loop that had ended before the window opened', async () => {
    const workspace = api.host.current[0]!.folder.uri.fsPath;
    const old = { ...engine().listLoops()[0]!, id: 'l-20200101T000000Z-0a0b0c', created_at: '2020-01-01T00:00:00.000Z', updated_at: '2020-01-01T00:05:00.000Z' };
    let seen = false;
    const sub = api.host.onDidChangeLoop(({ loopId }) => (seen ||= loopId === old.id));
    fs.writeFileSync(path.join(workspace, '.mam', 'loops', `${old.id}.json`), JSON.stringify(old));
    await waitFor('the window to see the old loop', () => seen);
    sub.dispose();
    assert.ok(!api.notifier.shown.some((n) => n.loopId === old.id), 'backlog is not news');
    fs.rmSync(path.join(workspace, '.mam', 'loops', `${old.id}.json`));
  });
});
