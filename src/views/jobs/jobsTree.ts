import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { parseLoopHint } from '../../core/loop/loopHint';
import type { JobRecord } from '../../core/store/jobSchema';
import { loopTitle } from '../../core/jobs/title';
import type { EngineHost } from '../host/engineHost';
import { isBlocked, isOpen, jobTooltip, jobTreeItem } from './jobItems';
import { DisposableBase } from '../../core/base/disposable';
import { folderItem, type FolderNode } from '../shared/folderItems';

/** The groups of the Jobs view, in order; every job is in exactly one. */
const GROUPS = [
  { key: 'attention', label: 'Needs attention', icon: 'bell-dot', match: (j: JobRecord) => isBlocked(j) },
  { key: 'running', label: 'Running', icon: 'sync', match: (j: JobRecord) => isOpen(j) && !isBlocked(j) },
  { key: 'failed', label: 'Failed and timed out', icon: 'error', match: (j: JobRecord) => j.state === 'failed' || j.state === 'timeout' },
  { key: 'completed', label: 'Completed', icon: 'pass', match: (j: JobRecord) => j.state === 'completed' },
  { key: 'cancelled', label: 'Cancelled', icon: 'circle-slash', match: (j: JobRecord) => j.state === 'cancelled' },
] as const;

type GroupKey = (typeof GROUPS)[number]['key'];

export type JobsNode = FolderNode | { kind: 'group'; folderIndex: number; group: GroupKey } | { kind: 'job'; folderIndex: number; jobId: string; group: GroupKey };
type GroupNode = Extract<JobsNode, { kind: 'group' }>;
type JobNode = Extract<JobsNode, { kind: 'job' }>;
type Listed = Array<{ folderIndex: number; job: JobRecord }>;

export function groupOf(job: JobRecord): GroupKey {
  return GROUPS.find((g) => g.match(job))!.key;
}

/** How often the elapsed times of open jobs move on between events. */
const TICK_MS = 5000;

/**
 * The Jobs view: every job of the folders that use MAM, grouped by state (and, with more than one
 * such folder, by folder first), newest first, with elapsed time. It renders the folders'
 * JobsModels and refreshes what a change touched: the changed job's row alone while it stays in
 * its group; the whole tree when a job appears or moves to another group (the group rows' counts
 * and the groups shown change only then). Rows are handed to VS Code as the same node objects
 * every time: VS Code finds the row to refresh by the object it was given.
 */
export class JobsTreeProvider extends DisposableBase implements vscode.TreeDataProvider<JobsNode> {
  private readonly changed = this._register(new vscode.EventEmitter<JobsNode | JobsNode[] | undefined>());
  /** A row (one node), the open rows at once (an array, as elapsed times tick), or everything (undefined). */
  readonly onDidChangeTreeData = this.changed.event;
  private readonly folderNodes = new Map<number, FolderNode>();
  private readonly groupNodes = new Map<string, GroupNode>();
  private readonly jobNodes = new Map<string, JobNode>();
  /** The jobs by folder and group as the tree last listed them; undefined until listed again after a full refresh. */
  private listing: Map<number, Map<GroupKey, Listed>> | undefined;
  /** Where each job sits in `listing`, by `folder:job`. */
  private readonly placed = new Map<string, GroupKey>();

  constructor(private readonly host: EngineHost) {
    super();
    this._register(host.forEachFolder((fe) => fe.jobs.onDidChangeJob(({ job }) => this.jobChanged(fe.folder.index, job))));
    this._register(host.onDidReset(() => this.refresh()));
    const tick = setInterval(() => this.tickElapsed(), TICK_MS);
    this._register({ dispose: () => clearInterval(tick) });
  }

  /** Everything again (after a command, a reload, or when engines were rebuilt). */
  refresh(): void {
    this.listing = undefined;
    this.placed.clear();
    this.jobNodes.clear();
    this.changed.fire(undefined);
  }

  private jobChanged(folderIndex: number, job: JobRecord): void {
    // Not listed since the last full refresh: that refresh, still to be read, shows this change too.
    if (!this.listing) return;
    const key = `${folderIndex}:${job.id}`;
    const group = groupOf(job);
    if (this.placed.get(key) !== group) return this.refresh();
    this.changed.fire(this.jobNode(folderIndex, job.id, group));
  }

  /** Elapsed times of open jobs move on by themselves: their rows, nothing else. */
  private tickElapsed(): void {
    if (!this.listing) return;
    const open = [...this.listing.values()].flatMap((groups) => [...(groups.get('running') ?? []), ...(groups.get('attention') ?? [])]);
    if (open.length > 0) this.changed.fire(open.map(({ folderIndex, job }) => this.jobNode(folderIndex, job.id, groupOf(job))));
  }

  private folderNode(folderIndex: number): FolderNode {
    let node = this.folderNodes.get(folderIndex);
    if (!node) this.folderNodes.set(folderIndex, (node = { kind: 'folder', folderIndex }));
    return node;
  }

  private groupNode(folderIndex: number, group: GroupKey): GroupNode {
    const key = `${folderIndex}:${group}`;
    let node = this.groupNodes.get(key);
    if (!node) this.groupNodes.set(key, (node = { kind: 'group', folderIndex, group }));
    return node;
  }

  private jobNode(folderIndex: number, jobId: string, group: GroupKey): JobNode {
    const key = `${folderIndex}:${jobId}`;
    let node = this.jobNodes.get(key);
    if (!node || node.group !== group) {
      node = { kind: 'job', folderIndex, jobId, group };
      this.jobNodes.set(key, node);
    }
    return node;
  }

