import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import { waitFor } from '../waitFor';
import { cleanUp, fakeAgentCommand, mamApi } from './support';

const OPEN = ['registered', 'dispatched', 'started'];

/**
 * The status-bar item says what MAM is doing in words, and only when there is something to say:
 * hidden when idle, "N running" on the normal background, the warning background only when
 * something needs the user (a permission request, a failure not yet seen in the Jobs view).
 */
describe('the status bar item', function () {
  this.timeout(90_000);
  let api: MamApi;
  const engine = () => api.host.current[0]!.engine;
  const bar = () => api.statusBar.item;
  // ThemeColor keeps its id at run time; the type does not declare it.
  const background = () => (bar().backgroundColor as { id?: string } | undefined)?.id;
  const tooltip = () => (bar().tooltip as vscode.MarkdownString).value;
  const openJobs = () => engine().core.jobs.index.list().filter((j) => OPEN.includes(j.state));

  /** Shows the Jobs view (failures count as seen) and closes the side bar again. */
  const lookAtJobs = async () => {
    await vscode.commands.executeCommand('mam.jobs.focus');
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
  };

  before(async () => {
    api = await mamApi();
    // A clean slate: whatever jobs earlier suites left open are ended, earlier failures seen.
    for (const job of openJobs()) await engine().core.jobService.cancel(job.id);
    await lookAtJobs();
  });
  after(async () => {
    for (const job of openJobs()) await engine().core.jobService.cancel(job.id);
    await cleanUp(api);
  });

  it('is hidden when no job is open and nothing needs the user', async () => {
    await waitFor('the item to hide', () => !api.statusBar.visible);
    assert.deepEqual(api.statusBar.counts(), { running: 0, planTasks: 0, assigned: 0, blocked: 0, attention: 0, failed: 0 });
  });

  it('one running job: "1 running", labelled, on the normal background', async () => {
    await engine().core.sessions.create({ name: 'bar-worker_1.a', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('heartbeats') });
    const { job } = await engine().core.jobService.submit({ session: 'bar-worker_1.a', prompt: 'Watch the build' });
    await waitFor('the item to show the running job', () => api.statusBar.visible && bar().text === '$(hubot) 1 running');
    assert.equal(background(), undefined, 'nothing needs the user');
    assert.equal(bar().name, 'Multi-Agent Mux');
    assert.match(tooltip(), /^\| Multi-Agent Mux \| \|\n\|:--\|--:\|\n\| Jobs running \| 1 \|\n/);
    assert.match(tooltip(), /\| Failed or timed out, not yet seen \| 0 \|\n\nClick to open the Jobs view \(failures there count as seen\)\.$/);
    assert.equal(bar().accessibilityInformation?.label, 'Multi-Agent Mux: 1 job running. Opens the Jobs view.');
    await engine().core.jobService.cancel(job.id);
    await waitFor('the item to hide once the job is cancelled', () => !api.statusBar.visible);
  });

  it('one job waiting for permission: "1 needs you" on the warning background', async () => {
    await engine().core.sessions.create({ name: 'bar-asker_1.b', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('permission', ['--work-ms', '600000']) });
    const { job } = await engine().core.jobService.submit({ session: 'bar-asker_1.b', prompt: 'Clean the build folder' });
    await waitFor('the item to ask for the user', () => bar().text === '$(hubot) 1 needs you', 30_000);
    assert.equal(background(), 'statusBarItem.warningBackground');
    assert.match(tooltip(), /\| Jobs waiting for permission \| 1 \|/);
    assert.equal(bar().accessibilityInformation?.label, 'Multi-Agent Mux: 1 waiting for permission. Opens the Jobs view.');
    await engine().core.jobService.cancel(job.id);
    await waitFor('the item to hide once the job is cancelled', () => !api.statusBar.visible);
  });

  it('a failure stays on the warning background until the Jobs view has shown it', async () => {
    await engine().core.sessions.create({ name: 'bar-breaker_1.c', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('error') });
    const { job } = await engine().core.jobService.submit({ session: 'bar-breaker_1.c', prompt: 'Try the impossible' });
    await waitFor('the job to fail', () => engine().core.jobs.index.get(job.id)?.state === 'failed', 30_000);
    await waitFor('the item to show the failure', () => bar().text === '$(hubot) 1 failed');
    assert.equal(background(), 'statusBarItem.warningBackground');
    await lookAtJobs();
    await waitFor('the item to hide once the failure was seen', () => !api.statusBar.visible);
  });
});
