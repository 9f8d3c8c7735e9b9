import * as fs from 'node:fs';
import * as path from 'node:path';
import { isoOn, systemClock, type Clock } from '../base/clock';
import { DisposableBase } from '../base/disposable';
import { Emitter } from '../base/emitter';
import type { Logger } from '../base/log';
import type { ControlPlane } from '../store/controlPlane';
import { JobOutbox } from '../messaging/outbox';
import { RejectedMessage, verifySignature, type EventPayload } from '../messaging/protocol';
import { writeFileAtomic } from '../store/atomicFile';
import type { AuditEntry } from '../store/auditLog';
import { isTerminal, type JobRecord, type JobState } from '../store/jobSchema';
import { readJobToken, writeJobToken } from '../store/jobToken';
import { endsJob, JobAnnouncer, type JobChange } from './jobAnnouncer';
import { canTransition, effectOf } from './lifecycle';
import { errorMessage } from '../base/errors';

export type ApplyOutcome =
  | { status: 'applied'; job: JobRecord; late: boolean }
  /** Already applied (another subscriber, or a redelivery): dropped quietly. */
  | { status: 'duplicate' }
  | { status: 'rejected'; reason: RejectedMessage['reason']; message: string };

/** What applyEvent answers unless the locked step below says otherwise (typed wide: that step reassigns it). */
const DUPLICATE: ApplyOutcome = { status: 'duplicate' };

/**
 * The one place a job's state changes: its record, its audit log and status.json move together
 * under the job's lock. Events from the broker and from outboxes, timers, dispatch and cancel all
 * come through here; views and the retained-state publisher listen to `onDidChangeJob`.
 */
export class JobLedger extends DisposableBase {
  private readonly announcer = this._register(new JobAnnouncer((jobId) => this.controlPlane.jobs.get(jobId)));
  private readonly applied = this._register(new Emitter<{ job: JobRecord; payload: EventPayload; late: boolean }>());
  readonly onDidChangeJob = this.announcer.onDidChangeJob;
  readonly onDidApplyEvent = this.applied.event;
  /** A job this process ended (an event, a timer, a cancel applied here): fired in this process only, once per job. */
  readonly onDidEndJob = this.announcer.onDidEndJob;

  constructor(
    private readonly controlPlane: ControlPlane,
    private readonly logger: Logger,
    /** What every record and audit entry written here is stamped with: the engine's clock. */
    private readonly clock: Clock = systemClock,
  ) {
    super();
  }

  /** Writes a new job: record, token (0600), audit meta and its first transition. */
  async register(record: JobRecord, token: string | undefined): Promise<JobRecord> {
    const dir = this.controlPlane.paths.jobDir(record.id);
    fs.mkdirSync(dir, { recursive: true });
    if (token) writeJobToken(this.controlPlane.paths, record.id, token);
    const job = await this.controlPlane.jobs.create(record);
    const audit = this.controlPlane.audit;
    await this.controlPlane.jobs.withJobLock(job.id, async () => {
      audit.writeMeta(job.id, { id: job.id, session: job.session, type: job.type, role: job.role, created_at: job.created_at, parent_job: job.parent_job, brief: job.brief ?? null, target: job.target ?? null, timers: job.timers ?? null });
      await audit.append(job.id, { type: 'transition', at: job.created_at, from: null, to: job.state, reason: job.reason });
      audit.writeStatus(job.id, statusOf(job));
    });
    this.announcer.announce({ job, previous: null, registered: true });
    return job;
  }

  /**
   * Moves a job to `to` if `when` still holds under the lock (another process may have moved it
   * meanwhile); resolves with the new record, or undefined when nothing was done.
   */
  async transition(
    jobId: string,
    to: JobState,
    reason: string | null,
    options: { fields?: Partial<JobRecord>; when?: (job: JobRecord) => boolean; note?: string; /** The pane's last screen, for the audit log. */ screen?: string } = {},
  ): Promise<JobRecord | undefined> {
    let change: JobChange | undefined;
    await this.controlPlane.jobs.withJobLock(jobId, async () => {
      const job = this.controlPlane.jobs.require(jobId);
      if (options.when && !options.when(job)) return;
      if (job.state !== to && !canTransition(job.state, to)) return;
      const now = isoOn(this.clock);
      const next: JobRecord = { ...job, ...options.fields, state: to, reason: reason ?? job.reason, updated_at: now };
      if (isTerminal(to) && !next.finished_at) next.finished_at = now;
      if (isTerminal(to) && options.note) next.why = options.note;
      await this.write(next, job, job.state === to ? [] : [{ type: 'transition', at: now, from: job.state, to, reason, ...(options.note ? { note: options.note } : {}), ...(options.screen ? { screen: options.screen } : {}) }]);
      change = this.announcer.hold({ job: next, previous: job.state });
    });
    return this.afterChange(change);
  }

