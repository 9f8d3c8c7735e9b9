import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { readEmbeddedEndpoint } from '../../../src/core/messaging/brokerEndpoint';
import { connectClient, uniqueClientId } from '../../../src/core/messaging/mqttClient';
import { stopEmbeddedBroker } from '../../../src/core/messaging/embeddedBroker';
import { TmuxBackend } from '../../../src/core/mux/tmux';
import type { ControlPlanePaths } from '../../../src/core/store/paths';
import type { MamApi } from '../../../src/extension';
import type { FolderEngine } from '../../../src/views/host/engineHost';
import type { JobsNode } from '../../../src/views/jobs/jobsTree';
import type { LoopsNode } from '../../../src/views/loops/loopsTree';
import type { MergeQueueNode } from '../../../src/views/merge/mergeQueueTree';
import type { PlansNode } from '../../../src/views/plans/plansTree';
import type { SessionsNode } from '../../../src/views/sessions/sessionsTree';
import { UriSchemes } from '../../../src/views/shared/uriSchemes';
import { waitFor } from '../waitFor';
import { CANCEL, Prompts } from './prompts';
import { cleanUp, fakeAgentCommand, FOLDER_QUESTION, mamApi } from './support';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.invalid' };

/**
 * A window opened on a .code-workspace with three git folders (scripts/vscode/run.mjs
 * --multi-root): api and web hold `.mam/`, docs does not. Each MAM folder has its own broker,
 * control plane and tmux server; the views group by folder; palette commands ask which folder and
 * row commands take it from the row; notifications name the folder. Last, web leaves the window:
 * one MAM folder beside one without, and nothing groups or asks any more.
 */
