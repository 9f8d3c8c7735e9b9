import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { parseLoopHint } from '../core/loop/loopHint';
import type { JobRecord } from '../core/store/jobSchema';
import { loopTitle } from '../core/jobs/title';
import type { EngineHost } from './engineHost';
import { isBlocked, isOpen, jobTooltip, jobTreeItem } from './jobItems';
import { DisposableBase } from '../core/base/disposable';

/** The groups of the Jobs view, in order; every job is in exactly one. */
const GROUPS = [
  { key: 'attention', label: 'Needs attention', icon: 'bell-dot', match: (j: JobRecord) => isBlocked(j) },
  { key: 'running', label: 'Running', icon: 'sync', match: (j: JobRecord) => isOpen(j) && !isBlocked(j) },
  { key: 'failed', label: 'Failed and timed out', icon: 'error', match: (j: JobRecord) => j.state === 'failed' || j.state === 'timeout' },
  { key: 'completed', label: 'Completed', icon: 'pass', match: (j: JobRecord) => j.state === 'completed' },
  { key: 'cancelled', label: 'Cancelled', icon: 'circle-slash', match: (j: JobRecord) => j.state === 'cancelled' },
] as const;

type GroupKey = (typeof GROUPS)[number]['key'];

export type JobsNode = { kind: 'group'; group: GroupKey } | { kind: 'job'; folderIndex: number; jobId: string; group: GroupKey };
type JobNode = Extract<JobsNode, { kind: 'job' }>;

export function groupOf(job: JobRecord): GroupKey {
  return GROUPS.find((g) => g.match(job))!.key;
}

/** How often the elapsed times of open jobs move on between events. */
const TICK_MS = 5000;

/**
 * The Jobs view: every job of every folder, grouped by state, newest first, with elapsed time.
 * It renders the folders' JobsModels and refreshes what a change touched: the changed job's row
 * alone while it stays in its group; the whole tree when a job appears or moves to another group
 * (the group rows' counts and the groups shown change only then). Rows are handed to VS Code as
 * the same node objects every time: VS Code finds the row to refresh by the object it was given.
 */
export class JobsTreeProvider extends DisposableBase implements vscode.TreeDataProvider<JobsNode> {
  private readonly changed = this._register(new vscode.EventEmitter<JobsNode | JobsNode[] | undefined>());
  /** A row (one node), the open rows at once (an array, as elapsed times tick), or everything (undefined). */
  readonly onDidChangeTreeData = this.changed.event;
  private readonly groupNodes = new Map<GroupKey, JobsNode>(GROUPS.map((g) => [g.key, { kind: 'group', group: g.key }]));
  private readonly jobNodes = new Map<string, JobNode>();
  /** The jobs by group as the tree last listed them; undefined until listed again after a full refresh. */
  private listing: Map<GroupKey, Array<{ folderIndex: number; job: JobRecord }>> | undefined;
  /** Where each job sits in `listing`. */
  private readonly placed = new Map<string, GroupKey>();

  constructor(private readonly host: EngineHost) {
    super();
    this._register(host.onDidChangeJob(({ folder, change }) => this.jobChanged(folder.index, change.job)));
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
    const open = [...(this.listing.get('running') ?? []), ...(this.listing.get('attention') ?? [])];
    if (open.length > 0) this.changed.fire(open.map(({ folderIndex, job }) => this.jobNode(folderIndex, job.id, groupOf(job))));
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

  /** Every job with its folder, newest first, by group. */
  private list(): Map<GroupKey, Array<{ folderIndex: number; job: JobRecord }>> {
    if (this.listing) return this.listing;
    const all = this.host.current
      .flatMap((fe) => fe.jobs.list().map((job) => ({ folderIndex: fe.folder.index, job })))
      .sort((a, b) => (a.job.created_at < b.job.created_at ? 1 : a.job.created_at > b.job.created_at ? -1 : 0));
    const listing = new Map<GroupKey, Array<{ folderIndex: number; job: JobRecord }>>();
    this.placed.clear();
    for (const entry of all) {
      const group = groupOf(entry.job);
      const members = listing.get(group);
      if (members) members.push(entry);
      else listing.set(group, [entry]);
      this.placed.set(`${entry.folderIndex}:${entry.job.id}`, group);
    }
    this.listing = listing;
    return listing;
  }

  async getChildren(node?: JobsNode): Promise<JobsNode[]> {
    await this.host.ready();
    if (!node) this.listing = undefined; // the root is read afresh: after a full refresh, or the view opening
    const listing = this.list();
    if (!node) return GROUPS.filter((g) => listing.has(g.key)).map((g) => this.groupNodes.get(g.key)!);
    if (node.kind !== 'group') return [];
    return (listing.get(node.group) ?? []).map((e) => this.jobNode(e.folderIndex, e.job.id, node.group));
  }

  getParent(node: JobsNode): JobsNode | undefined {
    return node.kind === 'job' ? this.groupNodes.get(node.group) : undefined;
  }

  getTreeItem(node: JobsNode): vscode.TreeItem {
    if (node.kind === 'group') {
      const group = GROUPS.find((g) => g.key === node.group)!;
      const count = this.list().get(node.group)?.length ?? 0;
      const item = new vscode.TreeItem(group.label, node.group === 'completed' || node.group === 'cancelled' ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${node.group}`;
      item.description = String(count);
      item.iconPath = new vscode.ThemeIcon(group.icon);
      return item;
    }
    const fe = this.host.byFolderIndex(node.folderIndex);
    const job = fe?.jobs.job(node.jobId);
    if (!fe || !job) return new vscode.TreeItem(node.jobId);
    const item = jobTreeItem(job, 'job', node.folderIndex);
    if (this.host.current.length > 1) item.description = `${item.description as string} · ${fe.folder.name}`;
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
    const loop = task?.loopId ? fe.engine.loop(task.loopId) : undefined;
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
