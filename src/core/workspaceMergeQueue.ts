import { DisposableBase } from './base/disposable';
import { Emitter } from './base/emitter';
import type { Logger } from './base/log';
import type { JobEngine } from './jobs/jobEngine';
import { enqueue, type EnqueueRequest } from './merge/enqueue';
import { MergeLog } from './merge/mergeLog';
import { MergeQueueStore, type MergeEntry, type MergeQueueReading } from './merge/mergeQueue';
import { MergeRunner, removeEntry, type MergeRunResult } from './merge/mergeRunner';

/**
 * The merge queue of one workspace folder as the views use it: read (never throws), run and
 * remove, the same core `mam merge` uses; it tells when the queue changed (here, or on disk:
 * `changedOnDisk`, as the CLI's `mam merge run` writes it too). `prepare` refuses actions in an
 * untrusted workspace and starts the engine (the broker: a landing may give its creator a job).
 */
export class WorkspaceMergeQueue extends DisposableBase {
  private readonly queue: MergeQueueStore;
  private readonly log: MergeLog;
  private readonly changed = this._register(new Emitter<void>());
  /** The queue file or an entry's log changed. */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly jobs: JobEngine,
    private readonly repo: string,
    private readonly logger: Logger,
    private readonly prepare: (what: string) => Promise<void>,
  ) {
    super();
    this.queue = new MergeQueueStore(jobs.deps.controlPlane.paths, jobs.clock);
    this.log = new MergeLog(jobs.deps.controlPlane.paths, () => this.queue.now());
  }

  /** The queue file: watchers follow it. */
  get file(): string {
    return this.queue.file;
  }

  /** The queue file or an entry's log changed on disk (a watcher saw it). */
  changedOnDisk(): void {
    this.changed.fire();
  }

  reading(): MergeQueueReading {
    return this.queue.reading();
  }

  logFile(id: string): string {
    return this.log.file(id);
  }

  logTail(id: string, lines: number): string[] {
    return this.log.tail(id, lines);
  }

  /** Queues a branch (a worktree folder or a branch name) whose review loop passed. */
  async enqueue(request: Omit<EnqueueRequest, 'baseDir'>): Promise<MergeEntry> {
    await this.prepare('change the merge queue');
    return this.changing(() => enqueue(this.jobs.deps.controlPlane.paths, this.repo, { ...request, baseDir: this.repo, clock: this.jobs.clock }));
  }

  /** Lands the runnable entries one at a time (one runner per workspace: a second is refused). */
  async run(say?: (line: string) => void): Promise<MergeRunResult> {
    await this.prepare('run the merge queue');
    return this.changing(() => new MergeRunner({ engine: this.jobs, logger: this.logger, repo: this.repo, ...(say ? { say } : {}) }).run());
  }

  async remove(id: string): Promise<MergeEntry> {
    await this.prepare('change the merge queue');
    return this.changing(() => removeEntry(this.jobs, this.repo, id));
  }

  private async changing<T>(work: () => T | Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      this.changed.fire();
    }
  }
}
