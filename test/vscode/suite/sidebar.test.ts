import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import type { SessionsNode } from '../../../src/views/sessions/sessionsTree';
import type { JobsNode } from '../../../src/views/jobs/jobsTree';
import { UriSchemes } from '../../../src/views/shared/uriSchemes';
import { waitFor } from '../waitFor';
import { cleanUp, fakeAgentCommand, mamApi } from './support';

describe('the sidebar, the status bar and notifications follow sessions and jobs', function () {
  this.timeout(90_000);
  let api: MamApi;
  before(async () => {
    api = await mamApi();
  });
  after(async () => {
    await cleanUp(api);
  });

  const engine = () => api.host.current[0]!.engine;
  const sessionItems = async () => {
    const nodes = (await api.sessions.getChildren()) as SessionsNode[];
    return Promise.all(nodes.map(async (n) => ({ node: n, item: await api.sessions.getTreeItem(n) })));
  };
  const jobGroups = async () => {
    const groups = (await api.jobs.getChildren()) as JobsNode[];
    const out: Record<string, string[]> = {};
    for (const g of groups) {
      if (g.kind !== 'group') continue;
      out[g.group] = ((await api.jobs.getChildren(g)) as JobsNode[]).map((j) => (j.kind === 'job' ? j.jobId : ''));
    }
    return out;
  };
  const iconOf = (item: vscode.TreeItem) => (item.iconPath as vscode.ThemeIcon).id;

  it('a new session with the scripted fake agent shows in the Sessions tree as running', async () => {
    await engine().core.sessions.create({ name: 'creator-1', agent: 'claude', role: 'creator', baseDir: engine().workspace, command: fakeAgentCommand('work') });
    const row = await waitFor('the session row', async () => (await sessionItems()).find((s) => s.item.label === 'creator-1'));
    assert.equal(row.item.description, 'claude · creator · running');
    assert.equal(iconOf(row.item), 'circle-filled');
    assert.equal(row.item.contextValue, 'mam.session.running.conversation');
    assert.match((row.item.tooltip as vscode.MarkdownString).value, /conversation: `[0-9a-f-]{36}`/);
  });

  it('a delegated job shows in the Jobs tree, moves to completed, and the status bar counts follow', async () => {
    const before = api.statusBar.counts();
    const { job } = await engine().core.jobService.submit({ session: 'creator-1', prompt: 'Write the changelog entry' });
    await waitFor('the job under Running', async () => (await jobGroups()).running?.includes(job.id));
    assert.equal(api.statusBar.counts().running, before.running + 1);
    assert.match(api.statusBar.item.text, new RegExp(`^\\$\\(hubot\\) ${before.running + 1} running`));
    const item = api.jobs.getTreeItem({ kind: 'job', folderIndex: 0, jobId: job.id, group: 'running' });
    assert.equal(item.label, 'Write the changelog entry');
    await waitFor('the job under Completed', async () => (await jobGroups()).completed?.includes(job.id), 30_000);
    assert.equal(api.statusBar.counts().running, before.running);
    // The session shows the job among its own.
    const sessionNode = (await sessionItems()).find((s) => s.item.label === 'creator-1')!.node;
    const children = (await api.sessions.getChildren(sessionNode)) as SessionsNode[];
    assert.ok(children.some((c) => c.kind === 'job' && c.jobId === job.id));
    // Not delegated from the window's Delegate Job: its completion is not news (notifications.test.ts has the window's own).
    assert.ok(!api.notifier.shown.some((n) => n.jobId === job.id), 'no completion notification');
  });

  it('permission_required raises a notification and marks the job as needing attention', async () => {
    await engine().core.sessions.create({ name: 'asker', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('permission', ['--work-ms', '4000']) });
    const { job } = await engine().core.jobService.submit({ session: 'asker', prompt: 'Clean the build folder' });
    await waitFor('the permission notification', () => api.notifier.shown.find((n) => n.kind === 'permission' && n.jobId === job.id), 30_000);
    assert.match(api.notifier.shown.find((n) => n.jobId === job.id)!.message, /asker needs permission: may I delete build\//);
    await waitFor('the job under Needs attention', async () => (await jobGroups()).attention?.includes(job.id));
    assert.equal(api.statusBar.counts().blocked, 1);
    assert.ok(api.statusBar.item.backgroundColor, 'the status bar asks for attention');
    await waitFor('the job to complete', async () => (await jobGroups()).completed?.includes(job.id), 30_000);
  });

  it('a failed job raises an error notification', async () => {
    // The Jobs view must not be showing: a failure it shows counts as seen, and leaves the status bar.
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    await engine().core.sessions.create({ name: 'breaker', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('error') });
    const { job } = await engine().core.jobService.submit({ session: 'breaker', prompt: 'Try the impossible' });
    await waitFor('the failure notification', () => api.notifier.shown.find((n) => n.kind === 'failed' && n.jobId === job.id), 30_000);
    assert.equal(api.statusBar.counts().failed >= 1, true);
  });

  it('a window reload loses nothing: a job running across it completes, and the views follow', async () => {
    await engine().core.sessions.create({ name: 'steady', agent: 'claude', role: 'worker', baseDir: engine().workspace, command: fakeAgentCommand('work', ['--work-ms', '4000']) });
    const { job } = await engine().core.jobService.submit({ session: 'steady', prompt: 'Outlive the reload' });
    await waitFor('the job to start', () => engine().core.jobs.index.get(job.id)?.state === 'started', 30_000);
    // What a reload does to the extension: its engines go; new ones are built from disk.
    const old = engine();
    await api.host.rebuild();
    assert.notEqual(engine(), old);
    await waitFor('the job under Running after the reload', async () => (await jobGroups()).running?.includes(job.id));
    await waitFor('the job to complete after the reload', async () => (await jobGroups()).completed?.includes(job.id), 30_000);
    const session = (await sessionItems()).find((s) => s.item.label === 'steady')!;
    assert.equal(session.item.description, 'claude · worker · running');
  });

  it('the job log opens as a read-only document that follows the job', async () => {
    const job = engine().core.jobs.index.list()[0]!;
    await vscode.commands.executeCommand('mam.showJobLog', { folderIndex: 0, jobId: job.id });
    const doc = await waitFor('the log document', () => vscode.workspace.textDocuments.find((d) => d.uri.scheme === UriSchemes.jobLog && d.uri.path.includes(job.id)));
    assert.match(doc.getText(), new RegExp(`# job ${job.id}`));
    assert.match(doc.getText(), /→ registered/);
    assert.equal(path.extname(doc.uri.path), '.log');
  });
});
