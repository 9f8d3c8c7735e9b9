import { dateOn, unrefTimer } from '../base/clock';
import { toDisposable, type Disposable } from '../base/disposable';
import type { AuditEntry } from '../store/auditLog';
import { isTerminal, type JobRecord } from '../store/jobSchema';
import { isMeasured, type JobUsage } from '../store/jobUsageSchema';
import { measureJobUsage } from '../usage/measure';
import type { JobEngine } from './jobEngine';
import { errorMessage } from '../base/errors';

/** A job that ended this long ago takes its last reading as final: its agent has long stopped writing for it. */
const SETTLE_WITHIN_MS = 24 * 3600_000;

/**
 * Reads what a local job's conversation spent (usage/measure.ts) and records it in the job record
 * through the ledger, unless the record already holds a reading as complete. Never throws; resolves
 * with the record as it is now.
 */
export async function recordUsage(engine: JobEngine, job: JobRecord, now = dateOn(engine.clock)): Promise<JobRecord> {
  const { controlPlane, sessions, logger } = engine.deps;
  if (job.target?.kind !== 'local' || !job.delivered_at) return job;
  try {
    const row = await controlPlane.sessions.get(job.target.name);
    if (!row) return job;
    const previous = isMeasured(job.usage) ? job.usage.conversation_id : null;
    let usage = await measureJobUsage({
      agent: row.agent, ctx: sessions.storeContext(row), cwd: row.cwd, conversationId: previous ?? row.conversation_id, jobId: job.id, endedAt: endedAt(engine, job), now,
    });
    const old = job.finished_at ? now.getTime() - Date.parse(job.finished_at) > SETTLE_WITHIN_MS : false;
    if (old && !usage.final) usage = { ...usage, final: true };
    return (await engine.ledger.patchIf(job.id, { usage }, (j) => replaces(j.usage, usage))) ?? controlPlane.jobs.get(job.id) ?? job;
  } catch (err) {
    logger.warn(`job ${job.id}: could not read its usage: ${errorMessage(err)}`);
    return job;
  }
}

/**
 * When the job ended as its agent's clock saw it: the time its ending event was sent (the event's
 * `ts`, in the audit log), which the agent's store is written against. The record's `finished_at`
 * is when this side applied the event — later, and much later when it waited in an outbox while the
 * broker was down; the turn the agent ended then would not be taken for the job's last.
 */
function endedAt(engine: JobEngine, job: JobRecord): string | null {
  return job.finished_at ? endedAsSent(job, engine.deps.controlPlane.audit.readEntries(job.id).entries) : null;
}

/** `endedAt` from the job's audit entries: the ending event's `ts`, unless missing or later than `finished_at`. */
export function endedAsSent(job: Pick<JobRecord, 'finished_at'>, entries: readonly AuditEntry[]): string | null {
  if (!job.finished_at) return null;
  const ts = entries.find((e) => e.type === 'event' && TERMINAL_EVENTS.has(e.event) && typeof e.ts === 'string')?.ts;
  const sent = typeof ts === 'string' ? Date.parse(ts) : NaN;
  return Number.isNaN(sent) || sent > Date.parse(job.finished_at) ? job.finished_at : new Date(sent).toISOString();
}

/** The events an agent ends its job with. */
const TERMINAL_EVENTS = new Set(['completed', 'error']);

/** True when a job's usage may still change: it ended but its reading is missing (recently) or not final. */
export function needsSettling(job: JobRecord, now: number): boolean {
  if (job.target?.kind !== 'local' || !job.delivered_at || !isTerminal(job.state)) return false;
  if (job.usage) return !job.usage.final;
  return !!job.finished_at && now - Date.parse(job.finished_at) <= SETTLE_WITHIN_MS;
}

/** Reads again the usage of the jobs among `jobs` that may have changed; the records as they are now, in order. */
export async function settleUsage(engine: JobEngine, jobs: readonly JobRecord[]): Promise<JobRecord[]> {
  const out: JobRecord[] = [];
  for (const job of jobs) out.push(needsSettling(job, engine.clock.now()) ? await recordUsage(engine, job) : job);
  return out;
}

/** After a job ends, when to read its usage again while the reading is not final (its last turn still being written). */
const RETRY_AFTER_MS = [2_000, 10_000, 60_000];

/**
 * Records usage when a local job ends, and again a few times while that reading is not final: in
 * a long-lived process (the extension, the broker's warden, a monitor) the record settles within
 * a minute; a short one (the CLI) does not wait for it — readers settle what is left (settleUsage).
 */
export function watchUsage(engine: JobEngine): Disposable {
  const clock = engine.clock;
  const timers = new Set<unknown>();
  const busy = new Set<string>();
  const measure = (job: JobRecord, attempt: number): void => {
    if (busy.has(job.id)) return;
    busy.add(job.id);
    void recordUsage(engine, engine.deps.controlPlane.jobs.get(job.id) ?? job)
      .then((now) => {
        const delay = RETRY_AFTER_MS[attempt];
        if (now.usage?.final || delay === undefined) return;
        const timer = unrefTimer(clock.setTimeout(() => {
          timers.delete(timer);
          measure(now, attempt + 1);
        }, delay));
        timers.add(timer);
      })
      .finally(() => busy.delete(job.id));
  };
  const sub = engine.ledger.onDidChangeJob(({ job, previous }) => {
    if (job.target?.kind === 'local' && isTerminal(job.state) && previous !== null && !isTerminal(previous)) measure(job, 0);
  });
  return toDisposable(() => {
    sub.dispose();
    for (const t of timers) clock.clearTimeout(t);
  });
}

/** A reading replaces the recorded one unless that one is final, or counted more of the same conversation. */
function replaces(recorded: JobUsage | null | undefined, reading: JobUsage): boolean {
  if (!recorded) return true;
  if (recorded.final) return false;
  if (isMeasured(recorded) && isMeasured(reading) && recorded.conversation_id === reading.conversation_id && reading.requests < recorded.requests) return false;
  return JSON.stringify({ ...recorded, measured_at: '' }) !== JSON.stringify({ ...reading, measured_at: '' });
}
