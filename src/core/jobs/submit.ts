import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dateOn } from '../base/clock';
import { ExitCode, UsageError, type ExitCode as ExitCodeType } from '../base/errors';
import { waitForEvent } from '../base/emitter';
import { newJobId, printable } from '../base/ids';
import { idleTimeoutS } from '../config/settings';
import { sleep } from '../base/process';
import { newJobRecord } from '../store/newJobRecord';
import { writeBrief } from './brief';
import type { JobEngine } from './jobEngine';
import { parseTarget } from './targetAddress';
import { isTerminal, JOB_TYPES, type JobOrigin, type JobRecord, type JobTimers } from '../store/jobSchema';
import { isOneOf } from '../base/schema';
import { REASONS } from './lifecycle';
import { clampTitle, titleFromTask } from './title';

export interface SubmitRequest {
  /** `NAME`, `tmux:NAME`, `herdr:NAME`, `remote:RUNNER`, `remote:RUNNER/SESSION` or `human:NAME`. */
  session: string;
  prompt?: string;
  briefFile?: string;
  role?: string;
  type?: string;
  timeoutS?: number;
  idleTimeoutS?: number;
  startTimeoutS?: number;
  heartbeatS?: number;
  parentJob?: string;
  /** Return once the prompt is delivered instead of waiting for the outcome. */
  wait: boolean;
  /** Where relative paths (the brief file) are taken from. */
  baseDir: string;
  /** Extra text for the brief (child-job states for reviewers, onboarding notes). */
  appendix?: string;
  /** The job's ID, chosen by the caller (the review loop records it before submitting). */
  jobId?: string;
  /** A short title for lists; default: the task's first sentence (title.ts). */
  title?: string;
  /** Where the job comes from (jobSchema.ts); default: a person's command, or its parent job's. */
  origin?: JobOrigin;
}

export interface SubmitResult {
  job: JobRecord;
  exitCode: ExitCodeType;
}

/** The CLI exit code a finished (or undelivered) job maps to (SPEC §5). */
export function exitCodeOf(job: JobRecord): ExitCodeType {
  switch (job.state) {
    case 'completed':
      return ExitCode.ok;
    case 'timeout':
      return ExitCode.timeout;
    case 'cancelled':
      return job.reason === REASONS.cancelledByUser || job.reason === REASONS.cancelledBySubmitter || job.reason === REASONS.endedBySubmitter ? ExitCode.failed : ExitCode.notDelivered;
    case 'failed':
      return ExitCode.failed;
    default:
      return ExitCode.ok; // still open: --no-wait delivered it
  }
}

/**
 * `mam job submit`: register the job, write its brief, hand it to its target (jobTarget.ts: a
 * session here, a remote runner, a person) exactly once, and (unless --no-wait) wait for the
 * outcome under the timers of SPEC §5. Bad input throws UsageError before anything is written.
 */