  /** Changes fields of a job without a state change (delivery progress, pane pid …). */
  async patch(jobId: string, fields: Partial<JobRecord>): Promise<JobRecord> {
    let change: JobChange | undefined;
    await this.controlPlane.jobs.withJobLock(jobId, async () => {
      const job = this.controlPlane.jobs.require(jobId);
      const next = { ...job, ...fields, updated_at: isoOn(this.clock) };
      await this.write(next, job, []);
      change = this.announcer.hold({ job: next, previous: job.state, patched: true });
    });
    return (await this.afterChange(change))!;
  }

  /** `patch` only if `when` still holds under the lock (a reading of usage must not replace a newer one); undefined when nothing was done. */
  async patchIf(jobId: string, fields: Partial<JobRecord>, when: (job: JobRecord) => boolean): Promise<JobRecord | undefined> {
    let change: JobChange | undefined;
    await this.controlPlane.jobs.withJobLock(jobId, async () => {
      const job = this.controlPlane.jobs.require(jobId);
      if (!when(job)) return;
      const next = { ...job, ...fields, updated_at: isoOn(this.clock) };
      await this.write(next, job, []);
      change = this.announcer.hold({ job: next, previous: job.state, patched: true });
    });
    return this.afterChange(change);
  }

  /**
   * Applies one event: signature, then seq, then the audit log, then the lifecycle table's effect.
   * Only a seq above the highest seen is accepted (SPEC §6: a lower one is a replay or out of
   * order; a skipped one is noted as a `seq_gap`), or one a gap left missing, once: an event that
   * waited in an outbox, or that a remote runner relays again, while a later one got through must
   * still count. The audit log says when an event came from an outbox rather than the broker.
   */
  async applyEvent(payload: EventPayload, source: 'broker' | 'disk' = 'broker'): Promise<ApplyOutcome> {
    let outcome = DUPLICATE;
    let change: JobChange | undefined;
    let announced = false;
    const jobs = this.controlPlane.jobs;
    if (!fs.existsSync(this.controlPlane.paths.jobFile(payload.job_id))) {
      return { status: 'rejected', reason: 'unknown_job', message: `event for unknown job ${payload.job_id}` };
    }
    await jobs.withJobLock(payload.job_id, async () => {
      const job = jobs.require(payload.job_id);
      const token = this.tokenOf(job.id);
      if (job.signed || token) {
        if (payload.sig === undefined) return void (outcome = { status: 'rejected', reason: 'missing_signature', message: `unsigned ${payload.event} for signed job ${job.id}` });
        if (!token || !verifySignature(payload, token)) return void (outcome = { status: 'rejected', reason: 'bad_signature', message: `bad signature on ${payload.event} seq ${payload.seq} of job ${job.id}` });
      }
      // A seq a gap left missing was never applied: welcome once, from an outbox or from the broker
      // (a remote runner relaying it again after the submitter was cut off).
      const missing = new Set(job.missing ?? []);
      const fillsGap = missing.has(payload.seq);
      if (payload.seq <= job.seq && !fillsGap) {
        if (!this.sameAsLogged(job.id, payload)) outcome = { status: 'rejected', reason: 'stale_seq', message: `${payload.event} seq ${payload.seq} of job ${job.id} is not above ${job.seq}: replayed or out of order` };
        return;
      }
      const now = isoOn(this.clock);
      const entries: AuditEntry[] = [];
      if (payload.seq > job.seq + 1) {
        for (let s = job.seq + 1; s < payload.seq; s++) missing.add(s);
        entries.push({ type: 'note', at: now, note: 'seq_gap', from: job.seq + 1, to: payload.seq - 1 });
        this.logger.warn(`job ${job.id}: seq_gap ${job.seq + 1}..${payload.seq - 1}`);
      }
      missing.delete(payload.seq);
      const reportPath = payload.report ? this.saveReport(job.id, payload) : undefined;
      const effect = effectOf(payload.event, job.state);
      entries.push({ type: 'event', at: now, event: payload.event, seq: payload.seq, sender: payload.sender, detail: payload.detail, ts: payload.ts, sig_ok: payload.sig !== undefined, ...(source === 'disk' ? { from: 'outbox' } : {}), ...(reportPath ? { report: reportPath } : {}), ...(effect.late ? { late: true } : {}) });
      // A finished job's outcome never changes: a late event is kept (audit log, late_events, with
      // what it said), but its detail and report do not replace the record's.
      const next: JobRecord = {
        ...job,
        seq: Math.max(job.seq, payload.seq),
        missing: [...missing].sort((a, b) => a - b),
        updated_at: now,
        ...(payload.detail !== null && !effect.late ? { detail: payload.detail } : {}),
        ...(reportPath && !effect.late ? { report: reportPath } : {}),
        ...(effect.alive ? { last_event_at: now } : {}),
        // A heartbeat is liveness from its own process, not news from the agent: an agent waiting for
        // permission still waits while its heartbeats go on.
        ...(effect.late || payload.event === 'heartbeat' ? {} : { last_event: payload.event }),
        ...(payload.event === 'started' && !job.started_at ? { started_at: now } : {}),
        ...(payload.heartbeat !== undefined && job.timers ? { heartbeat_reported_s: payload.heartbeat } : {}),
      };
      if (effect.late) next.late_events = [...(job.late_events ?? []), { seq: payload.seq, event: payload.event, at: now, ...(payload.detail !== null ? { detail: payload.detail } : {}), ...(reportPath ? { report: reportPath } : {}) }];
      if (effect.to) {
        next.state = effect.to;
        next.reason = effect.reason ?? null;
        if (isTerminal(effect.to)) next.finished_at = now;
        entries.push({ type: 'transition', at: now, from: job.state, to: effect.to, reason: effect.reason ?? null, by: `${payload.event} seq ${payload.seq}` });
      }
      // Already in the audit log: the record lost its last writes to a power cut or a kill (it is
      // not fsynced, and lands after the line). The record catches up; the log keeps the event once.
      const { appended, landed } = await this.writeEvent(next, job, entries, payload.seq);
      if (!appended) this.logger.warn(`job ${job.id}: ${payload.event} seq ${payload.seq} was in the audit log but not in the record; the record catches up`);
      change = { job: next, previous: job.state };
      outcome = { status: 'applied', job: next, late: effect.late };
      try {
        // The event is applied once its line is on disk: announced now, while the record lands
        // (this process reads it from memory meanwhile; other processes wait for the lock, held
        // until it has), when it leaves the job open in its state — a progress, a heartbeat: most
        // events. One that moves the job is announced once the record is there: other processes
        // hear of it (its retained state message) and read the file then; a job it ends frees its
        // session first (afterChange).
        if (next.state === job.state && !isTerminal(next.state)) {
          this.announcer.announce(change);
          this.applied.fire({ job: next, payload, late: effect.late });
          announced = true;
        } else {
          this.announcer.hold(change);
        }
      } finally {
        await landed.catch((err) => this.logger.warn(`job ${job.id}: the record after ${payload.event} seq ${payload.seq} could not be written (${errorMessage(err)}); the audit log has the event, and the record catches up when it comes again`));
      }
    });
    const result = outcome;
    if (result.status === 'applied' && !announced) {
      await this.afterChange(change);
      this.applied.fire({ job: result.job, payload, late: result.late });
    }
    return result;
  }