  /** Every job of each folder that uses MAM, newest first, by group. */
  private list(): Map<number, Map<GroupKey, Listed>> {
    if (this.listing) return this.listing;
    const listing = new Map<number, Map<GroupKey, Listed>>();
    this.placed.clear();
    for (const fe of this.host.mamFolders) {
      const folderIndex = fe.folder.index;
      const groups = new Map<GroupKey, Listed>();
      const jobs = [...fe.jobs.list()].sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
      for (const job of jobs) {
        const group = groupOf(job);
        const members = groups.get(group);
        if (members) members.push({ folderIndex, job });
        else groups.set(group, [{ folderIndex, job }]);
        this.placed.set(`${folderIndex}:${job.id}`, group);
      }
      listing.set(folderIndex, groups);
    }
    this.listing = listing;
    return listing;
  }

  /** The group rows of a folder, in order: those that hold a job. */
  private groupsOf(folderIndex: number): GroupNode[] {
    const groups = this.list().get(folderIndex);
    return GROUPS.filter((g) => groups?.has(g.key)).map((g) => this.groupNode(folderIndex, g.key));
  }

  async getChildren(node?: JobsNode): Promise<JobsNode[]> {
    await this.host.ready();
    if (!node) {
      this.listing = undefined; // the root is read afresh: after a full refresh, or the view opening
      const folders = [...this.list().keys()];
      // No job in any folder: nothing, so the view's welcome text shows.
      if (folders.length > 1) return [...this.list().values()].some((groups) => groups.size > 0) ? folders.map((i) => this.folderNode(i)) : [];
      return folders.length === 1 ? this.groupsOf(folders[0]!) : [];
    }
    if (node.kind === 'folder') return this.groupsOf(node.folderIndex);
    if (node.kind !== 'group') return [];
    return (this.list().get(node.folderIndex)?.get(node.group) ?? []).map((e) => this.jobNode(e.folderIndex, e.job.id, node.group));
  }

  getParent(node: JobsNode): JobsNode | undefined {
    if (node.kind === 'job') return this.groupNode(node.folderIndex, node.group);
    if (node.kind === 'group' && this.host.multiRoot) return this.folderNode(node.folderIndex);
    return undefined;
  }

  getTreeItem(node: JobsNode): vscode.TreeItem {
    if (node.kind === 'folder') {
      const fe = this.host.byFolderIndex(node.folderIndex);
      if (!fe) return new vscode.TreeItem('?');
      const groups = this.list().get(node.folderIndex);
      const count = (key: GroupKey) => groups?.get(key)?.length ?? 0;
      const parts = [count('running') && `${count('running')} running`, count('attention') && `${count('attention')} need${count('attention') === 1 ? 's' : ''} you`, count('failed') && `${count('failed')} failed`].filter(Boolean);
      const item = folderItem(fe, groups?.size ? parts.join(' · ') || `${[...groups.values()].reduce((n, l) => n + l.length, 0)} ended` : 'no jobs');
      if (!groups?.size) item.collapsibleState = vscode.TreeItemCollapsibleState.None;
      return item;
    }
    if (node.kind === 'group') {
      const group = GROUPS.find((g) => g.key === node.group)!;
      const count = this.list().get(node.folderIndex)?.get(node.group)?.length ?? 0;
      const item = new vscode.TreeItem(group.label, node.group === 'completed' || node.group === 'cancelled' ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${node.folderIndex}:${node.group}`;
      item.description = String(count);
      item.iconPath = new vscode.ThemeIcon(group.icon);
      return item;
    }
    const fe = this.host.byFolderIndex(node.folderIndex);
    const job = fe?.jobs.job(node.jobId);
    if (!fe || !job) return new vscode.TreeItem(node.jobId);
    const item = jobTreeItem(job, 'job', node.folderIndex);
    // The hover adds the task, read from the brief when it is asked for (resolveTreeItem).
    item.tooltip = undefined;
    return item;
  }

  /** On hover: the row's tooltip with the task (a loop's job: the loop's task), read from the job's brief. */
  async resolveTreeItem(item: vscode.TreeItem, node: JobsNode): Promise<vscode.TreeItem> {
    if (node.kind !== 'job') return item;
    const fe = this.host.byFolderIndex(node.folderIndex);
    const job = fe?.jobs.job(node.jobId);
    if (!fe || !job) return item;
    const task = await taskOf(job);
    const loop = task?.loopId ? fe.engine.core.loops.get(task.loopId) : undefined;
    item.tooltip = jobTooltip(job, loop ? { text: loop.task, loop: loopTitle(loop) } : task ? { text: task.text } : undefined, fe.engine.prices());
    return item;
  }
}

/** The task section of a job's brief, without the loop's note; undefined when there is no brief to read. */
async function taskOf(job: JobRecord): Promise<{ text: string; loopId?: string } | undefined> {
  if (!job.brief) return undefined;
  let brief: string;
  try {
    brief = (await fs.promises.readFile(job.brief, 'utf8')).replace(/\r\n/g, '\n');
  } catch {
    return undefined;
  }
  // An agent's brief ends its task where the protocol starts; a composite job's brief is only its task.
  const text = /\n## Task\n\n([\s\S]*?)(?:\n## Protocol\n|$)/.exec(brief)?.[1];
  if (text === undefined) return undefined;
  const hint = parseLoopHint(text);
  return { text: text.replace(/<!-- mam-loop: .*? -->/g, '').trim(), ...(hint ? { loopId: hint.loop } : {}) };
}
