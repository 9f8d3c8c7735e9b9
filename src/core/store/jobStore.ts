import * as fs from 'node:fs';
import { UsageError, errorMessage } from '../base/errors';
import { checkId, printable } from '../base/ids';
import type { Logger } from '../base/log';
import { validateJobRecord, type JobRecord } from './jobSchema';
import { readIfExists, removeStrayTemps, replaceFileOffLoop, writeFileAtomic } from './atomicFile';
import { withLock } from './lock';
import type { ControlPlanePaths } from './paths';

export interface JobListing {
  jobs: JobRecord[];
  /** Job files that could not be read, with the reason; listed, never fatal. */
  unreadable: Array<{ file: string; why: string }>;
}

/**
 * Live job records, `.mam/jobs/<id>.json`: one file per job, each with its own lock, each replaced
 * atomically. Readers take no lock. A record replaced behind (`replaceBehind`) is read from this
 * process's memory until its file has landed.
 */
export class JobStore {
  constructor(
    private readonly paths: ControlPlanePaths,
    private readonly logger: Logger,
  ) {}

  /** Writes a new record; refuses an ID that exists. */
  async create(record: JobRecord): Promise<JobRecord> {
    const valid = validateJobRecord(record, `job ${record.id}`);
    this.paths.ensureDir();
    fs.mkdirSync(this.paths.jobsDir, { recursive: true });
    return this.withJobLock(valid.id, () => {
      if (fs.existsSync(this.paths.jobFile(valid.id))) throw new UsageError(`job ${valid.id} already exists`, 'duplicate_job');
      this.write(valid, { durable: true });
      return valid;
    });
  }

  /** Replaces a record whole, fsynced (the caller holds its lock); an event's record goes `replaceBehind`. */
  replace(job: JobRecord): void {
    checkJobId(job.id);
    this.write(job, { durable: true });
  }

  /**
   * Replaces a record without holding up the event loop (the caller holds its lock, and keeps it
   * until this resolves): from now on this process reads the new record (`get`, `peek`, `list`)
   * while its file is written and renamed over the old one on libuv's pool; other processes read
   * the file, and take the lock, only once it has landed. Not durable: for an event's record, whose
   * audit line is (the ledger announces the event once that line is on disk, not after the rename).
   */
  async replaceBehind(job: JobRecord): Promise<void> {
    checkJobId(job.id);
    const file = this.paths.jobFile(job.id);
    this.landing.set(job.id, job);
    try {
      await replaceFileOffLoop(file, `${JSON.stringify(job, null, 2)}\n`);
      this.remember(job.id, stampOf(file), job);
    } finally {
      if (this.landing.get(job.id) === job) this.landing.delete(job.id);
    }
  }

  /** Records replaced behind whose file has not landed yet (`replaceBehind`). */
  private readonly landing = new Map<string, JobRecord>();

  private write(job: JobRecord, options: { durable: boolean }): void {
    const file = this.paths.jobFile(job.id);
    writeFileAtomic(file, `${JSON.stringify(job, null, 2)}\n`, options);
    this.remember(job.id, stampOf(file), job);
  }

  /**
   * A record as it is on disk, from this process's last read or write of it when the file has not
   * changed since (its inode, size and times: a record is always replaced whole, so a new one is a
   * new inode). For hints only — who applies an event, who owns a job — like any read without the
   * lock it may be old the moment it returns; under the job's lock read it with `get`. Every
   * subscriber (the extension, a monitor, the warden) asks this of every event of every job, and
   * the record was read and checked again for each before. The object is shared: read it, never
   * change it.
   */
  peek(jobId: string): JobRecord | undefined {
    checkJobId(jobId);
    const landing = this.landing.get(jobId);
    if (landing) return landing;
    const stamp = stampOf(this.paths.jobFile(jobId));
    if (stamp === undefined) return undefined;
    const known = this.seen.get(jobId);
    if (known?.stamp === stamp) return known.job;
    const job = this.get(jobId);
    if (job) this.remember(jobId, stamp, job);
    return job;
  }

  /** Records as this process last read or wrote them, with the file's identity then. */
  private readonly seen = new Map<string, { stamp: string; job: JobRecord }>();

  private remember(jobId: string, stamp: string | undefined, job: JobRecord): void {
    if (stamp === undefined) return;
    this.seen.delete(jobId);
    if (this.seen.size >= 1024) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(jobId, { stamp, job });
  }

  get(jobId: string): JobRecord | undefined {
    checkJobId(jobId);
    const landing = this.landing.get(jobId);
    if (landing) return structuredClone(landing);
    const bytes = readIfExists(this.paths.jobFile(jobId));
    if (bytes === undefined) return undefined;
    return validateJobRecord(JSON.parse(bytes.toString('utf8')), `.mam/jobs/${jobId}.json`);
  }

  /** Like `get`, but an unknown job is a usage error naming it. */
  require(jobId: string): JobRecord {
    const job = this.get(jobId);
    if (!job) throw new UsageError(`unknown job '${printable(jobId)}'`, 'unknown_job');
    return job;
  }

  /** Every job record, newest first. */
  list(): JobListing {
    let names: string[];
    try {
      names = fs.readdirSync(this.paths.jobsDir);
    } catch {
      return { jobs: [], unreadable: [] };
    }
    const jobs: JobRecord[] = [];
    const unreadable: JobListing['unreadable'] = [];
    for (const name of names) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const id = name.slice(0, -'.json'.length);
      try {
        const job = this.get(id);
        if (job) jobs.push(job);
      } catch (err) {
        unreadable.push({ file: name, why: errorMessage(err) });
      }
    }
    jobs.sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1));
    return { jobs, unreadable };
  }

  /**
   * Changes a record under its lock: read → `change` → validate → atomic write. `change` returns
   * the new record, or undefined to leave it as it is. Resolves with the record as stored.
   */
  async update(jobId: string, change: (job: JobRecord) => JobRecord | undefined): Promise<JobRecord> {
    return this.withJobLock(jobId, () => {
      const current = this.require(jobId);
      const next = change(structuredClone(current));
      if (next === undefined) return current;
      const valid = validateJobRecord({ ...next, id: jobId, updated_at: new Date().toISOString() }, `job ${jobId}`);
      this.write(valid, { durable: true });
      return valid;
    });
  }

  /**
   * Runs `fn` under the job's lock (also used by the audit log, so record and log move together).
   * Records are written under it only: a temp file of one is left only by a holder that died, so
   * the folder is cleared of them when a lock is taken over, not read at every event.
   */
  withJobLock<T>(jobId: string, fn: () => Promise<T> | T): Promise<T> {
    checkJobId(jobId);
    return withLock(this.paths.lock(`job-${jobId}`), fn, { what: `job ${jobId}`, logger: this.logger, afterTakeover: () => removeStrayTemps(this.paths.jobFile(jobId)) });
  }
}

/** A file's identity and version: inode, size, change times (ns); undefined when it is missing. */
function stampOf(file: string): string | undefined {
  const stat = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
  return stat && `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

export function checkJobId(jobId: string): void {
  checkId(jobId, 'job');
}
