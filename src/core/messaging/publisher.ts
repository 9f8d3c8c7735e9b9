import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError, errorMessage } from '../base/errors';
import { printable } from '../base/ids';
import { withLock } from '../store/lock';
import { sleep } from '../base/process';
import { isoOn, systemClock } from '../base/clock';
import { ControlPlanePaths } from '../store/paths';
import { readJobToken } from '../store/jobToken';
import { JobOutbox } from './outbox';
import { MAX_DETAIL_CHARS, MAX_REPORT_BYTES, signatureOf, topics, workspaceIdOf, type EventName, type EventPayload } from './protocol';
import { QuickConnection, QuickPublishError, type QuickEndpoint } from './quickPublish';

export interface PublishRequest {
  workspace: string;
  jobId: string;
  event: EventName;
  detail?: string;
  /** `started --heartbeat N`. */
  heartbeat?: number;
  /** A report file to hand in with the event (its content travels with it). */
  reportFile?: string;
  sender: string;
  /** Where to publish; undefined when no broker can be reached (the event is kept in the outbox). */
  endpoint: QuickEndpoint | undefined;
  /** How long to keep retrying an unreachable broker before leaving the event in the outbox. */
  retryBudgetMs?: number;
  /** A long-lived publisher's own connection (to `endpoint`), kept across events; else one per event. */
  connection?: QuickConnection;
}

/** An event to append to its job's outbox, before anything publishes it. */
export type AppendRequest = Omit<PublishRequest, 'endpoint' | 'connection' | 'retryBudgetMs'>;

export interface PublishResult {
  payload: EventPayload;
  /** True when the broker acknowledged it (PUBACK). */
  delivered: boolean;
  /** Earlier events of this job that were still in the outbox and went out first. */
  flushed: number;
  /** Why it was not delivered. */
  problem?: string;
}

/**
 * Publishes one job event the way SPEC §5/§6 asks: under the job's outbox lock, allocate the next
 * seq, sign, append to the outbox on disk, then publish at QoS 1 — any older undelivered events of
 * the job first, in order — and mark them delivered on PUBACK. If the broker stays unreachable for
 * the retry budget the event stays in the outbox, safe, for the monitor to drain.
 */
export async function publishJobEvent(req: PublishRequest): Promise<PublishResult> {
  return (await publishUnlessEnded(req, false))!;
}

/**
 * A heartbeat from the host's heartbeat service: published as `publishJobEvent` publishes, but
 * only while the agent has not had its last word. A heartbeat due as the agent's `completed` lands
 * (in the outbox, not yet applied anywhere) would follow it and be kept as a late event of the
 * finished job: then nothing is appended, and undefined says the job ended.
 */
export async function publishHeartbeat(req: Omit<PublishRequest, 'event' | 'detail' | 'heartbeat' | 'reportFile'>): Promise<PublishResult | undefined> {
  return publishUnlessEnded({ ...req, event: 'heartbeat' }, true);
}

async function publishUnlessEnded(req: PublishRequest, unlessEnded: boolean): Promise<PublishResult | undefined> {
  const prepared = prepare(req);
  const { paths, outbox } = prepared;
  const topic = topics.events(workspaceIdOf(req.workspace), req.jobId);
  // A connection of its own is opened before the outbox is written, and the broker answers its
  // CONNECT while the outbox is locked, appended and fsynced; nothing is published before that.
  const own = req.connection || !req.endpoint ? undefined : ownConnection(req.endpoint);
  if (own) {
    own.open();
    // One turn of the event loop: on a local broker the TCP connection is up by then and the
    // CONNECT goes out now, not after the outbox work (which never waits on the network).
    await new Promise((resolve) => setImmediate(resolve));
  }
  try {
    return await withLock(paths.lock(`outbox-${req.jobId}`), async () => {
      if (unlessEnded && outbox.hasEnded()) return undefined;
      const { payload, backlog } = await appendUnderLock(req, prepared);
      const connection = own ?? req.connection;
      if (!connection) return { payload, delivered: false, flushed: 0, problem: 'no broker is configured or running' };
      const sent = await publishInOrder(outbox, topic, [...backlog, payload], connection, req.retryBudgetMs ?? 1000);
      return sent.delivered ? { payload, delivered: true, flushed: backlog.length } : { payload, delivered: false, flushed: 0, problem: sent.problem };
    }, { what: `the outbox of job ${req.jobId}`, timeoutMs: 60_000 });
  } finally {
    own?.close();
  }
}

/**
 * Appends one job event to its outbox (signed, fsynced, under the outbox lock) and publishes
 * nothing: what a `mam event` does before it hands the job to the host's relay (eventRelay.ts),
 * which publishes it, with any event still waiting before it, with `flushOutbox`. All of it
 * synchronous under the lock: such a process has nothing else to do meanwhile (`appendNow`).
 */
export async function appendJobEvent(req: AppendRequest): Promise<EventPayload> {
  const prepared = prepare(req);
  return withLock(
    prepared.paths.lock(`outbox-${req.jobId}`),
    () => {
      const payload = stamp(req, prepared, prepared.outbox.allocateSeq());
      prepared.outbox.appendNow(payload);
      return payload;
    },
    { what: `the outbox of job ${req.jobId}`, timeoutMs: 60_000 },
  );
}

export interface FlushRequest {
  workspace: string;
  jobId: string;
  endpoint: QuickEndpoint | undefined;
  connection?: QuickConnection;
  retryBudgetMs?: number;
}

