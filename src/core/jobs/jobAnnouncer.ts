import { DisposableBase } from '../base/disposable';
import { Emitter } from '../base/emitter';
import { isTerminal, JOB_STATES, type JobRecord, type JobState } from '../store/jobSchema';

export interface JobChange {
  job: JobRecord;
  /** The state before the change; null for a job just registered. */
  previous: JobState | null;
  /** Fields changed without an event or a state change (delivery, owner): other processes' timers depend on them. */
  patched?: boolean;
  /** Registered by this process (not a job it learned of from the disk or the broker). */
  registered?: boolean;
}

/**
 * What this process tells its listeners (its views, its supervisor, the retained-state publisher)
 * of each job: every change once, whether this process made it (JobLedger) or another did and this
 * one looked (`observe`). A change this process made is held from under the job's lock until it is
 * announced (`hold`, `announce`, `release`): a look at the job meanwhile (the applier of a duplicate
 * of the event, a file watcher) would announce it a second time, so it waits and looks again after.
 */
export class JobAnnouncer extends DisposableBase {
  private readonly changed = this._register(new Emitter<JobChange>());
  private readonly ended = this._register(new Emitter<JobRecord>());
  readonly onDidChangeJob = this.changed.event;
  /** A job this process ended (an event, a timer, a cancel applied here): fired in this process only, once per job. */
  readonly onDidEndJob = this.ended.event;
  /** What this process last knew of each job, to notice changes other processes made. */
  private readonly known = new Map<string, string>();
  /** Changes this process made and has not announced yet, by job. */
  private readonly held = new Map<string, number>();
  private readonly lookAgain = new Set<string>();

  /** `readJob` reads a job's record as this process sees it now (undefined when it is not there). */
  constructor(private readonly readJob: (jobId: string) => JobRecord | undefined) {
    super();
  }

  announce(change: JobChange): void {
    this.known.set(change.job.id, fingerprint(change.job));
    this.changed.fire(change);
    if (endsJob(change)) this.ended.fire(change.job);
  }

  /** `change`, made under the job's lock, is announced after it: until `release`, `observe` waits. */
  hold(change: JobChange): JobChange {
    this.held.set(change.job.id, (this.held.get(change.job.id) ?? 0) + 1);
    return change;
  }

  /** A held change was announced (or never will be): a look that waited for it is taken now. */
  release(jobId: string): void {
    const left = (this.held.get(jobId) ?? 1) - 1;
    if (left > 0) return void this.held.set(jobId, left);
    this.held.delete(jobId);
    if (this.lookAgain.delete(jobId)) this.observe(jobId);
  }

  /**
   * Re-reads a job another process may have changed (it applied an event first, or a timer of
   * its fired) and announces the change here too, so this process's supervisor and views follow.
   */
  observe(jobId: string): void {
    if (this.held.has(jobId)) return void this.lookAgain.add(jobId);
    const job = this.readJob(jobId);
    if (!job || this.known.get(jobId) === fingerprint(job)) return;
    const before = this.known.get(jobId)?.split('|')[0];
    const previous = JOB_STATES.find((state) => state === before) ?? null;
    this.known.set(jobId, fingerprint(job));
    this.changed.fire({ job, previous });
  }
}

/** A change that finishes the job (not a late event of one already finished). */
export function endsJob(change: JobChange): boolean {
  return isTerminal(change.job.state) && !(change.previous && isTerminal(change.previous));
}

function fingerprint(job: JobRecord): string {
  return `${job.state}|${job.seq}|${job.last_event_at ?? ''}|${job.updated_at}`;
}
