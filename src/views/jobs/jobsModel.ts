import * as vscode from 'vscode';
import type { JobChange } from '../../core/jobs/jobAnnouncer';
import { jobVersion, type JobRecord } from '../../core/store/jobSchema';

/** Where a folder's job changes come from: its core's `jobService.onDidChange`. */
export type JobChangeSource = (listener: (change: JobChange) => void) => { dispose(): void };

/**
 * The jobs of one workspace folder as the views hear of them: the records its job index holds, and
 * each change once, carrying the job that changed so a view can refresh that row alone.
 *
 * One change can reach this window more than once: the engine's own write, the retained state
 * message of its own publish coming back from the broker, and the file watcher on its own write.
 * The ledger already drops the copies whose record it knows; what still repeats a version this
 * model has announced (`jobVersion`: state, seq, updated_at) is dropped here, so no view hears a
 * change twice.
 */
export class JobsModel implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<JobChange>();
  /** A job appeared or changed: once per version of its record. */
  readonly onDidChangeJob = this.changed.event;
  /** What came in and how much of it repeated a version already announced (the tests read these). */
  readonly counts = { received: 0, repeated: 0 };
  private readonly announced = new Map<string, string>();
  private readonly subscription: { dispose(): void };

  constructor(
    source: JobChangeSource,
    private readonly read: { list(): readonly JobRecord[]; get(id: string): JobRecord | undefined },
  ) {
    this.subscription = source((change) => this.take(change));
  }

  /** Every job, newest first (the index's list: do not change it). */
  list(): readonly JobRecord[] {
    return this.read.list();
  }

  job(id: string): JobRecord | undefined {
    return this.read.get(id);
  }

  /** After a reload from disk every job may be announced again. */
  forget(): void {
    this.announced.clear();
  }

  private take(change: JobChange): void {
    this.counts.received++;
    const version = jobVersion(change.job);
    if (this.announced.get(change.job.id) === version) {
      this.counts.repeated++;
      return;
    }
    this.announced.set(change.job.id, version);
    this.changed.fire(change);
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