  /**
   * Applies, from the job's outbox on disk, every event no subscriber has applied yet. Cheap when
   * there is nothing to do: the outbox is read only when its seq counter is ahead of the record or
   * the record misses a seq.
   */
  async applyOutbox(jobOrId: JobRecord | string): Promise<number> {
    const job = typeof jobOrId === 'string' ? this.controlPlane.jobs.get(jobOrId) : jobOrId;
    if (!job) return 0;
    const outbox = new JobOutbox(this.controlPlane.paths.jobDir(job.id));
    if (outbox.allocatedSeq() <= job.seq && (job.missing ?? []).length === 0) return 0;
    const missing = new Set(job.missing ?? []);
    let applied = 0;
    for (const payload of outbox.events()) {
      if (payload.seq <= job.seq && !missing.has(payload.seq)) continue;
      const outcome = await this.applyEvent(payload, 'disk');
      if (outcome.status === 'applied') applied++;
      else if (outcome.status === 'rejected') this.logger.warn(`outbox of ${job.id}: ${outcome.message}`);
    }
    return applied;
  }

  /** Record (fsynced), audit entries and status.json, for a change that is not an event; caller holds the job's lock. */
  private async write(job: JobRecord, before: JobRecord, entries: AuditEntry[]): Promise<void> {
    const audit = this.controlPlane.audit;
    await audit.appendAll(job.id, entries);
    this.controlPlane.jobs.replace(job);
    if (statusChanged(before, job)) audit.writeStatus(job.id, statusOf(job));
  }

