import { DisposableBase } from '../base/disposable';
import type { JobRecord } from '../store/jobSchema';
import type { ControlPlane } from '../store/controlPlane';
import type { JobLedger } from './jobLedger';

/**
 * Every job of the workspace in memory, read from disk once and then kept by the ledger's changes,
 * so that views never poll the disk. A job file that changed while no event said so (another
 * process wrote it) comes in through `changedOnDisk`.
 */
export class JobIndex extends DisposableBase {
  private byId: Map<string, JobRecord> | undefined;
  private sorted: JobRecord[] | undefined;

  constructor(
    private readonly controlPlane: ControlPlane,
    private readonly ledger: JobLedger,
  ) {
    super();
    this._register(ledger.onDidChangeJob(({ job }) => {
      this.byId?.set(job.id, job);
      this.sorted = undefined;
    }));
  }

  /** Every job, newest first (the array is shared: do not change it). */
  list(): readonly JobRecord[] {
    this.sorted ??= [...this.map().values()].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1));
    return this.sorted;
  }

  get(jobId: string): JobRecord | undefined {
    return this.map().get(jobId);
  }

  /** Forgets what it read (after a reload, or when files changed while offline). */
  reload(): void {
    this.byId = undefined;
    this.sorted = undefined;
  }

  /** A job file changed on disk while no broker told us: the ledger re-reads it, and tells if it moved. */
  changedOnDisk(jobId: string): void {
    this.ledger.observe(jobId);
  }

  private map(): Map<string, JobRecord> {
    this.byId ??= new Map(this.controlPlane.jobs.list().jobs.map((j) => [j.id, j]));
    return this.byId;
  }
}
