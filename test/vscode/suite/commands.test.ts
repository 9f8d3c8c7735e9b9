import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import { UriSchemes } from '../../../src/views/shared/uriSchemes';
import { waitFor } from '../waitFor';
import { BACK, CANCEL, Prompts } from './prompts';
import { cleanUp, fakeAgentCommand, mamApi } from './support';

/**
 * The commands as a user runs them from the Command Palette and the trees' context menus: every
 * quick pick, input box and modal question is answered the way a person would (by label), nothing
 * behind the command is called directly, and whatever the command reports as an error is collected.
 */
describe('the commands end to end, prompts answered like a user', function () {
  this.timeout(120_000);
  let api: MamApi;
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-commands-')), 'agent.ndjson');
  const prompts = new Prompts();
  const { answers, errors } = prompts;

  before(async () => {
    api = await mamApi();
    prompts.install();
  });
  after(async () => {
    prompts.restore();
    await cleanUp(api);
  });
  afterEach(() => {
    assert.deepEqual(errors.splice(0), [], 'no command reported an error');
    assert.deepEqual(answers.splice(0), [], 'every prepared answer was asked for');
  });

  const engine = () => api.host.current[0]!.engine;
  const row = async (name: string) => (await engine().core.controlPlane.sessions.list()).find((r) => r.name === name);
  const linesSeen = (): string[] =>
    fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { event: string; text?: string }).filter((e) => e.event === 'line').map((e) => e.text ?? '') : [];
  const ref = (name: string) => ({ folderIndex: 0, name });

  it('Create Session…: agent, command, role, name, onboarding — the session runs', async () => {
    const command = fakeAgentCommand('work', ['--log', log]).join(' ');
    const from = prompts.asked.length;
    answers.push('shell', command, 'worker', 'palette-1', 'Skip onboarding');
    await vscode.commands.executeCommand('mam.createSession');
    const created = await waitFor('the session', () => row('palette-1'));
    assert.deepEqual([created.agent, created.role, created.status], ['shell', 'worker', 'running']);
    // One titled flow: the shell agent adds the command step, so 4 steps become 5; Back from the second on.
    const shown = prompts.asked.slice(from);
    assert.deepEqual(shown.map((a) => [a.title, `${a.step}/${a.totalSteps}`, a.back]), [
      ['Create Session', '1/4', false],
      ['Create Session', '2/5', true],
      ['Create Session', '3/5', true],
      ['Create Session', '4/5', true],
      ['Create Session', '5/5', true],
    ]);
    assert.ok(shown.every((a) => a.placeholder && !/\(\d\/\d\)/.test(a.title)), 'every step has a placeholder, no step count in the title');
  });

  it('Create Session… with an onboarding the agent fails: one warning says so, and no second message for the job', async () => {
    const command = fakeAgentCommand('error').join(' ');
    answers.push('shell', command, 'worker', 'palette-onboarded', 'Onboard it');
    await vscode.commands.executeCommand('mam.createSession');
    const job = await waitFor('the onboarding job to fail', () => engine().core.jobs.index.list().find((j) => j.session === 'palette-onboarded' && j.role === 'onboarding' && j.state === 'failed'));
    assert.deepEqual(prompts.warnings.filter((w) => w.includes('palette-onboarded')), ['MAM: onboarding of palette-onboarded failed (agent_error: it broke); the session is kept.']);
    // The job's own end would be an error message (collected, and refused by afterEach) and a notice.
    await waitFor('the window to apply the job', () => api.host.current[0]!.engine.core.jobs.index.get(job.id)?.state === 'failed');
    assert.deepEqual(api.notifier.shown.filter((n) => n.jobId === job.id), []);
    assert.equal((await row('palette-onboarded'))?.status, 'running', 'the session is kept');
  });

  it('Create Session… goes Back: the steps follow the choices, a suggested name follows the role, Escape creates nothing', async () => {
    const from = prompts.asked.length;
    answers.push('shell', BACK, 'claude', 'worker', BACK, 'reviewer', 'never-made', CANCEL);
    await vscode.commands.executeCommand('mam.createSession');
    // Back at the command step returns to the agent, still shell (5 steps) until claude is picked (4).
    assert.deepEqual(prompts.steps(from).map((s) => s.split(' ')[0]), ['1/4', '2/5', '1/5', '2/4', '3/4', '2/4', '3/4', '4/4']);
    const names = prompts.asked.slice(from).filter((a) => a.kind === 'input' && a.placeholder === 'Its name');
    assert.deepEqual(names.map((a) => a.value), ['worker-claude-1', 'reviewer-claude-1']);
    assert.equal(await row('never-made'), undefined);
  });

  it('Create Session…: installed agent CLIs first, the others marked as not found on PATH', async () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-bin-'));
    for (const name of ['grok', 'codex']) fs.writeFileSync(path.join(bin, name), '#!/bin/sh\n', { mode: 0o755 });
    const missing = ['claude', 'codex', 'gemini', 'opencode', 'copilot', 'qwen', 'grok', 'hermes', 'agy'].filter((a) => !['grok', 'codex'].includes(a) && !engine().core.config.agents[a as 'claude']);
    assert.ok(missing.length > 0);
    const from = prompts.asked.length;
    const saved = process.env.PATH;
    // The engine reads the extension host's environment; the monitor (tmux) must not run without PATH meanwhile.
    engine().core.monitor.stop();
    process.env.PATH = bin;
    try {
      answers.push(CANCEL);
      await vscode.commands.executeCommand('mam.createSession');
    } finally {
      process.env.PATH = saved;
      engine().core.monitor.start();
    }
    const items = prompts.asked[from]!.items!;
    const separators = items.flatMap((i, at) => (i.separator ? [[i.label, at] as const] : []));
    assert.deepEqual(separators.map(([label]) => label), ['installed', 'not installed']);
    const installed = items.slice(1, separators[1]![1]).map((i) => i.label);
    const notInstalled = items.slice(separators[1]![1] + 1);
    for (const name of ['codex', 'grok', 'shell']) assert.ok(installed.includes(name), `${name} is under installed: ${installed.join(', ')}`);
    for (const name of missing) {
      const item = notInstalled.find((i) => i.label === name);
      assert.ok(item, `${name} is under not installed`);
      assert.match(String(item.description), / · not found on PATH$/);
    }
    assert.ok(installed.every((name) => !notInstalled.some((i) => i.label === name)));
  });

  it('Delegate Job… with a typed task: the job is delivered and completes', async () => {
    answers.push('Type the task', 'Summarize the README in three lines');
    await vscode.commands.executeCommand('mam.delegateJob', ref('palette-1'));
    const job = await waitFor('the job', () => engine().core.jobs.index.list().find((j) => j.session === 'palette-1'));
    await waitFor('the job to complete', () => engine().core.jobs.index.get(job.id)?.state === 'completed', 30_000);
    assert.match(fs.readFileSync(job.brief!, 'utf8'), /Summarize the README in three lines/);
  });

  it('Delegate Job… from the palette: session, source and task as steps 1–3, each with a placeholder', async () => {
    const from = prompts.asked.length;
    answers.push('palette-1', 'Type the task', 'List the folders');
    await vscode.commands.executeCommand('mam.delegateJob');
    const job = await waitFor('the job', () => engine().core.jobs.index.list().find((j) => j.session === 'palette-1' && fs.readFileSync(j.brief!, 'utf8').includes('List the folders')));
    await waitFor('the job to complete', () => engine().core.jobs.index.get(job.id)?.state === 'completed', 30_000);
    const shown = prompts.asked.slice(from);
    assert.deepEqual(shown.map((a) => `${a.title} ${a.step}/${a.totalSteps}`), ['Delegate Job 1/3', 'Delegate Job 2/3', 'Delegate Job 3/3']);
    assert.ok(shown.every((a) => a.placeholder), 'every step has a placeholder');
    assert.ok(shown[0]!.items!.some((i) => i.label === 'palette-1'));
  });

  it('Send Message…: the line arrives in the agent exactly as typed', async () => {
    const text = 'check the "flaky" test; $HOME stays as is — 고마워요';
    answers.push(text);
    await vscode.commands.executeCommand('mam.sendMessage', ref('palette-1'));
    await waitFor('the line in the agent', () => linesSeen().includes(text));
  });

  it('Verify Job…: the command runs against the job and its result is recorded', async () => {
    const job = engine().core.jobs.index.list().find((j) => j.session === 'palette-1')!;
    answers.push(`${process.execPath} -e process.exit(process.env.MAM_JOB_ID===process.argv[1]?0:1) ${job.id}`);
    await vscode.commands.executeCommand('mam.verifyJob', { folderIndex: 0, jobId: job.id });
    const verify = engine().core.jobs.index.get(job.id)!.verify as { passed: boolean; exit_code: number };
    assert.deepEqual([verify.passed, verify.exit_code], [true, 0]);
  });

  it('Open Brief: the brief opens in an editor', async () => {
    const job = engine().core.jobs.index.list().find((j) => j.session === 'palette-1')!;
    await vscode.commands.executeCommand('mam.openBrief', { folderIndex: 0, jobId: job.id });
    await waitFor('the brief editor', () => vscode.window.activeTextEditor?.document.uri.fsPath === job.brief);
  });

  it("Show Pane Output: what the job's pane showed, from its line on, in an editor; its log names it", async () => {
    const job = engine().core.jobs.index.list().find((j) => j.session === 'palette-1' && j.state === 'completed')!;
    const file = await waitFor('pane.txt', () => engine().core.jobService.paneTextFile(job.id), 10_000);
    await vscode.commands.executeCommand('mam.showPaneText', { folderIndex: 0, jobId: job.id });
    const editor = await waitFor('the pane output editor', () => (vscode.window.activeTextEditor?.document.uri.fsPath === file ? vscode.window.activeTextEditor : undefined));
    assert.match(editor.document.getText(), new RegExp(`^.*MAM job ${job.id}: read the brief at `));
    await vscode.commands.executeCommand('mam.showJobLog', { folderIndex: 0, jobId: job.id });
    const log = await waitFor('the job log', () => (vscode.window.activeTextEditor?.document.uri.scheme === UriSchemes.jobLog ? vscode.window.activeTextEditor.document : undefined));
    assert.ok(log.getText().includes(`# what its pane showed: ${file} (MAM: Show Pane Output)`), log.getText().slice(0, 400));
  });

  it('Cancel Job: an open job ends cancelled and its session is free again', async () => {
    await engine().core.sessions.create({ name: 'palette-2', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('heartbeats,instant') });
    answers.push('Type the task', 'Watch the logs forever');
    await vscode.commands.executeCommand('mam.delegateJob', ref('palette-2'));
    const job = await waitFor('the open job', () => engine().core.jobs.index.list().find((j) => j.session === 'palette-2' && j.state === 'started'), 30_000);
    await vscode.commands.executeCommand('mam.cancelJob', { folderIndex: 0, jobId: job.id });
    assert.deepEqual([engine().core.jobs.index.get(job.id)!.state, engine().core.jobs.index.get(job.id)!.reason], ['cancelled', 'cancelled_by_user']);
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
    const from = prompts.asked.length;
    answers.push('carol', 'Proofread the changelog');
    await vscode.commands.executeCommand('mam.delegateToPerson');
    assert.deepEqual(prompts.steps(from), ['1/2 Who? Their name, e.g. alice', '2/2 The task for carol']);
    const job = await waitFor('the task', () => engine().core.jobs.index.list().find((j) => j.session === 'human:carol'));
    await waitFor('it to be assigned', () => engine().core.jobs.index.get(job.id)?.state === 'dispatched');
    const row = api.jobs.getTreeItem({ kind: 'job', folderIndex: 0, jobId: job.id, group: 'running' });
    assert.match(String(row.contextValue), /^mam\.job\.dispatched.*\.person$/, 'the row offers Start Task');
    assert.match(String(row.description), /^assigned · .* · carol$/);
    await waitFor('the status bar to count the task as assigned', () => api.statusBar.counts().assigned === 1 && /\b1 assigned\b/.test(api.statusBar.item.text));
    await vscode.commands.executeCommand('mam.startPersonJob', { folderIndex: 0, jobId: job.id });
    await waitFor('the task to start', () => engine().core.jobs.index.get(job.id)?.state === 'started');
    answers.push('proofread, three typos fixed');
    await vscode.commands.executeCommand('mam.completePersonJob', { folderIndex: 0, jobId: job.id });
    await waitFor('the task to complete', () => engine().core.jobs.index.get(job.id)?.state === 'completed');
    assert.equal(engine().core.jobs.index.get(job.id)!.detail, 'proofread, three typos fixed');
  });

  it('Stop Broker and Start Broker: the embedded broker stops and comes back on its port; nothing to do is said so', async () => {
    const before = engine().embeddedBroker()!;
    assert.equal(before.running, true, 'the engine started the embedded broker');
    assert.equal(engine().core.jobs.index.list().filter((j) => ['registered', 'dispatched', 'started'].includes(j.state)).length, 0, 'no open job: no question');
    await vscode.commands.executeCommand('mam.stopBroker');
    assert.equal(engine().embeddedBroker()!.running, false);
    const infos = prompts.infos.length;
    await vscode.commands.executeCommand('mam.stopBroker');
    const said = () => prompts.infos.slice(infos).filter((m) => m.startsWith('MAM: the broker'));
    assert.deepEqual(said(), ['MAM: the broker is not running.']);
    await vscode.commands.executeCommand('mam.startBroker');
    const after = engine().embeddedBroker()!;
    assert.deepEqual([after.running, after.port], [true, before.port]);
    await vscode.commands.executeCommand('mam.startBroker');
    assert.deepEqual(said(), ['MAM: the broker is not running.', 'MAM: the broker is already running.']);
  });

  it('Stop All Sessions asks once, naming how many, and stops every running session', async () => {
    await engine().core.sessions.create({ name: 'palette-3', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('work') });
    const running = (await engine().core.controlPlane.sessions.list()).filter((r) => r.status === 'running');
    assert.ok(running.length >= 2, running.map((r) => r.name).join());
    const from = prompts.asked.length;
    answers.push('Cancel');
    await vscode.commands.executeCommand('mam.stopAllSessions');
    assert.equal((await engine().core.controlPlane.sessions.list()).filter((r) => r.status === 'running').length, running.length, 'declined: nothing stopped');
    answers.push(`Stop ${running.length} Sessions`);
    await vscode.commands.executeCommand('mam.stopAllSessions');
    assert.deepEqual(prompts.asked.slice(from).map((a) => [a.kind, a.title]), [
      ['modal', `Stop all ${running.length} running sessions?`],
      ['modal', `Stop all ${running.length} running sessions?`],
    ]);
    for (const r of running) assert.equal((await row(r.name))!.status, 'stopped', r.name);
    const infos = prompts.infos.length;
    await vscode.commands.executeCommand('mam.stopAllSessions');
    assert.ok(prompts.infos.slice(infos).includes('MAM: no session is running.'));
  });

  it('Stop Monitor and Start Monitor, Run Doctor', async () => {
    await vscode.commands.executeCommand('mam.stopMonitor');
    assert.equal(engine().core.monitor.running, false);
    await vscode.commands.executeCommand('mam.startMonitor');
    assert.equal(engine().core.monitor.running, true);
    await vscode.commands.executeCommand('mam.runDoctor');
  });
});