export async function submitJob(engine: JobEngine, req: SubmitRequest): Promise<SubmitResult> {
  engine.trust.require('delegate a job');
  const { controlPlane, config, targets } = engine.deps;
  const address = parseTarget(req.session);
  const task = taskOf(req);
  const title = titleOf(req, task);
  const type = req.type ?? 'direct';
  const role = roleOf(req.role);
  if (!isOneOf(JOB_TYPES, type)) throw new UsageError(`--type must be one of ${JOB_TYPES.join(', ')}`);
  if (req.parentJob !== undefined && !controlPlane.jobs.get(req.parentJob)) throw new UsageError(`unknown parent job '${printable(req.parentJob, 60)}'`);
  for (const [flag, v] of [['--timeout', req.timeoutS], ['--idle-timeout', req.idleTimeoutS], ['--start-timeout', req.startTimeoutS], ['--heartbeat', req.heartbeatS]] as const) {
    if (v !== undefined && !(v > 0)) throw new UsageError(`${flag} must be more than 0 seconds`);
  }
  const v = config.values;
  const heartbeatS = req.heartbeatS ?? v.heartbeatS;
  const budget = req.timeoutS ?? v.jobTimeoutS;
  // A person neither answers within seconds nor sends heartbeats: unless told otherwise, only the
  // budget judges their job (T and K×N are the budget too).
  const person = address.kind === 'human';
  const timers: JobTimers = {
    start_timeout_s: req.startTimeoutS ?? (person ? budget : v.startTimeoutS),
    heartbeat_s: heartbeatS,
    idle_timeout_s: req.idleTimeoutS ?? (person ? budget : req.heartbeatS !== undefined ? v.livenessK * heartbeatS : idleTimeoutS(v)),
    timeout_s: budget,
  };

  const target = targets.of(address.kind);
  target.check(engine, { task, ...(req.appendix !== undefined ? { appendix: req.appendix } : {}) });

  // Subscribe before anything can publish; no broker, nothing written: exit 3.
  await engine.connect();

  const owner = { pid: process.pid, host: os.hostname(), token: randomBytes(8).toString('hex') };
  engine.supervise({ ownerToken: owner.token });
  const id = req.jobId ?? newJobId(dateOn(engine.clock));
  if (controlPlane.jobs.get(id)) throw new UsageError(`job ${id} exists already`);
  const briefPath = path.join(controlPlane.paths.jobDir(id), 'brief.md');
  const token = randomBytes(32).toString('hex');
  let job = await engine.ledger.register(
    newJobRecord({
      id, session: req.session, type, role, parent_job: req.parentJob ?? null,
      origin: req.origin ?? (req.parentJob !== undefined ? { kind: 'parent', by: req.parentJob } : { kind: 'person', by: null }),
      target: { kind: address.kind, name: address.name, ...(address.mux ? { mux: address.mux } : {}) }, timers, brief: briefPath, owner, title,
    }, dateOn(engine.clock)),
    token,
  );
  writeBrief({ job, task, cliPath: engine.deps.cliPath, workspace: controlPlane.workspace, heartbeatS, ...(req.appendix ? { appendix: req.appendix } : {}) }, briefPath);

  const delivery = await target.deliver(engine, { job, address, task, token, ownerToken: owner.token, ...(req.appendix ? { appendix: req.appendix } : {}) });
  if (!delivery.delivered) return outcome(delivery.job, delivery.claimedElsewhere);
  job = delivery.job;
  if (!req.wait) {
    // Nobody waits on it now: the job warden (and the monitor or the extension, if running) adopts its timers.
    job = await engine.ledger.patch(id, { owner: null });
    await engine.flush(); // the watchers learn of it from its state message: let it leave before we exit
    engine.ensureWatcher();
    return { job, exitCode: ExitCode.ok };
  }
  const ended = await waitForEnd(engine, id);
  await target.afterEnd(engine, ended);
  return outcome(ended);
}

/** A job's role, case-insensitive (`--role Reviewer` is a reviewer); a word, at most 32 characters. */
export function roleOf(role: string | undefined): string | null {
  if (role === undefined) return null;
  const word = role.trim().toLowerCase();
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(word)) throw new UsageError(`--role '${printable(role, 40)}' is not a role; use a word such as worker, creator, reviewer or planner`);
  return word;
}

/** The job's title: `--title` (one line, shortened if long), else the task's first sentence. */
export function titleOf(req: Pick<SubmitRequest, 'title'>, task: string): string {
  if (req.title === undefined) return titleFromTask(task);
  const title = clampTitle(req.title);
  if (title === '') throw new UsageError('--title is empty');
  return title;
}

function taskOf(req: SubmitRequest): string {
  if ((req.prompt === undefined) === (req.briefFile === undefined)) throw new UsageError('give exactly one of --prompt TEXT or --brief FILE');
  if (req.prompt !== undefined) {
    if (req.prompt.trim() === '') throw new UsageError('--prompt is empty');
    return req.prompt;
  }
  const file = path.resolve(req.baseDir, req.briefFile!);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`--brief ${req.briefFile} does not exist or cannot be read`, 'missing_brief');
  }
}

/** Waits until the job is terminal: its own events, timers, or another process deciding. */
export async function waitForEnd(engine: JobEngine, id: string): Promise<JobRecord> {
  for (;;) {
    const job = engine.deps.controlPlane.jobs.require(id);
    if (isTerminal(job.state)) return job;
    await waitForEvent(engine.ledger.onDidChangeJob, (c) => c.job.id === id && isTerminal(c.job.state), 1000, 'the end of the job', engine.clock).catch(() => undefined);
    await sleep(0);
  }
}

function outcome(job: JobRecord, claimedElsewhere = false): SubmitResult {
  if (claimedElsewhere) return { job, exitCode: ExitCode.notDelivered };
  return { job, exitCode: exitCodeOf(job) };
}
