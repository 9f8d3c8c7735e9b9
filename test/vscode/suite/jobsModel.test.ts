import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { newJobId } from '../../../src/core/base/ids';
import type { JobChange } from '../../../src/core/jobs/jobAnnouncer';
import type { JobRecord } from '../../../src/core/store/jobSchema';
import { publishJobEvent } from '../../../src/core/messaging/publisher';
import type { MamApi } from '../../../src/extension';
import { groupOf, type JobsNode } from '../../../src/views/jobs/jobsTree';
import { JobsModel } from '../../../src/views/jobs/jobsModel';
import { waitFor } from '../waitFor';
import { mamApi } from './support';

/** What the user reads in a hover: the markdown rendered by VS Code's own renderer, as text. */
async function rendered(tooltip: string | vscode.MarkdownString | undefined): Promise<string> {
  if (typeof tooltip !== 'object') return String(tooltip ?? '');
  const html = await vscode.commands.executeCommand<string>('markdown.api.render', tooltip.value);
  return html.replace(/<[^>]*>/g, '').replace(/&nbsp;/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&');
}

describe('the Jobs view refreshes the row that changed, once per change', function () {
  this.timeout(90_000);
  let api: MamApi;
  const cleanups: Array<() => void | Promise<void>> = [];
  before(async () => {
    api = await mamApi();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const fe = () => api.host.current[0]!;
  const engine = () => fe().engine;

  /** A job this window applies the events of (it is the owner), already delivered. */
  async function ownJob(title: string): Promise<JobRecord> {
    const now = new Date().toISOString();
    const id = newJobId();
    return engine().core.jobs.ledger.register(
      {
        id, session: 'nobody', type: 'direct', role: 'worker', state: 'dispatched', reason: null, created_at: now, updated_at: now, seq: 0, parent_job: null, detail: null,
        title, target: { kind: 'local', name: 'nobody' }, dispatched_at: now, owner: { pid: process.pid, host: os.hostname(), token: 'jobs-model-test' },
      },
      'jobs-model-test-token',
    );
  }

  const publish = (id: string, event: 'started' | 'progress' | 'completed', detail: string) =>
    publishJobEvent({ workspace: engine().workspace, jobId: id, event, detail, sender: 'jobs-model-test', endpoint: engine().core.jobs.endpoint });

  it('progress events: one firing per event for the job row alone, echoes dropped, and VS Code re-reads the row', async () => {
    await engine().start();
    await engine().core.jobs.connect();
    // The view must show for VS Code to read rows: its container, then the view itself.
    await vscode.commands.executeCommand('workbench.view.extension.mam');
    await vscode.commands.executeCommand('mam.jobs.focus');

    // What VS Code asks of the provider: the rows it re-reads after a refresh.
    const provider = api.jobs;
    const original = provider.getTreeItem;
    let watched = '';
    const reads: number[] = [];
    // Firings and VS Code's reads of the row, in the order they happened.
    const timeline: Array<{ read: number } | { fired: JobsNode | JobsNode[] | undefined }> = [];
    provider.getTreeItem = function (node: JobsNode) {
      if (node.kind === 'job' && node.jobId === watched) {
        reads.push(engine().core.jobs.index.get(watched)?.seq ?? -1);
        timeline.push({ read: reads.at(-1)! });
      }
      return original.call(this, node);
    };
    cleanups.push(() => void (provider.getTreeItem = original));
    const firings: Array<JobsNode | JobsNode[] | undefined> = [];
    const sub = provider.onDidChangeTreeData((e) => {
      firings.push(e ?? undefined);
      timeline.push({ fired: e ?? undefined });
    });
    cleanups.push(() => sub.dispose());

    const job = await ownJob('Echo counting');
    watched = job.id;
    // It appeared: the tree is read again, and VS Code shows its row.
    await waitFor('VS Code to show the new row', () => reads.includes(0), 20_000);

    const mine = (e: JobsNode | JobsNode[] | undefined) => !Array.isArray(e) && e?.kind === 'job' && e.jobId === job.id;
    const mineFired = (t: (typeof timeline)[number] | undefined) => t !== undefined && 'fired' in t && mine(t.fired);
    const otherChanges = { count: 0 };
    const others = fe().jobs.onDidChangeJob((change) => change.job.id !== job.id && otherChanges.count++);
    cleanups.push(() => others.dispose());
    // The file watcher's echo of the last write is known to have been handled once an event for a
    // file written after it has been seen (events come in order, to every watcher at once).
    const sentinelDir = path.join(engine().core.controlPlane.paths.jobDir(job.id), 'sentinel');
    fs.mkdirSync(sentinelDir, { recursive: true });
    // A glob, like the extension's own watchers: served by the workspace's watcher, already running.
    const sentinel = vscode.workspace.createFileSystemWatcher(`**/.mam/jobs/${job.id}/sentinel/*`);
    cleanups.push(() => sentinel.dispose());
    let sentinelSeen = false;
    sentinel.onDidCreate(() => (sentinelSeen = true));
    const from = firings.length;
    let clean = 0;

    const events = ['started', 'progress', 'progress', 'progress', 'progress'] as const;
    for (const [i, event] of events.entries()) {
      await publish(job.id, event, `step ${i + 1}`);
      await waitFor(`event ${i + 1} applied`, () => engine().core.jobs.index.get(job.id)?.seq === i + 1);
      await waitFor(`VS Code to re-read the row after event ${i + 1}`, () => reads.includes(i + 1), 20_000);
      // VS Code re-read the row because of the row's own refresh, unless the elapsed-time tick or a
      // whole-tree refresh (another job) came between: those count as no evidence either way.
      const readAt = timeline.findIndex((t) => 'read' in t && t.read === i + 1);
      let firedAt = readAt;
      while (firedAt >= 0 && !mineFired(timeline[firedAt])) firedAt--;
      if (firedAt >= 0 && !timeline.slice(firedAt + 1, readAt).some((t) => 'fired' in t)) clean++;
      // The echoes of this window's own change, replayed as they arrive: the watcher on its own
      // write, and the retained state message of its own publish (both end in the ledger's observe).
      engine().core.jobs.index.changedOnDisk(job.id);
      engine().core.jobs.ledger.observe(job.id);
    }
    fs.writeFileSync(path.join(sentinelDir, 'after-the-last-write'), '');
    await waitFor('the file watcher to catch up', () => sentinelSeen, 20_000);
    const ticks = firings.slice(from).filter((e) => Array.isArray(e) || e === undefined).length;
    assert.ok(clean >= 1 && clean >= events.length - ticks, `VS Code re-read the row on its refresh alone after ${clean} of ${events.length} events (${ticks} ticks or whole-tree refreshes came between)`);

    const window = firings.slice(from);
    assert.equal(window.filter(mine).length, events.length, `one firing of the job's row per event: ${JSON.stringify(window)}`);
    const full = window.filter((e) => e === undefined).length;
    assert.ok(full <= otherChanges.count, `no whole-tree refresh for changes within a group (${full}, other jobs changed ${otherChanges.count} times)`);
    assert.equal(fe().jobs.counts.repeated, 0, 'the ledger let no copy through');
    assert.equal(groupOf(engine().core.jobs.index.get(job.id)!), 'running');

    // Moving to another group changes the groups' counts: the whole tree, once.
    const beforeDone = firings.length;
    const otherBefore = otherChanges.count;
    await publish(job.id, 'completed', 'done');
    await waitFor('the job completed', () => engine().core.jobs.index.get(job.id)?.state === 'completed');
    const done = firings.slice(beforeDone);
    assert.equal(done.filter((e) => e === undefined).length - (otherChanges.count - otherBefore) <= 1, true);
    assert.ok(done.some((e) => e === undefined), 'a whole-tree refresh when the job moved to Completed');
    assert.ok(!done.some(mine), 'not a row refresh as well');
    const groups = (await provider.getChildren()) as JobsNode[];
    const completed = groups.find((g) => g.kind === 'group' && g.group === 'completed')!;
    assert.ok(((await provider.getChildren(completed)) as JobsNode[]).some((n) => n.kind === 'job' && n.jobId === job.id));
  });

  it("the folder's JobsModel announces each version of a job once", () => {
    const listeners: Array<(c: JobChange) => void> = [];
    const model = new JobsModel((l) => {
      listeners.push(l);
      return { dispose: () => listeners.splice(listeners.indexOf(l), 1) };
    }, { list: () => [], get: () => undefined });
    cleanups.push(() => model.dispose());
    const heard: string[] = [];
    model.onDidChangeJob((c) => heard.push(`${c.job.state}@${c.job.seq}`));
    const now = new Date().toISOString();
    const v1: JobRecord = { id: 'j-20260101T000000Z-00000001', session: 'w1', type: 'direct', role: null, state: 'started', reason: null, created_at: now, updated_at: now, seq: 1, parent_job: null, detail: null };
    const send = (job: JobRecord) => listeners.forEach((l) => l({ job, previous: 'dispatched' }));
    send(v1);
    send({ ...v1 }); // the same version, heard again (an echo)
    send({ ...v1, seq: 2, updated_at: new Date(Date.parse(now) + 5).toISOString() });
    send({ ...v1, seq: 2, updated_at: new Date(Date.parse(now) + 5).toISOString() });
    send({ ...v1, state: 'completed', seq: 3, updated_at: new Date(Date.parse(now) + 9).toISOString() });
    assert.deepEqual(heard, ['started@1', 'started@2', 'completed@3']);
    assert.deepEqual(model.counts, { received: 5, repeated: 2 });
    model.forget();
    send({ ...v1, state: 'completed', seq: 3, updated_at: new Date(Date.parse(now) + 9).toISOString() });
    assert.equal(heard.length, 4, 'after a reload from disk, every job may be announced again');
  });

  it('rows: a short title, the state first, and a hover with the whole task, names as they are and no backslash', async () => {
    const task = 'Proofread the changelog for the 2.0 release. Check every link\nand fix the typos in `CHANGELOG.md` (see docs/release_notes-v2.md).';
    const { job } = await engine().core.jobService.submit({ session: 'human:dana-o_b', prompt: task });
    cleanups.push(async () => void (await engine().core.jobService.cancel(job.id).catch(() => undefined)));
    const { job: titled } = await engine().core.jobService.submit({ session: 'human:dana-o_b', prompt: 'Write the 2.0 release notes from the changelog.', title: 'Release notes' });
    cleanups.push(async () => void (await engine().core.jobService.cancel(titled.id).catch(() => undefined)));

    const rows = async () => {
      const out: Array<{ node: JobsNode; item: vscode.TreeItem }> = [];
      for (const group of (await api.jobs.getChildren()) as JobsNode[]) {
        for (const node of (await api.jobs.getChildren(group)) as JobsNode[]) out.push({ node, item: api.jobs.getTreeItem(node) });
      }
      return out;
    };
    const row = await waitFor('the person task in the Jobs view', async () => (await rows()).find((r) => r.node.kind === 'job' && r.node.jobId === job.id));
    assert.equal(row.item.label, 'Proofread the changelog for the 2.0 release');
    assert.match(String(row.item.description), /^assigned · \d+s · dana-o_b$/);
    assert.equal((await rows()).find((r) => r.node.kind === 'job' && r.node.jobId === titled.id)?.item.label, 'Release notes');
    for (const r of await rows()) assert.ok(String(r.item.label).length <= 60, `a short label: ${String(r.item.label)}`);

    // The hover is filled in when asked for (resolveTreeItem), with the task from the brief.
    assert.equal(row.item.tooltip, undefined, 'left for resolveTreeItem');
    const resolved = await api.jobs.resolveTreeItem(row.item, row.node);
    const text = await rendered(resolved.tooltip);
    assert.ok(!text.includes('\\'), `no backslash in the hover: ${text}`);
    assert.ok(text.includes('dana-o_b'), text);
    assert.ok(text.includes(job.id), text);
    assert.ok(text.includes('Check every link'), `the whole task: ${text}`);
    assert.ok(text.includes('CHANGELOG.md') && text.includes('docs/release_notes-v2.md'), text);
  });
});
