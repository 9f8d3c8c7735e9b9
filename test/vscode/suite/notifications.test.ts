import { strict as assert } from 'node:assert';
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import type { LoopsNode } from '../../../src/views/loops/loopsTree';
import type { SessionsNode } from '../../../src/views/sessions/sessionsTree';
import { waitFor } from '../waitFor';
import { Prompts } from './prompts';
import { cleanUp, fakeAgentCommand, mamApi, REPO_ROOT } from './support';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.invalid' };
type Toast = { how: 'info' | 'warning' | 'error' | 'progress'; text: string; done?: Promise<unknown> };
type Window = Record<'showInformationMessage' | 'showWarningMessage' | 'showErrorMessage' | 'withProgress', (...args: unknown[]) => unknown>;

/**
 * What the user is told, counted at the window's own notification calls (every message and progress
 * notification is recorded, then shown as usual) and in the Notifier's record: one notification for
 * a job delegated from this window, turning into one result; one for a loop, none for its jobs.
 */
describe('notifications: only what needs the user, and the end of what the user started', function () {
  this.timeout(120_000);
  let api: MamApi;
  let repo: string;
  const toasts: Toast[] = [];
  const win = vscode.window as unknown as Window;
  const original: Partial<Window> = {};
  const prompts = new Prompts();
  const engine = () => api.host.current[0]!.engine;
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  /** Messages (not progress) since `from` that name any of `names`: what earlier suites' leftovers say is not counted here. */
  const messagesAbout = (from: number, ...names: string[]) => toasts.slice(from).filter((t) => t.how !== 'progress' && names.some((n) => t.text.includes(n)));

  before(async () => {
    api = await mamApi();
    Object.assign(process.env, GIT_ENV);
    // Delegate Job's prompts are answered as a user would; every message and progress notification is recorded on top.
    prompts.install();
    for (const k of ['showInformationMessage', 'showWarningMessage', 'showErrorMessage', 'withProgress'] as const) original[k] = win[k];
    const record = (how: Toast['how'], k: 'showInformationMessage' | 'showWarningMessage' | 'showErrorMessage') => (message: unknown, ...rest: unknown[]) => {
      toasts.push({ how, text: String(message) });
      return original[k]!.call(vscode.window, message, ...rest);
    };
    win.showInformationMessage = record('info', 'showInformationMessage');
    win.showWarningMessage = record('warning', 'showWarningMessage');
    win.showErrorMessage = record('error', 'showErrorMessage');
    win.withProgress = (options: unknown, work: unknown) => {
      const done = original.withProgress!.call(vscode.window, options, work) as Promise<unknown>;
      toasts.push({ how: 'progress', text: String((options as { title?: string }).title), done: done.then(() => undefined, () => undefined) });
      return done;
    };

    repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-notify-repo-')));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, ...GIT_ENV } });
    git('init', '-q');
    fs.writeFileSync(path.join(repo, 'feature.txt'), 'the start\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
  });
  after(async () => {
    Object.assign(win, original);
    prompts.restore();
    await vscode.workspace.getConfiguration('mam').update('notifications.completions', undefined, vscode.ConfigurationTarget.Global);
    await cleanUp(api);
    fs.rmSync(repo, { recursive: true, force: true });
  });

  /** Runs Delegate Job on `session` with `text`; resolves with the job and its progress notification. */
  const delegateFromWindow = async (session: string, text: string) => {
    prompts.answers.push('Type the task', text);
    const from = toasts.length;
    const known = new Set(engine().core.jobs.index.list().map((j) => j.id));
    await vscode.commands.executeCommand('mam.delegateJob', { folderIndex: 0, name: session });
    const job = await waitFor('the delegated job', () => engine().core.jobs.index.list().find((j) => j.session === session && !known.has(j.id)));
    assert.deepEqual(prompts.errors.splice(0), [], 'Delegate Job took the answers');
    const progress = toasts.slice(from).filter((t) => t.how === 'progress');
    assert.equal(progress.length, 1, 'one progress notification');
    return { job, from, progress: progress[0]! };
  };

  it('a job delegated from this window: one notification that turns into one result, never "delivered"', async () => {
    await engine().core.sessions.create({ name: 'note-worker_1.a', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('work', ['--work-ms', '1500']) });
    const { job, from, progress } = await delegateFromWindow('note-worker_1.a', 'Write the changelog entry');
    assert.equal(progress.text, 'MAM: note-worker_1.a');
    await waitFor('the job to complete', () => engine().core.jobs.index.get(job.id)?.state === 'completed', 30_000);
    await waitFor('the result message', () => api.notifier.shown.find((n) => n.jobId === job.id && n.kind === 'completed'));
    await progress.done;
    assert.deepEqual(api.notifier.shown.filter((n) => n.jobId === job.id).map((n) => n.kind), ['progress', 'completed']);
    const messages = messagesAbout(from, 'note-worker_1.a', 'Write the changelog entry', job.id);
    assert.deepEqual(messages.map((t) => t.how), ['info'], 'one message, for its end');
    assert.match(messages[0]!.text, /^MAM: note-worker_1\.a completed “Write the changelog entry”/);
    assert.ok(!toasts.slice(from).some((t) => /delivered/.test(t.text)), 'no "delivered" message');
  });

  it('a job started elsewhere (the CLI, an agent) that completes is not news', async () => {
    const { job } = await engine().core.jobService.submit({ session: 'note-worker_1.a', prompt: 'Tidy the imports' });
    await waitFor('the job to complete', () => engine().core.jobs.index.get(job.id)?.state === 'completed', 30_000);
    await nextTurn();
    assert.deepEqual(api.notifier.shown.filter((n) => n.jobId === job.id), []);
  });

  it('with mam.notifications.completions off, a delegated job that completes ends without a message', async () => {
    const setting = async (value: boolean | undefined) => {
      const old = engine();
      await vscode.workspace.getConfiguration('mam').update('notifications.completions', value, vscode.ConfigurationTarget.Global);
      // A change of a mam.* setting rebuilds the engines.
      await waitFor('the engines rebuilt with the setting', () => api.host.current[0] && api.host.current[0].engine !== old);
    };
    await setting(false);
    try {
      const { job, from, progress } = await delegateFromWindow('note-worker_1.a', 'Sort the glossary');
      await waitFor('the job to complete', () => engine().core.jobs.index.get(job.id)?.state === 'completed', 30_000);
      await progress.done;
      await nextTurn(); // the Notifier decides right after the progress notification closes
      assert.deepEqual(api.notifier.shown.filter((n) => n.jobId === job.id).map((n) => n.kind), ['progress']);
      assert.deepEqual(messagesAbout(from, 'note-worker_1.a', 'Sort the glossary', job.id), []);
    } finally {
      await setting(undefined);
    }
  });

  it('an agent asking for permission in a job the CLI waits on (another process applies the event): one warning here', async () => {
    await engine().core.sessions.create({ name: 'note-asker_1.d', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('permission', ['--work-ms', '4000']) });
    const known = new Set(engine().core.jobs.index.list().map((j) => j.id));
    const cli = [path.join(REPO_ROOT, 'dist/cli.js'), 'job', 'submit', '--workspace', engine().workspace, '--session', 'note-asker_1.d', '--prompt', 'Clean the build folder'];
    // Not execFileSync: the extension host must go on running while the CLI waits on its job.
    const exit = new Promise<number>((resolve) => execFile(process.execPath, cli, { env: process.env }, (err) => resolve(err ? Number((err as { code?: unknown }).code ?? 1) : 0)));
    const job = await waitFor('the CLI’s job', () => engine().core.jobs.index.list().find((j) => j.session === 'note-asker_1.d' && !known.has(j.id)), 30_000);
    const told = await waitFor('the permission warning', () => api.notifier.shown.find((n) => n.jobId === job.id && n.kind === 'permission'), 30_000);
    assert.match(told.message, /^MAM: note-asker_1\.d needs permission: /);
    assert.equal(await exit, 0, 'the job completed once permission was given');
    await waitFor('the window to see the job complete', () => engine().core.jobs.index.get(job.id)?.state === 'completed', 30_000);
    await nextTurn();
    assert.deepEqual(api.notifier.shown.filter((n) => n.jobId === job.id).map((n) => n.kind), ['permission'], 'told once; its completion is the CLI’s to tell');
  });

  it('a review loop: exactly one message, at its end; none for the jobs it ran', async () => {
    const session = (name: string, role: string, mode: string, extra: string[] = []) => engine().core.sessions.create({ name, agent: 'claude', role, cwd: repo, baseDir: repo, command: fakeAgentCommand(mode, extra) });
    await session('note-creator_1.b', 'creator', 'creator');
    await session('note-reviewer_1.c', 'reviewer', 'reviewer', ['--verdicts', 'NOT PASS,PASS']);
    const from = toasts.length;
    const shownFrom = api.notifier.shown.length;
    await vscode.commands.executeCommand('mam.runLoop', { folderIndex: 0, creator: 'note-creator_1.b', reviewers: ['note-reviewer_1.c'], task: 'Make the start stronger, again', worktree: repo });
    const loop = engine().core.loops.list().find((l) => l.task === 'Make the start stronger, again')!;
    assert.equal(loop.status, 'passed');
    const jobs = new Set(loop.steps.map((s) => s.job_id));
    assert.ok(jobs.size >= 4, `the loop ran its jobs (${jobs.size})`);
    await waitFor('the loop message', () => api.notifier.shown.find((n) => n.loopId === loop.id));
    const shown = api.notifier.shown.slice(shownFrom);
    assert.deepEqual(shown.map((n) => n.kind), ['loop'], 'one notification: the loop’s end');
    assert.ok(!shown.some((n) => n.jobId && jobs.has(n.jobId)));
    // Whatever a loop job's message would say names its session (or its ID); the loop's names its task.
    const messages = messagesAbout(from, 'note-creator_1.b', 'note-reviewer_1.c', 'Make the start stronger', ...jobs);
    assert.deepEqual(messages.map((t) => t.text), ['MAM: every reviewer passed “Make the start stronger, again” in round 2.']);
  });

  it('tooltips in the Sessions and Loops trees show names with - _ . as they are, without backslashes', async () => {
    /** What the user reads in a tooltip: the markdown rendered by VS Code's own markdown extension, as text. */
    const rendered = async (tooltip: string | vscode.MarkdownString | undefined): Promise<string> => {
      const md = typeof tooltip === 'string' ? undefined : tooltip?.value;
      if (md === undefined) return String(tooltip ?? '');
      const html = await vscode.commands.executeCommand<string>('markdown.api.render', md);
      return html.replace(/<[^>]*>/g, '').replace(/&nbsp;/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&');
    };
    const tooltips: Array<{ where: string; text: string }> = [];
    for (const node of (await api.sessions.getChildren()) as SessionsNode[]) {
      if (node.kind !== 'session' || !node.name.startsWith('note-')) continue;
      tooltips.push({ where: `session ${node.name}`, text: await rendered((await api.sessions.getTreeItem(node)).tooltip) });
    }
    const loop = engine().core.loops.list().find((l) => l.task === 'Make the start stronger, again')!;
    const walk = async (node: LoopsNode): Promise<void> => {
      tooltips.push({ where: `${node.kind} of the loop`, text: await rendered(api.loops.getTreeItem(node).tooltip) });
      for (const child of (await api.loops.getChildren(node)) as LoopsNode[]) await walk(child);
    };
    await walk({ kind: 'loop', folderIndex: 0, loopId: loop.id });
    assert.deepEqual(tooltips.filter((t) => t.where.startsWith('session')).map((t) => t.where).sort(), ['session note-asker_1.d', 'session note-creator_1.b', 'session note-reviewer_1.c', 'session note-worker_1.a']);
    for (const { where, text } of tooltips) assert.ok(!text.includes('\\'), `no backslash in the tooltip of the ${where}: ${text}`);
    for (const name of ['note-asker_1.d', 'note-creator_1.b', 'note-reviewer_1.c', 'note-worker_1.a']) assert.ok(tooltips.some((t) => t.where === `session ${name}` && t.text.startsWith(`${name} — claude, `)), `the session tooltip names ${name} as it is`);
    const loopTip = tooltips.find((t) => t.where === 'loop of the loop')!.text;
    assert.match(loopTip, /creator note-creator_1\.b, reviewer note-reviewer_1\.c/);
    assert.ok(loopTip.includes(repo), 'the checkout path as it is');
  });
});
