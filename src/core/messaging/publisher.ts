import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError, errorMessage } from '../base/errors';
import { printable } from '../base/ids';
import { withLock } from '../store/lock';
import { sleep } from '../base/process';
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
  const paths = new ControlPlanePaths(req.workspace);
  const jobFile = paths.jobFile(req.jobId);
  if (!fs.existsSync(jobFile)) throw new UsageError(`unknown job '${printable(req.jobId, 60)}' in ${req.workspace}`, 'unknown_job');
  const detail = req.detail ?? null;
  if (detail !== null && detail.length > MAX_DETAIL_CHARS) throw new UsageError(`--detail is ${detail.length} characters long; the limit is ${MAX_DETAIL_CHARS} (hand long text in with --report FILE)`);
  const report = req.reportFile === undefined ? undefined : readReport(req.reportFile);
  const token = readJobToken(paths, req.jobId);
  const outbox = new JobOutbox(paths.jobDir(req.jobId));
  const topic = topics.events(workspaceIdOf(req.workspace), req.jobId);
  // A connection of its own is opened before the outbox is written, and the broker answers its
  // CONNECT while the outbox is locked, appended and fsynced; nothing is published before that.
  const own = req.connection || !req.endpoint ? undefined : new QuickConnection(req.endpoint, `mam-event-${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  if (own) {
    own.open();
    // One turn of the event loop: on a local broker the TCP connection is up by then and the
    // CONNECT goes out now, not after the outbox work (which never waits on the network).
    await new Promise((resolve) => setImmediate(resolve));
  }
  try {
    return await withLock(paths.lock(`outbox-${req.jobId}`), () => appendAndPublish(req, { outbox, detail, report, token, topic, connection: own ?? req.connection }), {
      what: `the outbox of job ${req.jobId}`,
      timeoutMs: 60_000,
    });
  } finally {
    own?.close();
  }
}

interface Prepared {
  outbox: JobOutbox;
  detail: string | null;
  report: { name: string; content: string } | undefined;
  token: string | undefined;
  topic: string;
  /** Undefined when there is no broker to publish to. */
  connection: QuickConnection | undefined;
}

/** Under the job's outbox lock: the next seq, the signed event appended with fsync, then the backlog and the event published. */
async function appendAndPublish(req: PublishRequest, { outbox, detail, report, token, topic, connection }: Prepared): Promise<PublishResult> {
  const { seq, backlog } = outbox.allocate();
  const payload: EventPayload = {
    v: 1,
    job_id: req.jobId,
    event: req.event,
    seq,
    ts: new Date().toISOString(),
    sender: req.sender,
    detail,
    ...(req.heartbeat !== undefined ? { heartbeat: req.heartbeat } : {}),
    ...(report ? { report } : {}),
  };
  if (token) payload.sig = signatureOf(payload, token);
  await outbox.append(payload);

  if (!connection) return { payload, delivered: false, flushed: 0, problem: 'no broker is configured or running' };
  const toSend = [...backlog, payload];
  // An agent waits for this command inside its turn: a broker that is down or frozen costs it
  // about a second, then the event waits in the outbox, which every subscriber drains.
  const deadline = Date.now() + (req.retryBudgetMs ?? 1000);
  let problem = '';
  for (let backoff = 100; ; backoff = Math.min(backoff * 2, 1000)) {
    try {
      const messages = toSend.map((p) => ({ topic, payload: JSON.stringify(p) }));
      const budget = Math.max(100, deadline - Date.now());
      await connection.publish(messages, budget);
      outbox.markAcked(payload.seq);
      return { payload, delivered: true, flushed: backlog.length };
    } catch (err) {
      problem = errorMessage(err);
      if (err instanceof QuickPublishError && err.kind === 'refused') break;
      if (Date.now() + backoff >= deadline) break;
      await sleep(backoff);
    }
  }
  return { payload, delivered: false, flushed: 0, problem };
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