/**
 * Publishes, in order and under the job's outbox lock, every event of the job's outbox the broker
 * has not acknowledged, and marks them acknowledged: what the host's relay does when a `mam event`
 * names a job to it. Resolves with how many were sent (0: nothing was waiting), or why they were not.
 */
export async function flushOutbox(req: FlushRequest): Promise<{ sent: number; problem?: string }> {
  const paths = new ControlPlanePaths(req.workspace);
  if (!fs.existsSync(paths.jobFile(req.jobId))) throw new UsageError(`unknown job '${printable(req.jobId, 60)}' in ${req.workspace}`, 'unknown_job');
  const outbox = new JobOutbox(paths.jobDir(req.jobId));
  const topic = topics.events(workspaceIdOf(req.workspace), req.jobId);
  const own = req.connection || !req.endpoint ? undefined : ownConnection(req.endpoint);
  try {
    return await withLock(paths.lock(`outbox-${req.jobId}`), async () => {
      const waiting = outbox.pending();
      if (waiting.length === 0) return { sent: 0 };
      const connection = own ?? req.connection;
      if (!connection) return { sent: 0, problem: 'no broker is configured or running' };
      const r = await publishInOrder(outbox, topic, waiting, connection, req.retryBudgetMs ?? 1000);
      return r.delivered ? { sent: waiting.length } : { sent: 0, problem: r.problem };
    }, { what: `the outbox of job ${req.jobId}`, timeoutMs: 60_000 });
  } finally {
    own?.close();
  }
}

interface Prepared {
  paths: ControlPlanePaths;
  outbox: JobOutbox;
  detail: string | null;
  report: { name: string; content: string } | undefined;
  token: string | undefined;
}

/** Checks the request and reads what the event needs, before any lock is taken. */
function prepare(req: AppendRequest): Prepared {
  const paths = new ControlPlanePaths(req.workspace);
  if (!fs.existsSync(paths.jobFile(req.jobId))) throw new UsageError(`unknown job '${printable(req.jobId, 60)}' in ${req.workspace}`, 'unknown_job');
  const detail = req.detail ?? null;
  if (detail !== null && detail.length > MAX_DETAIL_CHARS) throw new UsageError(`--detail is ${detail.length} characters long; the limit is ${MAX_DETAIL_CHARS} (hand long text in with --report FILE)`);
  const report = req.reportFile === undefined ? undefined : readReport(req.reportFile);
  return {
    paths,
    outbox: new JobOutbox(paths.jobDir(req.jobId)),
    detail,
    report,
    token: readJobToken(paths, req.jobId),
  };
}

function ownConnection(endpoint: QuickEndpoint): QuickConnection {
  return new QuickConnection(endpoint, `mam-event-${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
}

/** Under the job's outbox lock: the next seq, and the signed event appended with fsync; the backlog goes out before it. */
async function appendUnderLock(req: AppendRequest, prepared: Prepared): Promise<{ payload: EventPayload; backlog: EventPayload[] }> {
  const { seq, backlog } = prepared.outbox.allocate();
  const payload = stamp(req, prepared, seq);
  await prepared.outbox.append(payload);
  return { payload, backlog };
}

/** The event as it goes out: numbered `seq`, stamped now, signed with the job's token (if it has one). */
function stamp(req: AppendRequest, { detail, report, token }: Prepared, seq: number): EventPayload {
  const payload: EventPayload = {
    v: 1,
    job_id: req.jobId,
    event: req.event,
    seq,
    ts: isoOn(systemClock),
    sender: req.sender,
    detail,
    ...(req.heartbeat !== undefined ? { heartbeat: req.heartbeat } : {}),
    ...(report ? { report } : {}),
  };
  if (token) payload.sig = signatureOf(payload, token);
  return payload;
}

/**
 * Under the job's outbox lock: publishes `events` in order and marks the last acknowledged on
 * PUBACK. An agent waits for this inside its turn: a broker that is down or frozen costs it about
 * the budget (a second by default), then the events wait in the outbox, which every subscriber drains.
 */
async function publishInOrder(outbox: JobOutbox, topic: string, events: readonly EventPayload[], connection: QuickConnection, budgetMs: number): Promise<{ delivered: boolean; problem?: string }> {
  const deadline = Date.now() + budgetMs;
  let problem = '';
  for (let backoff = 100; ; backoff = Math.min(backoff * 2, 1000)) {
    try {
      const messages = events.map((p) => ({ topic, payload: JSON.stringify(p) }));
      await connection.publish(messages, Math.max(100, deadline - Date.now()));
      outbox.markAcked(events[events.length - 1]!.seq);
      return { delivered: true };
    } catch (err) {
      problem = errorMessage(err);
      if (err instanceof QuickPublishError && err.kind === 'refused') break;
      if (Date.now() + backoff >= deadline) break;
      await sleep(backoff);
    }
  }
  return { delivered: false, problem };
}

function readReport(file: string): { name: string; content: string } {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new UsageError(`--report ${file} does not exist`, 'missing_report');
  }
  if (!stat.isFile()) throw new UsageError(`--report ${file} is not a file`, 'missing_report');
  if (stat.size > MAX_REPORT_BYTES) throw new UsageError(`--report ${file} is ${stat.size} bytes; the limit is ${MAX_REPORT_BYTES}`);
  const name = path.basename(file).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) || 'report.md';
  return { name, content: fs.readFileSync(file, 'utf8') };
}
