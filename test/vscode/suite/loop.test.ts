import { strict as assert } from 'node:assert';
import { execFile, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import type { LoopsNode } from '../../../src/views/loops/loopsTree';
import { UriSchemes } from '../../../src/views/shared/uriSchemes';
import { waitFor } from '../waitFor';
import { Prompts } from './prompts';
import { cleanUp, fakeAgentCommand, mamApi, REPO_ROOT } from './support';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.invalid' };

/** VS Code's multi-file diff editor tab (`vscode.TabInputTextMultiDiff` in 1.100; newer than the API types we build against). */
type MultiDiff = { textDiffs: Array<{ original?: vscode.Uri; modified?: vscode.Uri }> };
const TabInputTextMultiDiff = (vscode as unknown as { TabInputTextMultiDiff: new (...args: never[]) => MultiDiff }).TabInputTextMultiDiff;

describe('the review loop in VS Code: command, Loops tree, report webview, diffs', function () {
  this.timeout(120_000);
  let api: MamApi;
  let repo: string;
  const prompts = new Prompts();
  before(async () => {
    api = await mamApi();
    prompts.install();
    Object.assign(process.env, GIT_ENV); // the agents' tmux server inherits the extension host's environment
    repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-loop-repo-')));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, ...GIT_ENV } });
    git('init', '-q');
    fs.writeFileSync(path.join(repo, 'feature.txt'), 'the start\n');
    fs.writeFileSync(path.join(repo, 'gone.txt'), 'to be deleted\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
  });
  after(async () => {
    prompts.restore();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await cleanUp(api);
    fs.rmSync(repo, { recursive: true, force: true });
  });
  afterEach(() => {
    assert.deepEqual(prompts.errors.splice(0), [], 'no command reported an error');
    assert.deepEqual(prompts.answers.splice(0), [], 'every prepared answer was asked for');
  });

  const engine = () => api.host.current[0]!.engine;
  const session = (name: string, role: string, mode: string, extra: string[] = []) => engine().core.sessions.create({ name, agent: 'claude', role, cwd: repo, baseDir: repo, command: fakeAgentCommand(mode, extra) });
  const tabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs);
  /**
   * Opens a round's changes with `command` and returns each file the multi-diff editor got: its name,
   * then both sides' text (null: no such side, an added or deleted file). The editor's tab must show
   * the title and VS Code's own count of the files. (Its tab input lists only files with both sides,
   * so the list comes from the `vscode.changes` call, observed on its way to VS Code.)
   */
  const openChanges = async (command: string, ref: object, title: string) => {
    const calls: unknown[][] = [];
    const commands = vscode.commands as { executeCommand: (id: string, ...args: unknown[]) => Thenable<unknown> };
    const execute = commands.executeCommand;
    commands.executeCommand = (id, ...args) => {
      if (id === 'vscode.changes') calls.push(args);
      return execute.call(vscode.commands, id, ...args);
    };
    try {
      await vscode.commands.executeCommand(command, ref);
    } finally {
      commands.executeCommand = execute;
    }
    const tab = await waitFor(`the multi-diff editor “${title}”`, () => tabs().find((t) => t.input instanceof TabInputTextMultiDiff && t.label === title)).catch((err: Error) =>
      Promise.reject(new Error(`${err.message}; the tabs: ${tabs().map((t) => t.label).join(', ')}`)),
    );
    assert.ok((tab.input as MultiDiff).textDiffs.every((d) => d.original?.scheme === UriSchemes.snapshot && d.modified?.scheme === UriSchemes.snapshot), 'both sides are read-only snapshots');
    assert.equal(calls.length, 1);
    const [name, resources] = calls[0] as [string, Array<[vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined]>];
    assert.equal(`${name} (${resources.length} file${resources.length === 1 ? '' : 's'})`, title);
    return Object.fromEntries(await Promise.all(resources.map(async ([file, original, modified]) => [path.basename(file.path), [await text(original), await text(modified)]] as const)));
  };
  const text = async (uri: vscode.Uri | undefined) => (uri ? (await vscode.workspace.openTextDocument(uri)).getText() : null);

  it('runs a loop from the command: NOT PASS, then PASS, shown in the Loops tree and the report webview', async () => {
    await session('loop-creator', 'creator', 'creator');
    await session('loop-reviewer', 'reviewer', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    await vscode.commands.executeCommand('mam.runLoop', { folderIndex: 0, creator: 'loop-creator', reviewers: ['loop-reviewer'], task: 'Make the start stronger', worktree: repo });
    const loop = engine().core.loops.list()[0]!;
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

  it('opens the changes of a round in the multi-file diff editor (base ↔ the reviewed tree), read-only snapshots', async () => {
    const loop = engine().core.loops.list()[0]!;
    const files = await openChanges('mam.openChanges', { folderIndex: 0, loopId: loop.id, round: 2 }, 'Make the start stronger: Base ↔ Round 2 (1 file)');
    assert.deepEqual(files, { 'feature.txt': ['the start\n', 'the start\nimplement\nfix r1\n'] });
  });

  it('Run Review Loop… asks for the creator, the reviewers and the task as numbered steps, and runs that loop', async () => {
    const loops = engine().core.loops;
    const runLoop = loops.run;
    // The workspace folder is no git checkout: the loop the prompts describe runs in the test repository.
    loops.run = (request, onProgress) => runLoop.call(loops, { ...request, worktree: repo }, onProgress);
    const from = prompts.asked.length;
    try {
      prompts.answers.push('loop-creator', ['loop-reviewer'], 'Say it once more');
      await vscode.commands.executeCommand('mam.runLoop');
    } finally {
      loops.run = runLoop;
    }
    assert.deepEqual(prompts.steps(from), [
      '1/3 The creator: implements and fixes',
      '2/3 The reviewers (none: the creator reviews its own work)',
      '3/3 The task, e.g. Add input validation to the signup form',
    ]);
    const loop = loops.list().find((l) => l.task === 'Say it once more')!;
    assert.deepEqual([loop.creator, loop.reviewers, loop.status], ['loop-creator', ['loop-reviewer'], 'passed']);
  });

  it('announces a loop run by the mam CLI outside the window when it ends', async () => {
    const before = new Set(engine().core.loops.list().map((l) => l.id));
    const workspace = api.host.current[0]!.folder.uri.fsPath;
    const cli = [path.join(REPO_ROOT, 'dist/cli.js'), 'loop', '--workspace', workspace, '--task', 'Say it again', '--creator', 'loop-creator', '--reviewer', 'loop-reviewer', '--worktree', repo];
    // Not execFileSync: the extension host must go on running while the loop does.
    const exit = await new Promise<number>((resolve) => execFile(process.execPath, cli, { env: { ...process.env, ...GIT_ENV } }, (err) => resolve(err ? Number((err as { code?: unknown }).code ?? 1) : 0)));
    assert.equal(exit, 0);
    const loop = engine().core.loops.list().find((l) => !before.has(l.id))!;
    const told = await waitFor('the notification of the CLI loop', () => api.notifier.shown.find((n) => n.kind === 'loop' && n.loopId === loop.id));
    assert.equal(told.message, 'MAM: every reviewer passed “Say it again” in round 1.');
  });

  it('never announces a loop that had ended before the window opened', async () => {
    const workspace = api.host.current[0]!.folder.uri.fsPath;
    const old = { ...engine().core.loops.list()[0]!, id: 'l-20200101T000000Z-0a0b0c', created_at: '2020-01-01T00:00:00.000Z', updated_at: '2020-01-01T00:05:00.000Z' };
    let seen = false;
    const sub = engine().core.loops.onDidChange(({ loop }) => (seen ||= loop.id === old.id));
    fs.writeFileSync(path.join(workspace, '.mam', 'loops', `${old.id}.json`), JSON.stringify(old));
    await waitFor('the window to see the old loop', () => seen);
    sub.dispose();
    assert.ok(!api.notifier.shown.some((n) => n.loopId === old.id), 'backlog is not news');
    fs.rmSync(path.join(workspace, '.mam', 'loops', `${old.id}.json`));
  });

  it('Open Changes shows every file of a round in one multi-diff editor, an added and a deleted file included; Since Last Round only what the fix changed', async () => {
    await session('diff-reviewer', 'reviewer', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    const before = fs.readFileSync(path.join(repo, 'feature.txt'), 'utf8');
    fs.writeFileSync(path.join(repo, 'added.md'), '# added in the round\n');
    fs.rmSync(path.join(repo, 'gone.txt'));
    await vscode.commands.executeCommand('mam.runLoop', { folderIndex: 0, creator: 'loop-creator', reviewers: ['diff-reviewer'], task: 'Touch three files', worktree: repo });
    const loop = engine().core.loops.list().find((l) => l.task === 'Touch three files')!;
    assert.deepEqual(loop.rounds.map((r) => r.status), ['not_passed', 'passed']);

    assert.deepEqual(await openChanges('mam.openChanges', { folderIndex: 0, loopId: loop.id, round: 1 }, 'Touch three files: Base ↔ Round 1 (3 files)'), {
      'added.md': [null, '# added in the round\n'],
      'feature.txt': [before, `${before}implement\n`],
      'gone.txt': ['to be deleted\n', null],
    });

    // From the round's row in the Loops tree, as the context menu passes it.
    const since = await openChanges('mam.openChangesSinceLastRound', { kind: 'round', folderIndex: 0, loopId: loop.id, round: 2 }, 'Touch three files: Round 1 ↔ Round 2 (1 file)');
    assert.deepEqual(since, { 'feature.txt': [`${before}implement\n`, `${before}implement\nfix r1\n`] });

    const infos = prompts.infos.length;
    await vscode.commands.executeCommand('mam.openChangesSinceLastRound', { folderIndex: 0, loopId: loop.id, round: 1 });
    assert.deepEqual(prompts.infos.slice(infos), ["MAM: round 1 is the loop's first; Open Changes shows it against the base."]);
  });

  it('Open Changes Since Last Round says so when the round reviewed the same snapshot as the one before (a rebuttal changes nothing)', async () => {
    // A loop whose creator rebutted instead of fixing: round 2 pinned the tree round 1 did (as recorded on disk).
    const workspace = api.host.current[0]!.folder.uri.fsPath;
    const reviewed = engine().core.loops.list().find((l) => l.task === 'Touch three files')!;
    // Dated long ago, so that it is not news to the Notifier.
    const rebutted = { ...reviewed, id: 'l-20200101T000000Z-0b0c0d', task: 'Argue once', created_at: '2020-01-01T00:00:00.000Z', updated_at: '2020-01-01T00:05:00.000Z', rounds: [reviewed.rounds[0]!, { ...reviewed.rounds[1]!, identity: reviewed.rounds[0]!.identity }] };
    const file = path.join(workspace, '.mam', 'loops', `${rebutted.id}.json`);
    fs.writeFileSync(file, JSON.stringify(rebutted));
    try {
      const infos = prompts.infos.length;
      await vscode.commands.executeCommand('mam.openChangesSinceLastRound', { kind: 'loop', folderIndex: 0, loopId: rebutted.id });
      assert.deepEqual(prompts.infos.slice(infos), ['MAM: nothing changed between round 1 and round 2: both reviewed the same snapshot.']);
    } finally {
      fs.rmSync(file);
    }
  });

  /** The loop of `task` once its round-1 review by `reviewer` has started, and that review's job. */
  const reviewStarted = (task: string, reviewer: string) =>
    waitFor('the review to start', () => {
      const l = engine().core.loops.list().find((x) => x.task === task);
      const step = l?.steps.find((x) => x.key === `r1:review:${reviewer}`);
      return l && step && engine().core.jobs.index.get(step.job_id)?.state === 'started' ? { loop: l, review: step.job_id } : undefined;
    }, 30_000);

  it('Cancel Loop asks first; the loop this window runs then ends cancelled with its open job, and starts nothing more', async () => {
    await session('slow-reviewer', 'reviewer', 'reviewer', ['--work-ms', '600000']);
    const running = vscode.commands.executeCommand('mam.runLoop', { folderIndex: 0, creator: 'loop-creator', reviewers: ['slow-reviewer'], task: 'Take your time', worktree: repo });
    const { loop, review } = await reviewStarted('Take your time', 'slow-reviewer');
    const from = prompts.asked.length;
    prompts.answers.push('Cancel Loop');
    await vscode.commands.executeCommand('mam.cancelLoop', { kind: 'loop', folderIndex: 0, loopId: loop.id });
    await running; // this window's run of the loop lets go
    assert.deepEqual(prompts.asked.slice(from).map((a) => [a.kind, a.title]), [['modal', 'Cancel the review loop “Take your time”?']]);
    const after = engine().core.loops.get(loop.id)!;
    assert.deepEqual([after.status, after.owner], ['cancelled', null]);
    assert.equal(engine().core.jobs.index.get(review)!.state, 'cancelled');
    assert.deepEqual(after.steps.map((x) => x.key), loop.steps.map((x) => x.key), 'no step after the cancel (no fix asked for)');
  });

  it('Resume Loop leaves a loop whose process runs alone, and continues one whose process died, reusing the job it had started', async () => {
    await session('held-reviewer', 'reviewer', 'reviewer', ['--hold-until-meddled']);
    const workspace = api.host.current[0]!.folder.uri.fsPath;
    const cli = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/cli.js'), 'loop', '--workspace', workspace, '--task', 'Pick it up again', '--creator', 'loop-creator', '--reviewer', 'held-reviewer', '--worktree', repo], { env: { ...process.env, ...GIT_ENV }, stdio: 'ignore' });
    const exited = new Promise((resolve) => cli.on('exit', resolve));
    const { loop, review } = await reviewStarted('Pick it up again', 'held-reviewer');
    const infos = prompts.infos.length;
    await vscode.commands.executeCommand('mam.resumeLoop', { kind: 'loop', folderIndex: 0, loopId: loop.id });
    assert.deepEqual(prompts.infos.slice(infos), [`MAM: the loop “Pick it up again” is running in process ${cli.pid}; nothing to resume.`]);

    cli.kill('SIGKILL');
    await exited;
    const resumed = vscode.commands.executeCommand('mam.resumeLoop', { kind: 'loop', folderIndex: 0, loopId: loop.id });
    await waitFor('this window to own the loop', () => engine().core.loops.get(loop.id)?.owner?.pid === process.pid);
    // The held review ends once the tree changes under it: that round is stale, the next one passes.
    fs.appendFileSync(path.join(repo, 'feature.txt'), 'afterthought\n');
    await resumed;
    const after = engine().core.loops.get(loop.id)!;
    assert.equal(after.status, 'passed');
    assert.equal(after.rounds[0]!.reviews[0]!.job_id, review, 'the review started before the crash is the one that counted');
    assert.equal(after.steps.filter((x) => x.key === 'implement').length, 1);
  });

  it('names a loop file it cannot read in the Loops view, and still lists the others', async () => {
    const file = path.join(engine().core.controlPlane.paths.loopsDir, 'l-20260101T000000Z-bad000.json');
    const good = engine().core.loops.list().length;
    fs.writeFileSync(file, '{"id": "l-20260101T000000Z-bad000"}\n');
    try {
      const nodes = (await api.loops.getChildren()) as LoopsNode[];
      assert.equal(nodes.length, good, 'the readable loops are all listed');
      assert.equal(api.loops.problems.current.length, 1);
      assert.match(api.loops.problems.current[0]!, /^l-20260101T000000Z-bad000\.json in .* is not a loop: /);
    } finally {
      fs.rmSync(file);
    }
    await api.loops.getChildren();
    assert.deepEqual(api.loops.problems.current, []);
  });
});