describe('a multi-root window: two folders using MAM, each with its own broker, control plane and tmux server', function () {
  this.timeout(120_000);
  let api: MamApi;
  const prompts = new Prompts();
  const { answers, asked } = prompts;
  /** What to stop for web once it has left the window (its engine is gone then). */
  let webLeftovers: { paths: ControlPlanePaths; server: string } | undefined;
  const fe = (name: string): FolderEngine => api.host.current.find((f) => f.folder.name === name)!;
  const server = (name: string) => fe(name).engine.core.sessions.defaultServer('tmux');
  const row = async (folder: string, name: string) => (await fe(folder).engine.core.controlPlane.sessions.list()).find((r) => r.name === name);
  const folderAsked = (from: number) => asked.slice(from).filter((a) => a.placeholder === FOLDER_QUESTION);
  const shell = (mode: string, log: string) => fakeAgentCommand(mode, ['--log', log]).join(' ');
  /** What each folder's `dev` agent was typed, line by line (the scripted agent logs it). */
  const logs = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-multiroot-'));
  const devLog = (folder: string) => path.join(logs, `${folder}-dev.ndjson`);
  const linesTyped = (folder: string): string[] =>
    fs.existsSync(devLog(folder)) ? fs.readFileSync(devLog(folder), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { event: string; text?: string }).filter((e) => e.event === 'line').map((e) => e.text ?? '') : [];
  const rootOf = async <T>(provider: vscode.TreeDataProvider<T>) => (await provider.getChildren()) as T[];
  const label = (item: vscode.TreeItem) => (typeof item.label === 'string' ? item.label : item.label?.label);

  before(async () => {
    api = await mamApi();
    await waitFor('both engines to start', () => api.host.mamFolders.length === 2 && api.host.mamFolders.every((f) => f.engine.core.monitor.running && f.engine.embeddedBroker()?.running), 30_000);
    Object.assign(process.env, GIT_ENV);
    prompts.install();
  });
  after(async () => {
    prompts.restore();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await cleanUp(api);
    fs.rmSync(logs, { recursive: true, force: true });
    if (webLeftovers) {
      await new TmuxBackend({ server: webLeftovers.server, env: process.env }).killServer();
      await stopEmbeddedBroker(webLeftovers.paths);
    }
  });
  afterEach(() => {
    assert.deepEqual(prompts.errors.splice(0), [], 'no command reported an error');
    assert.deepEqual(answers.splice(0), [], 'every prepared answer was asked for');
  });

  it('api and web each have their own control plane, embedded broker and tmux server; docs gets none, and the offer to initialize', () => {
    assert.deepEqual(api.host.mamFolders.map((f) => f.folder.name), ['api', 'web']);
    const [a, w] = [fe('api').engine, fe('web').engine];
    assert.deepEqual([a.core.controlPlane.paths.dir, w.core.controlPlane.paths.dir], [path.join(fe('api').folder.uri.fsPath, '.mam'), path.join(fe('web').folder.uri.fsPath, '.mam')]);
    const ports = [a, w].map((e) => JSON.parse(fs.readFileSync(path.join(e.core.controlPlane.paths.dir, 'broker.json'), 'utf8')).port as number);
    assert.equal(ports[0], a.embeddedBroker()!.port);
    assert.equal(ports[1], w.embeddedBroker()!.port);
    assert.notEqual(ports[0], ports[1], 'two brokers, two ports');
    assert.notEqual(server('api'), server('web'), 'two tmux servers');
    assert.equal(fs.existsSync(path.join(fe('docs').folder.uri.fsPath, '.mam')), false, 'nothing made in docs');
    assert.equal(fe('docs').engine.started, false);
    assert.deepEqual(api.init.offered, [fe('docs').folder.index], 'the offer to initialize is for docs alone');
  });

  it('a window-wide mam.tmuxServer puts both folders on one tmux server: each keeps its own sessions, adopts none of the other\'s, and nobody is warned', async () => {
    const config = vscode.workspace.getConfiguration('mam');
    const shown = api.notifier.shown.length;
    await config.update('tmuxServer', 'mam-team', vscode.ConfigurationTarget.Workspace);
    try {
      await waitFor('both folders on mam-team, started', () => api.host.mamFolders.length === 2 && server('api') === 'mam-team' && server('web') === 'mam-team' && api.host.mamFolders.every((f) => f.engine.core.monitor.running), 20_000);
      for (const name of ['api', 'web']) {
        await fe(name).engine.core.sessions.create({ name: `on-team-${name}`, agent: 'shell', role: 'worker', baseDir: fe(name).folder.uri.fsPath, command: ['sleep', '600'] });
      }
      for (const name of ['api', 'web']) {
        const report = await fe(name).engine.core.monitor.pass();
        assert.ok(report, `${name}'s monitor ran a pass`);
        assert.deepEqual(report.registered, [], `${name} adopts nothing of the other folder's`);
        assert.deepEqual((await fe(name).engine.core.controlPlane.sessions.list()).filter((r) => r.name.startsWith('on-team-')).map((r) => [r.name, r.server]), [[`on-team-${name}`, 'mam-team']]);
      }
      assert.equal(api.notifier.shown.slice(shown).filter((n) => n.kind === 'shared').length, 0, 'a shared tmux server is fine: no warning');
    } finally {
      // Gone again, so that the tests below count only their own sessions.
      for (const name of ['api', 'web']) await fe(name).engine.core.controlPlane.sessions.mutate((tx) => tx.get(`on-team-${name}`) && tx.remove(`on-team-${name}`));
      await new TmuxBackend({ server: 'mam-team' }).killServer().catch(() => undefined);
      await config.update('tmuxServer', undefined, vscode.ConfigurationTarget.Workspace);
    }
    // The engines are rebuilt (none while building): wait for both again, each on its own server, started.
    await waitFor('each folder on its own server, started again', () => api.host.mamFolders.length === 2 && server('api') !== 'mam-team' && server('api') !== server('web') && api.host.mamFolders.every((f) => f.engine.core.monitor.running), 20_000);
    assert.deepEqual(prompts.warnings.splice(0), []);
  });

  it('Create Session… from the palette asks the folder first; the session is in web’s registry and on web’s tmux server only', async () => {
    const from = asked.length;
    answers.push('web', 'shell', shell('work', devLog('web')), 'worker', 'dev', 'Skip onboarding');
    await vscode.commands.executeCommand('mam.createSession');
    const dev = await waitFor('the session in web', () => row('web', 'dev'));
    assert.deepEqual(folderAsked(from).map((a) => [a.title, a.items!.map((i) => i.label)]), [['Create Session', ['$(root-folder) api', '$(root-folder) web']]]);
    assert.equal(asked[from + 1]!.title, 'Create Session');
    assert.equal(dev.server, server('web'));
    assert.equal(await row('api', 'dev'), undefined, 'not in api’s registry');
    assert.equal(await new TmuxBackend({ server: server('api'), env: process.env }).isRunning(), false, 'api’s tmux server was not started');
    assert.ok(await new TmuxBackend({ server: server('web'), env: process.env }).isRunning());
  });

  it('Create Session on api’s row in the Sessions view: no folder question; a session of the same name lives in each folder', async () => {
    const apiRow = (await rootOf(api.sessions)).find((n) => n.kind === 'folder' && n.folderIndex === fe('api').folder.index);
    assert.ok(apiRow, 'api has its row');
    const from = asked.length;
    answers.push('shell', shell('work', devLog('api')), 'worker', 'dev', 'Skip onboarding');
    await vscode.commands.executeCommand('mam.createSession', apiRow);
    const dev = await waitFor('the session in api', () => row('api', 'dev'));
    assert.deepEqual(folderAsked(from), []);
    assert.equal(dev.server, server('api'));
    assert.notEqual(dev.server, (await row('web', 'dev'))!.server, 'each on its folder’s tmux server');
  });

  it('the Sessions view groups by folder, as VS Code’s multi-root views do: a row per MAM folder, named by it, its sessions under it', async () => {
    const root = await waitFor('two folder rows', async () => {
      const nodes = await rootOf(api.sessions);
      return nodes.length === 2 && nodes.every((n) => n.kind === 'folder') ? nodes : undefined;
    });
    const items = await Promise.all(root.map((n) => api.sessions.getTreeItem(n)));
    assert.deepEqual(items.map(label), ['api', 'web']);
    for (const [i, item] of items.entries()) {
      assert.equal(item.contextValue, 'mam.folder');
      assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
      assert.equal(item.resourceUri?.toString(), api.host.mamFolders[i]!.folder.uri.toString(), 'the file icon theme’s folder icon, as in the Explorer');
      assert.equal(item.description, '1 of 1 running');
      assert.match((item.tooltip as vscode.MarkdownString).value, new RegExp(`broker: embedded, \`127\\.0\\.0\\.1:${api.host.mamFolders[i]!.engine.embeddedBroker()!.port}\``));
    }
    const web = (await api.sessions.getChildren(root[1])) as SessionsNode[];
    assert.deepEqual(web, [{ kind: 'session', folderIndex: fe('web').folder.index, name: 'dev' }]);
    assert.deepEqual(api.sessions.getParent(web[0]!), root[1]);
  });

  it('Delegate Job… from the palette: folder, then that folder’s sessions; the job runs on api’s broker and shows under api', async () => {
    const from = asked.length;
    const shown = api.notifier.shown.length;
    answers.push('api', 'dev', 'Type the task', 'Write the api changelog');
    await vscode.commands.executeCommand('mam.delegateJob');
    const job = await waitFor('the job in api', () =>  fe('api').engine.core.jobs.index.list().find((j) => j.brief && fs.readFileSync(j.brief, 'utf8').includes('Write the api changelog')));
    assert.equal(folderAsked(from).length, 1);
    const sessionStep = asked.slice(from).find((a) => a.title === 'Delegate Job' && a.step === 1)!;
    assert.deepEqual(sessionStep.items!.map((i) => i.label), ['dev'], 'only api’s sessions');
    assert.equal(fe('web').engine.core.jobs.index.get(job.id), undefined, 'not in web’s control plane');
    await waitFor('the job to complete', () => fe('api').engine.core.jobs.index.get(job.id)?.state === 'completed', 30_000);
    // Its retained state is on api's broker, and web's broker has never heard of it.
    assert.deepEqual(await retainedStates(fe('api'), job.id), [`mam/${fe('api').engine.core.jobs.workspaceId}/jobs/${job.id}/state`]);
    assert.deepEqual(await retainedStates(fe('web'), job.id), []);
    // The Jobs view: api's row holds it, web's does not.
    const root = await rootOf(api.jobs);
    assert.deepEqual(root.map((n) => n.kind), ['folder', 'folder']);
    const under = async (node: JobsNode) => ((await api.jobs.getChildren(node)) as JobsNode[]).flatMap((g) => (g.kind === 'group' ? [g] : []));
    const completed = (await under(root[0]!)).find((g) => g.kind === 'group' && g.group === 'completed')!;
    assert.ok(((await api.jobs.getChildren(completed)) as JobsNode[]).some((n) => n.kind === 'job' && n.jobId === job.id));
    assert.deepEqual(await under(root[1]!), [], 'web has no job');
    assert.equal(api.jobs.getTreeItem(root[1]!).description, 'no jobs');
    // Its one message names the folder.
    const done = await waitFor('the completion message', () => api.notifier.shown.slice(shown).find((n) => n.jobId === job.id && n.kind === 'completed'));
    assert.match(done.message, /^MAM: api: dev completed /);
  });

  it('the status bar counts both folders, and its tooltip says which folder holds what', async () => {
    await fe('api').engine.core.sessions.create({ name: 'long', agent: 'claude', role: 'worker', baseDir: fe('api').folder.uri.fsPath, command: fakeAgentCommand('heartbeats') });
    const { job: running } = await fe('api').engine.core.jobService.submit({ session: 'long', prompt: 'Keep watching the logs' });
    const { job: task } = await fe('web').engine.core.jobService.submit({ session: 'human:dana', prompt: 'Proofread the web copy' });
    await waitFor('the counts', () => api.statusBar.counts().running === 1 && api.statusBar.counts().assigned === 1, 30_000);
    assert.equal(api.statusBar.item.text, '$(hubot) 1 running · 1 assigned');
    const tooltip = (api.statusBar.item.tooltip as vscode.MarkdownString).value;
    assert.match(tooltip, /^\| Multi-Agent Mux \| api \| web \|\n\|:--\|--:\|--:\|\n/);
    assert.match(tooltip, /\| Jobs running \| 1 \| 0 \|\n/);
    assert.match(tooltip, /\| Tasks assigned to people \| 0 \| 1 \|\n/);
    // Cancelled from their rows in the Jobs view: the folder comes from the row.
    const from = asked.length;
    await vscode.commands.executeCommand('mam.cancelJob', { kind: 'job', folderIndex: fe('api').folder.index, jobId: running.id, group: 'running' });
    await vscode.commands.executeCommand('mam.cancelJob', { kind: 'job', folderIndex: fe('web').folder.index, jobId: task.id, group: 'running' });
    assert.deepEqual([fe('api').engine.core.jobs.index.get(running.id)!.state, fe('web').engine.core.jobs.index.get(task.id)!.state], ['cancelled', 'cancelled']);
    assert.deepEqual(asked.slice(from), [], 'nothing asked');
    await waitFor('the status bar to have nothing to say', () => !api.statusBar.visible);
  });

  it('notifications name the folder: a permission request in web; web’s sessions lost with its tmux server, api’s untouched; Resume All on web’s row', async () => {
    const shown = api.notifier.shown.length;
    await fe('web').engine.core.sessions.create({ name: 'asker', agent: 'claude', role: 'worker', baseDir: fe('web').folder.uri.fsPath, command: fakeAgentCommand('permission', ['--work-ms', '2000']) });
    const { job } = await fe('web').engine.core.jobService.submit({ session: 'asker', prompt: 'Clean the build folder' });
    const asking = await waitFor('the permission notification', () => api.notifier.shown.slice(shown).find((n) => n.kind === 'permission' && n.jobId === job.id), 30_000);
    assert.match(asking.message, /^MAM: web: asker needs permission: /);
    await waitFor('the job to complete', () => fe('web').engine.core.jobs.index.get(job.id)?.state === 'completed', 30_000);

    execFileSync('tmux', ['-L', server('web'), 'kill-server']);
    const lost = await waitFor('the lost-sessions notification', () => api.notifier.shown.slice(shown).find((n) => n.kind === 'lost'), 30_000);
    assert.match(lost.message, /^MAM: web: 2 sessions \((asker, dev|dev, asker)\) have stopped: their terminal server went away\.$/);
    assert.equal((await row('api', 'dev'))!.status, 'running', 'api’s sessions run on');

    const webRow = (await rootOf(api.sessions)).find((n) => n.kind === 'folder' && n.folderIndex === fe('web').folder.index)!;
    const from = asked.length;
    await vscode.commands.executeCommand('mam.resumeAllSessions', webRow);
    assert.deepEqual(folderAsked(from), []);
    assert.deepEqual([(await row('web', 'dev'))!.status, (await row('web', 'asker'))!.status], ['running', 'running']);
  });

  it('commands on tree rows take the folder from the row: Delegate Job on web’s row, Send Message, Copy Conversation ID, Show Job Log, Stop and Resume', async () => {
    const from = asked.length;
    const webIndex = fe('web').folder.index;
    const webRow = (await rootOf(api.sessions)).find((n) => n.kind === 'folder' && n.folderIndex === webIndex)!;
    answers.push('dev', 'Type the task', 'Write the web changelog');
    await vscode.commands.executeCommand('mam.delegateJob', webRow);
    const job = await waitFor('the job in web', () => fe('web').engine.core.jobs.index.list().find((j) => j.brief && fs.readFileSync(j.brief, 'utf8').includes('Write the web changelog')));
    assert.deepEqual(asked.slice(from).find((a) => a.step === 1)!.items!.map((i) => i.label).sort(), ['asker', 'dev'], 'web’s running sessions');
    await waitFor('the job to complete', () => fe('web').engine.core.jobs.index.get(job.id)?.state === 'completed', 30_000);

    const devRow = ((await api.sessions.getChildren(webRow)) as SessionsNode[]).find((n) => n.kind === 'session' && n.name === 'dev')!;
    answers.push('hello from the web row');
    await vscode.commands.executeCommand('mam.sendMessage', devRow);
    await waitFor('the line in web’s dev', () => linesTyped('web').includes('hello from the web row'));
    assert.ok(!linesTyped('api').includes('hello from the web row'), 'not in api’s dev of the same name');
    const askerRow = ((await api.sessions.getChildren(webRow)) as SessionsNode[]).find((n) => n.kind === 'session' && n.name === 'asker')!;
    await vscode.commands.executeCommand('mam.copyConversationId', askerRow);
    const conversation = (await row('web', 'asker'))!.conversation_id;
    assert.ok(conversation);
    assert.equal(await vscode.env.clipboard.readText(), conversation);

    const jobRow = ((await api.sessions.getChildren(devRow)) as SessionsNode[]).find((n) => n.kind === 'job' && n.jobId === job.id)!;
    await vscode.commands.executeCommand('mam.showJobLog', jobRow);
    await waitFor('the job log', () => vscode.window.activeTextEditor?.document.uri.toString() === `${UriSchemes.jobLog}:/${webIndex}/${job.id}.log`);
    assert.match(vscode.window.activeTextEditor!.document.getText(), new RegExp(`# job ${job.id}`));

    await vscode.commands.executeCommand('mam.stopSession', devRow);
    assert.deepEqual([(await row('web', 'dev'))!.status, (await row('api', 'dev'))!.status], ['stopped', 'running'], 'web’s dev stopped, api’s dev did not');
    await vscode.commands.executeCommand('mam.resumeSession', devRow);
    assert.equal((await row('web', 'dev'))!.status, 'running');
    assert.deepEqual(folderAsked(from), [], 'no folder was asked');
  });

  it('a review loop in web shows under web in the Loops view; its branch is queued from the loop’s row and lands from web’s Merge Queue row', async () => {
    const web = fe('web');
    const webDir = fs.realpathSync(web.folder.uri.fsPath);
    const worktree = path.join(path.dirname(webDir), 'web-feature');
    execFileSync('git', ['worktree', 'add', '-q', '-b', 'web-feature', worktree], { cwd: webDir });
    const session = (name: string, role: string, mode: string) => web.engine.core.sessions.create({ name, agent: 'claude', role, cwd: worktree, baseDir: webDir, command: fakeAgentCommand(mode) });
    await session('web-creator', 'creator', 'creator');
    await session('web-reviewer', 'reviewer', 'reviewer');
    await vscode.commands.executeCommand('mam.runLoop', { folderIndex: web.folder.index, task: 'Make the web start stronger', creator: 'web-creator', reviewers: ['web-reviewer'], worktree });
    const loop = await waitFor('the loop to pass', () => web.engine.core.loops.list().find((l) => l.status === 'passed'), 60_000);

    const loops = await rootOf(api.loops);
    assert.deepEqual(await Promise.all(loops.map(async (n) => label(await api.loops.getTreeItem(n)))), ['api', 'web']);
    assert.deepEqual(await api.loops.getChildren(loops[0]), [], 'api has no loop');
    const [loopRow] = (await api.loops.getChildren(loops[1])) as LoopsNode[];
    assert.deepEqual(loopRow, { kind: 'loop', folderIndex: web.folder.index, loopId: loop.id });
    assert.deepEqual(api.loops.getParent(loopRow!), loops[1]);

    const from = asked.length;
    answers.push(`${process.execPath} -e process.exit(0)`);
    await vscode.commands.executeCommand('mam.enqueueMerge', loopRow);
    const queue = await rootOf(api.mergeQueue);
    assert.deepEqual(queue.map((n) => n.kind), ['folder', 'folder']);
    const [entry] = (await api.mergeQueue.getChildren(queue[1])) as MergeQueueNode[];
    assert.ok(entry && entry.kind === 'entry', 'the entry is under web');
    assert.deepEqual(await api.mergeQueue.getChildren(queue[0]), []);

    await vscode.commands.executeCommand('mam.runMergeQueue', queue[1]);
    assert.ok(prompts.infos.includes('Merge queue of web: landed web-feature.'), prompts.infos.join(' | '));
    assert.deepEqual(folderAsked(from), []);
    fs.rmSync(worktree, { recursive: true, force: true });
  });

  it('a plan run from web’s row in the Plans view: no folder question, its plan file picked from web’s files; it shows under web, and api says it has none', async () => {
    const web = fe('web');
    const webDir = fs.realpathSync(web.folder.uri.fsPath);
    const agent = (mode: string) => JSON.stringify({ agent: 'shell', command: fakeAgentCommand(mode, mode === 'creator' ? ['--file', '@cwd'] : []).map((w) => JSON.stringify(w)).join(' ') });
    fs.writeFileSync(path.join(webDir, 'plan.yaml'), `title: Web copy\ndefaults: { creator: ${agent('creator')}, reviewers: [${agent('reviewer')}], max_loop: 1 }\ntasks:\n  - id: copy\n    task: Sharpen the landing copy\n`);
    const from = asked.length;
    answers.push('plan.yaml');
    await vscode.commands.executeCommand('mam.runPlan', { kind: 'folder', folderIndex: web.folder.index });
    assert.deepEqual(folderAsked(from), [], 'no folder was asked');
    assert.deepEqual(asked.slice(from).map((a) => [a.title, a.items?.map((i) => i.label)]), [['Run Plan', ['$(file) plan.yaml', '$(folder-opened) Browse…']]], 'web’s files only');
    const plan = await waitFor('the plan to land', () => web.engine.core.plans.listing().plans.find((p) => p.status === 'landed' && p.owner === null), 90_000);
    const roots = await waitFor('a row per folder in the Plans view', async () => {
      const nodes = await rootOf(api.plans);
      return nodes.length === 2 ? nodes : undefined;
    });
    assert.deepEqual(roots.map((n) => [label(api.plans.getTreeItem(n)), api.plans.getTreeItem(n).description]), [['api', 'no plans'], ['web', '1 ended']]);
    assert.deepEqual(await api.plans.getChildren(roots[0]), []);
    const [planRow] = (await api.plans.getChildren(roots[1])) as PlansNode[];
    assert.deepEqual(planRow, { kind: 'plan', folderIndex: web.folder.index, planId: plan.id });
    assert.deepEqual(api.plans.getParent(planRow!), roots[1]);
    assert.equal(api.plans.getTreeItem(planRow!).description, 'landed · 1 task');
    fs.rmSync(path.join(webDir, 'plan.yaml'));
  });

  it('a folder without .mam/ beside one with it: once web leaves the window, the views show api alone and no command asks which folder', async () => {
    webLeftovers = { paths: fe('web').engine.core.controlPlane.paths, server: server('web') };
    assert.ok(vscode.workspace.updateWorkspaceFolders(fe('web').folder.index, 1));
    await waitFor('web to leave', () => api.host.current.length === 2 && api.host.current.every((f) => f.folder.name !== 'web'), 20_000);
    assert.deepEqual(api.host.mamFolders.map((f) => f.folder.name), ['api']);
    assert.equal(api.host.multiRoot, false);

    // No folder rows: api's sessions, job groups, loops and queue entries at the top; nothing of docs.
    const sessions = await waitFor('api’s sessions at the top', async () => {
      const nodes = await rootOf(api.sessions);
      return nodes.length > 0 && nodes.every((n) => n.kind === 'session' && n.folderIndex === 0) ? nodes : undefined;
    });
    assert.deepEqual(sessions.map((n) => n.kind === 'session' && n.name).sort(), ['dev', 'long']);
    assert.ok((await rootOf(api.jobs)).every((n) => n.kind === 'group' && n.folderIndex === 0));
    assert.deepEqual(await rootOf(api.loops), []);
    assert.deepEqual(await rootOf(api.mergeQueue), []);
    assert.deepEqual(await rootOf(api.plans), []);
    const { job: task } = await fe('api').engine.core.jobService.submit({ session: 'human:erin', prompt: 'Read the api docs' });
    await waitFor('the status bar to count the task', () => api.statusBar.visible && api.statusBar.item.text === '$(hubot) 1 assigned');
    assert.match((api.statusBar.item.tooltip as vscode.MarkdownString).value, /^\| Multi-Agent Mux \| \|\n\|:--\|--:\|\n/, 'one column: one folder');
    await fe('api').engine.core.jobService.cancel(task.id);
    assert.equal(api.host.where(0), '', 'messages no longer name the folder');

    // The palette: api without asking; Initialize Workspace offers both folders (docs is how it would start).
    const from = asked.length;
    answers.push(CANCEL);
    await vscode.commands.executeCommand('mam.createSession');
    assert.deepEqual(folderAsked(from), []);
    assert.equal(asked[from]!.title, 'Create Session');
    answers.push(CANCEL);
    await vscode.commands.executeCommand('mam.initWorkspace');
    assert.deepEqual(folderAsked(from).map((a) => a.items!.map((i) => i.label)), [['$(root-folder) api', '$(root-folder) docs']]);
    assert.equal(fs.existsSync(path.join(fe('docs').folder.uri.fsPath, '.mam')), false, 'docs is left as it was');
  });

  it('a git folder added to the window is offered Initialize Workspace, as docs was when the window opened', async () => {
    const blog = path.join(path.dirname(fe('api').folder.uri.fsPath), 'blog');
    fs.mkdirSync(blog);
    execFileSync('git', ['init', '-q'], { cwd: blog });
    const offered = api.init.offered.length;
    assert.ok(vscode.workspace.updateWorkspaceFolders(api.host.current.length, 0, { uri: vscode.Uri.file(blog) }));
    await waitFor('the offer for blog', () => api.init.offered.length > offered, 20_000);
    assert.deepEqual(api.init.offered.slice(offered).map((i) => vscode.workspace.workspaceFolders?.[i]?.name), ['blog']);
    await waitFor('the engines to be rebuilt for the three folders', () => api.host.current.length === 3);
    assert.deepEqual(api.host.mamFolders.map((f) => f.folder.name), ['api'], 'blog does not use MAM until it is initialized');
  });
});

/**
 * The retained state messages a folder's embedded broker holds for a job: subscribed to with a
 * marker published after, so that every retained message has arrived when the marker does.
 */
async function retainedStates(fe: FolderEngine, jobId: string): Promise<string[]> {
  const endpoint = readEmbeddedEndpoint(fe.engine.core.controlPlane.paths);
  assert.ok(endpoint, `${fe.folder.name} has an embedded broker`);
  const client = await connectClient(endpoint, { clientId: uniqueClientId('multiroot-test'), reconnectPeriodMs: 0 });
  try {
    const seen: string[] = [];
    const marker = `mam-test/${jobId}/marker`;
    client.on('message', (topic) => seen.push(topic));
    await client.subscribeAsync([`mam/+/jobs/${jobId}/state`, marker], { qos: 1 });
    await client.publishAsync(marker, 'x', { qos: 1 });
    await waitFor('the marker', () => seen.includes(marker));
    return seen.filter((t) => t !== marker);
  } finally {
    await client.endAsync(true);
  }
}