  /**
   * An event's audit lines, fsynced, then status.json, only when what it says changed (a progress
   * or heartbeat changes nothing in it), and the record replaced behind (`JobStore.replaceBehind`:
   * not fsynced, off the event loop; `landed` says when its file is there). What an event did
   * can be found in the log after a power cut or a kill before the record landed
   * (`appendUnlessLogged` looks), which saves two of an event's three fsyncs and the rename's wait.
   * Caller holds the job's lock until `landed` settles.
   */
  private async writeEvent(job: JobRecord, before: JobRecord, entries: AuditEntry[], eventSeq: number): Promise<{ appended: boolean; landed: Promise<void> }> {
    const audit = this.controlPlane.audit;
    // An event's lines are not written again if the log's tail has that event already.
    const appended = await audit.appendUnlessLogged(job.id, eventSeq, entries);
    if (statusChanged(before, job)) audit.writeStatus(job.id, statusOf(job));
    return { appended, landed: this.controlPlane.jobs.replaceBehind(job) };
  }

  /** The job's signing token (undefined for an unsigned job). */
  tokenOf(jobId: string): string | undefined {
    return readJobToken(this.controlPlane.paths, jobId);
  }

  /** Announces here a change another process made to the job, if it made one (JobAnnouncer.observe). */
  observe(jobId: string): void {
    this.announcer.observe(jobId);
  }

  /** A change made under the job's lock, told once the lock is let go: a job it ends frees its session first. */
  private async afterChange(change: JobChange | undefined): Promise<JobRecord | undefined> {
    if (!change) return undefined;
    try {
      if (endsJob(change)) await this.releaseSession(change.job);
      this.announcer.announce(change);
    } finally {
      this.announcer.release(change.job.id);
    }
    return change.job;
  }

  /** A finished job no longer holds its session: the next one may be delivered. */
  private async releaseSession(job: JobRecord): Promise<void> {
    if (job.target?.kind !== 'local') return;
    const name = job.target.name;
    try {
      await this.controlPlane.sessions.mutate((tx) => {
        const row = tx.get(name);
        if (row?.current_job === job.id) tx.update(name, { current_job: null });
      });
    } catch (err) {
      this.logger.warn(`job ${job.id}: could not release session '${name}': ${errorMessage(err)}`);
    }
  }

  /** A redelivered copy of an applied event is a duplicate, not a replay attack. */
  private sameAsLogged(jobId: string, payload: EventPayload): boolean {
    return this.controlPlane.audit
      .readEntries(jobId)
      .entries.some((e) => e.type === 'event' && e.seq === payload.seq && e.event === payload.event && e.ts === payload.ts && (e.detail ?? null) === payload.detail);
  }

  private saveReport(jobId: string, payload: EventPayload): string {
    const dir = path.join(this.controlPlane.paths.auditJobDir(jobId), 'reports');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${String(payload.seq).padStart(4, '0')}-${payload.report!.name}`);
    writeFileAtomic(file, payload.report!.content);
    return file;
  }
}

/**
 * status.json: the job's state as it last changed — `updated_at` is when. What changes with every
 * event (seq, the last detail) is in the record and the audit log: rewriting this file for each
 * progress and heartbeat cost a rename per event (docs/benchmarks.md).
 */
function statusOf(job: JobRecord): Record<string, unknown> {
  return { id: job.id, state: job.state, reason: job.reason, updated_at: job.updated_at, late_events: job.late_events ?? [], report: job.report ?? null };
}

function statusChanged(before: JobRecord, after: JobRecord): boolean {
  return before.state !== after.state || before.reason !== after.reason || (before.late_events ?? []).length !== (after.late_events ?? []).length || (before.report ?? null) !== (after.report ?? null);
}
