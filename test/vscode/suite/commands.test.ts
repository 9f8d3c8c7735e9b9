import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import { waitFor } from '../waitFor';
import { cleanUp, fakeAgentCommand, mamApi } from './support';

type Window = Record<'showQuickPick' | 'showInputBox' | 'showWarningMessage' | 'showErrorMessage', (...args: unknown[]) => unknown>;

/**
 * The commands as a user runs them from the Command Palette and the trees' context menus: every
 * quick pick, input box and modal question is answered the way a person would (by label), nothing
 * behind the command is called directly, and whatever the command reports as an error is collected.
 */
describe('the commands end to end, prompts answered like a user', function () {
  this.timeout(120_000);
  let api: MamApi;
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-commands-')), 'agent.ndjson');
  const answers: string[] = [];
  const errors: string[] = [];
  const original: Partial<Window> = {};
  const win = vscode.window as unknown as Window;

  const next = (asked: string): string => {
    const answer = answers.shift();
    if (answer === undefined) throw new Error(`no answer left for: ${asked}`);
    return answer;
  };
  before(async () => {
    api = await mamApi();
    for (const k of ['showQuickPick', 'showInputBox', 'showWarningMessage', 'showErrorMessage'] as const) original[k] = win[k];
    win.showQuickPick = async (items: unknown, options?: unknown) => {
      const answer = next(String((options as { title?: string })?.title));
      const list = (await items) as Array<{ label: string }>;
      const found = list.find((i) => i.label === answer || i.label.endsWith(` ${answer}`));
      if (!found) throw new Error(`no item '${answer}' among ${list.map((i) => i.label).join(', ')}`);
      return found;
    };
    win.showInputBox = async (options?: unknown) => {
      const o = options as { title?: string; validateInput?: (v: string) => unknown };
      const answer = next(String(o?.title));
      const problem = await o?.validateInput?.(answer);
      if (problem) throw new Error(`the input box refused '${answer}': ${String(problem)}`);
      return answer;
    };
    win.showWarningMessage = async (message: unknown, ...rest: unknown[]) => {
      // Only modal questions wait for an answer; other warnings are notes to the user.
      if (typeof rest[0] === 'object' && rest[0] && (rest[0] as { modal?: boolean }).modal) return next(String(message));
      return undefined;
    };
    win.showErrorMessage = async (message: unknown) => {
      errors.push(String(message));
      return undefined;
    };
  });
  after(async () => {
    Object.assign(win, original);
    await cleanUp(api);
  });
  afterEach(() => {
    assert.deepEqual(errors.splice(0), [], 'no command reported an error');
    assert.deepEqual(answers.splice(0), [], 'every prepared answer was asked for');
  });

  const engine = () => api.host.current[0]!.engine;
  const row = async (name: string) => (await engine().listSessions()).find((r) => r.name === name);
  const linesSeen = (): string[] =>
    fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { event: string; text?: string }).filter((e) => e.event === 'line').map((e) => e.text ?? '') : [];
  const ref = (name: string) => ({ folderIndex: 0, name });

  it('Create Session…: agent, command, role, name, onboarding — the session runs', async () => {
    const command = fakeAgentCommand('work', ['--log', log]).join(' ');
    answers.push('shell', command, 'worker', 'palette-1', 'Skip onboarding');
    await vscode.commands.executeCommand('mam.createSession');
    const created = await waitFor('the session', () => row('palette-1'));
    assert.deepEqual([created.agent, created.role, created.status], ['shell', 'worker', 'running']);
  });

  it('Delegate Job… with a typed task: the job is delivered and completes', async () => {
    answers.push('Type the task', 'Summarize the README in three lines');
    await vscode.commands.executeCommand('mam.delegateJob', ref('palette-1'));
    const job = await waitFor('the job', () => engine().listJobs().find((j) => j.session === 'palette-1'));
    await waitFor('the job to complete', () => engine().job(job.id)?.state === 'completed', 30_000);
    assert.match(fs.readFileSync(job.brief!, 'utf8'), /Summarize the README in three lines/);
  });

  it('Send Message…: the line arrives in the agent exactly as typed', async () => {
    const text = 'check the "flaky" test; $HOME stays as is — 고마워요';
    answers.push(text);
    await vscode.commands.executeCommand('mam.sendMessage', ref('palette-1'));
    await waitFor('the line in the agent', () => linesSeen().includes(text));
  });

  it('Verify Job…: the command runs against the job and its result is recorded', async () => {
    const job = engine().listJobs().find((j) => j.session === 'palette-1')!;
    answers.push(`${process.execPath} -e process.exit(process.env.MAM_JOB_ID===process.argv[1]?0:1) ${job.id}`);
    await vscode.commands.executeCommand('mam.verifyJob', { folderIndex: 0, jobId: job.id });
    const verify = engine().job(job.id)!.verify as { passed: boolean; exit_code: number };
    assert.deepEqual([verify.passed, verify.exit_code], [true, 0]);
  });

  it('Open Brief: the brief opens in an editor', async () => {
    const job = engine().listJobs().find((j) => j.session === 'palette-1')!;
    await vscode.commands.executeCommand('mam.openBrief', { folderIndex: 0, jobId: job.id });
    await waitFor('the brief editor', () => vscode.window.activeTextEditor?.document.uri.fsPath === job.brief);
  });

  it('Cancel Job: an open job ends cancelled and its session is free again', async () => {
    await engine().createSession({ name: 'palette-2', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('heartbeats,instant') });
    answers.push('Type the task', 'Watch the logs forever');
    await vscode.commands.executeCommand('mam.delegateJob', ref('palette-2'));
    const job = await waitFor('the open job', () => engine().listJobs().find((j) => j.session === 'palette-2' && j.state === 'started'), 30_000);
    await vscode.commands.executeCommand('mam.cancelJob', { folderIndex: 0, jobId: job.id });
    assert.deepEqual([engine().job(job.id)!.state, engine().job(job.id)!.reason], ['cancelled', 'cancelled_by_user']);
    assert.equal((await row('palette-2'))!.current_job, null);
  });

  it('Copy Conversation ID, Stop, Resume (same conversation), Attach', async () => {
    const conversation = (await row('palette-2'))!.conversation_id!;
    await vscode.commands.executeCommand('mam.copyConversationId', ref('palette-2'));
    assert.equal(await vscode.env.clipboard.readText(), conversation);

    await vscode.commands.executeCommand('mam.stopSession', ref('palette-2'));
    assert.equal((await row('palette-2'))!.status, 'stopped');
    await vscode.commands.executeCommand('mam.resumeSession', ref('palette-2'));
    const resumed = (await row('palette-2'))!;
    assert.deepEqual([resumed.status, resumed.conversation_id], ['running', conversation]);

    await vscode.commands.executeCommand('mam.attachSession', ref('palette-2'));
    const terminal = await waitFor('the attached terminal', () => vscode.window.terminals.find((t) => t.name === 'MAM: palette-2'));
    const options = terminal.creationOptions as vscode.TerminalOptions;
    assert.equal(path.basename(options.shellPath!), 'tmux');
    assert.ok((options.shellArgs as string[]).includes('attach-session'), String(options.shellArgs));
    terminal.dispose();
  });

  it('after the tmux server dies, the user is told, and Resume All brings the sessions back in their conversations', async () => {
    const before = (await row('palette-2'))!;
    const shown = api.notifier.shown.length;
    execFileSync('tmux', ['-L', before.server, 'kill-server']);
    await waitFor('the monitor to notice', async () => (await row('palette-2'))!.status === 'terminated', 30_000);
    await waitFor('the notification', () => api.notifier.shown.slice(shown).find((n) => n.kind === 'lost' && n.message.includes('palette-2')));

    await vscode.commands.executeCommand('mam.resumeAllSessions', { folderIndex: 0 });
    const after = (await row('palette-2'))!;
    assert.deepEqual([after.status, after.conversation_id], ['running', before.conversation_id]);
    assert.equal((await row('palette-1'))!.status, 'running', 'the shell session runs its command again');
  });

  it('Stop and Purge Conversation asks first, then the session can no longer be resumed', async () => {
    answers.push('Stop and Delete');
    await vscode.commands.executeCommand('mam.purgeConversation', ref('palette-2'));
    const purged = (await row('palette-2'))!;
    assert.deepEqual([purged.status, purged.resumable], ['stopped', false]);
  });

  it('Delegate to a Person…, then Start Task and Complete Task… on the row in the Jobs tree', async () => {
    answers.push('carol', 'Proofread the changelog');
    await vscode.commands.executeCommand('mam.delegateToPerson');
    const job = await waitFor('the task', () => engine().listJobs().find((j) => j.session === 'human:carol'));
    await waitFor('it to be assigned', () => engine().job(job.id)?.state === 'dispatched');
    const row = api.jobs.getTreeItem({ kind: 'job', folderIndex: 0, jobId: job.id, group: 'running' });
    assert.match(String(row.contextValue), /^mam\.job\.dispatched.*\.person$/, 'the row offers Start Task');
    assert.match(String(row.description), /^assigned · .* · carol$/);
    await vscode.commands.executeCommand('mam.startPersonJob', { folderIndex: 0, jobId: job.id });
    await waitFor('the task to start', () => engine().job(job.id)?.state === 'started');
    answers.push('proofread, three typos fixed');
    await vscode.commands.executeCommand('mam.completePersonJob', { folderIndex: 0, jobId: job.id });
    await waitFor('the task to complete', () => engine().job(job.id)?.state === 'completed');
    assert.equal(engine().job(job.id)!.detail, 'proofread, three typos fixed');
  });

  it('Stop Monitor and Start Monitor, Run Doctor', async () => {
    await vscode.commands.executeCommand('mam.stopMonitor');
    assert.equal(engine().monitoring, false);
    await vscode.commands.executeCommand('mam.startMonitor');
    assert.equal(engine().monitoring, true);
    await vscode.commands.executeCommand('mam.runDoctor');
  });
});
