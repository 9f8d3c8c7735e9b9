import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExitCode, UsageError, type ExitCode as ExitCodeType } from '../base/errors';
import { waitForEvent } from '../base/emitter';
import { newJobId, nameProblem, printable } from '../base/ids';
import { idleTimeoutS } from '../config/settings';
import { DeliveryError } from '../mux/inject';
import { sleep } from '../base/process';
import type { SessionRow } from '../store/sessionSchema';
import { checkRemoteSubmit, clearDispatch, dispatchRemote } from '../remote/dispatch';
import { injectedLine, writeBrief } from './brief';
import type { JobEngine } from './jobEngine';
import { isTerminal, JOB_TYPES, type JobRecord, type JobTarget, type JobTimers, type JobType } from '../store/jobSchema';
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
      return job.reason === REASONS.cancelledByUser || job.reason === REASONS.cancelledBySubmitter ? ExitCode.failed : ExitCode.notDelivered;
    case 'failed':
      return ExitCode.failed;
    default:
      return ExitCode.ok; // still open: --no-wait delivered it
  }
}

/**
 * Parses the `--session` target of `mam job submit`: `NAME`, `tmux:NAME`, `herdr:NAME`,
 * `remote:RUNNER`, `remote:RUNNER/SESSION` (a session on the runner's host; a runner started with
 * its own `--session` uses that one whatever the dispatch says), or `human:NAME` (a person).
 */
export function parseTarget(target: string): { kind: JobTarget['kind']; mux?: 'tmux' | 'herdr'; name: string; session?: string } {
  const m = /^(?:(tmux|herdr|remote|human):)?(.*)$/s.exec(target)!;
  const [name, session, ...extra] = m[1] === 'remote' ? m[2]!.split('/') : [m[2]!];
  const check = (value: string, what: string): void => {
    const problem = nameProblem(value, what);
    if (problem) throw new UsageError(`--session ${printable(target, 60)}: ${problem}`);
  };
  check(name!, m[1] === 'remote' ? 'runner name' : m[1] === 'human' ? "person's name" : 'session name');
  if (m[1] === 'human') return { kind: 'human', name: name! };
  if (m[1] !== 'remote') return { kind: 'local', ...(m[1] ? { mux: m[1] as 'tmux' | 'herdr' } : {}), name: name! };
  if (extra.length > 0) throw new UsageError(`--session ${printable(target, 60)}: use remote:RUNNER or remote:RUNNER/SESSION`);
  if (session !== undefined) check(session, 'session name');
  return { kind: 'remote', name: name!, ...(session !== undefined ? { session } : {}) };
}

/**
 * `mam job submit`: register the job, write its brief, wait for the session to be free, claim it,
 * deliver the one-line prompt exactly once, and (unless --no-wait) wait for the outcome under the
 * timers of SPEC §5. Bad input throws UsageError before anything is written.
 */
export async function submitJob(engine: JobEngine, req: SubmitRequest): Promise<SubmitResult> {
  const { controlPlane, config } = engine.deps;
  const target = parseTarget(req.session);
  const task = taskOf(req);
  const title = titleOf(req, task);
  const type = (req.type ?? 'direct') as JobType;
  const role = roleOf(req.role);
  if (!JOB_TYPES.includes(type)) throw new UsageError(`--type must be one of ${JOB_TYPES.join(', ')}`);
  if (req.parentJob !== undefined && !controlPlane.jobs.get(req.parentJob)) throw new UsageError(`unknown parent job '${printable(req.parentJob, 60)}'`);
  for (const [flag, v] of [['--timeout', req.timeoutS], ['--idle-timeout', req.idleTimeoutS], ['--start-timeout', req.startTimeoutS], ['--heartbeat', req.heartbeatS]] as const) {
    if (v !== undefined && !(v > 0)) throw new UsageError(`${flag} must be more than 0 seconds`);
  }
  const v = config.values;
  const heartbeatS = req.heartbeatS ?? v.heartbeatS;
  const budget = req.timeoutS ?? v.jobTimeoutS;
  // A person neither answers within seconds nor sends heartbeats: unless told otherwise, only the
  // budget judges their job (T and K×N are the budget too).
  const person = target.kind === 'human';
  const timers: JobTimers = {
    start_timeout_s: req.startTimeoutS ?? (person ? budget : v.startTimeoutS),
    heartbeat_s: heartbeatS,
    idle_timeout_s: req.idleTimeoutS ?? (person ? budget : req.heartbeatS !== undefined ? v.livenessK * heartbeatS : idleTimeoutS(v)),
    timeout_s: budget,
  };

  if (target.kind === 'remote') checkRemoteSubmit(config, task, req.appendix);

  // Subscribe before anything can publish; no broker, nothing written: exit 3.
  await engine.connect();

  const owner = { pid: process.pid, host: os.hostname(), token: randomBytes(8).toString('hex') };
  const supervisor = engine.supervise({ ownerToken: owner.token });
  void supervisor;
  const id = req.jobId ?? newJobId();
  if (controlPlane.jobs.get(id)) throw new UsageError(`job ${id} exists already`);
  const now = new Date().toISOString();
  const briefPath = path.join(controlPlane.paths.jobDir(id), 'brief.md');
  const token = randomBytes(32).toString('hex');
  let job = await engine.ledger.register(
    {
      id, session: req.session, type, role, state: 'registered', reason: null, created_at: now, updated_at: now, seq: 0,
      parent_job: req.parentJob ?? null, detail: null, target: { kind: target.kind, name: target.name, ...(target.mux ? { mux: target.mux } : {}) },
      timers, signed: true, brief: briefPath, owner, title, delivery: null, dispatched_at: null, started_at: null, last_event_at: null, finished_at: null, missing: [],
    },
    token,
  );
  writeBrief({ job, task, cliPath: engine.deps.cliPath, workspace: controlPlane.workspace, heartbeatS, ...(req.appendix ? { appendix: req.appendix } : {}) }, briefPath);

  if (target.kind === 'human') {
    job = await assignToPerson(engine, id, owner.token);
  } else if (target.kind === 'remote') {
    const sent = await dispatchRemote(engine, { job, runner: target.name, task, token, ownerToken: owner.token, ...(target.session ? { session: target.session } : {}), ...(req.appendix ? { appendix: req.appendix } : {}) });
    if (!sent.delivered) return finish(engine, sent.job, sent.claimedElsewhere);
    job = sent.job;
  } else {
    const delivery = await deliverJob(engine, { id, ownerToken: owner.token, briefPath, target });
    if (!delivery.delivered) return { job: delivery.job, exitCode: delivery.exitCode };
    job = delivery.job;
  }
  if (!req.wait) {
    // Nobody waits on it now: the job warden (and the monitor or the extension, if running) adopts its timers.
    job = await engine.ledger.patch(id, { owner: null });
    await engine.flush(); // the watchers learn of it from its state message: let it leave before we exit
    engine.ensureWatcher();
    return { job, exitCode: ExitCode.ok };
  }
  const ended = await waitForEnd(engine, id);
  if (target.kind === 'remote') await clearDispatch(engine, target.name, id);
  return finish(engine, ended);
}

/**
 * A job for a person: nothing is typed anywhere. It is `dispatched` (assigned) at once, and T and
 * the budget count from now; the person follows the brief — `mam event …` in a terminal, or Start
 * and Complete on the job in VS Code — and their events are judged like an agent's.
 */
async function assignToPerson(engine: JobEngine, id: string, ownerToken: string): Promise<JobRecord> {
  const now = new Date().toISOString();
  const job = await engine.ledger.transition(id, 'dispatched', null, {
    when: (j) => j.state === 'registered' && j.owner?.token === ownerToken,
    fields: { dispatched_at: now, delivered_at: now, delivery: 'assigned' },
  });
  return job ?? engine.deps.controlPlane.jobs.require(id);
}

/**
 * Claims the session, marks the job `dispatched` and types its one-line prompt, exactly once: the
 * delivery half of a submit, also used by `mam remote run` for the mirror of a remote job.
 * `delivered: false` means the job has ended (or belongs to another attempt) and `exitCode` says why.
 */
export async function deliverJob(
  engine: JobEngine,
  input: { id: string; ownerToken: string; briefPath: string; target: { name: string; mux?: 'tmux' | 'herdr' } },
): Promise<SubmitResult & { delivered: boolean }> {
  const { controlPlane, config, sessions } = engine.deps;
  const { id, briefPath, target } = input;
  const notDelivered = (r: SubmitResult) => ({ ...r, delivered: false });
  // The session must exist, match the asked multiplexer, and run.
  const row = await controlPlane.sessions.get(target.name);
  if (!row || (target.mux && row.mux !== target.mux)) return notDelivered(finish(engine, await cancel(engine, id, REASONS.targetNotFound, `no ${target.mux ?? ''} session '${target.name}'`.replace('  ', ' '))));
  if (row.status !== 'running' || !row.target) return notDelivered(finish(engine, await cancel(engine, id, REASONS.targetNotFound, `session '${target.name}' is ${row.status}`)));

  const claimed = await claimSession(engine, row.name, id, input.ownerToken, config.values.dispatchWaitS * 1000);
  if (claimed !== 'claimed') return notDelivered(finish(engine, claimed));
  const live = (await controlPlane.sessions.get(row.name))!;

  // Never inject twice: the record says `dispatched` before a single key is typed.
  const dispatched = await engine.ledger.transition(id, 'dispatched', null, {
    when: (j) => j.state === 'registered' && j.owner?.token === input.ownerToken,
    fields: { dispatched_at: new Date().toISOString(), delivery: 'pending', target: { kind: 'local', name: live.name, mux: live.mux, server: live.server, pane: live.target, pane_pid: live.pid } },
  });
  if (!dispatched) return notDelivered(finish(engine, controlPlane.jobs.require(id), true));
  try {
    const report = await sessions.deliver(live, injectedLine(id, briefPath));
    const job = await engine.ledger.patch(id, { delivery: report.submitted === 'unconfirmed' ? 'unconfirmed' : 'typed', delivered_at: new Date().toISOString() });
    // An agent that names its own conversation (codex) writes it at its first message: record it
    // now, so the session can be resumed even if its server dies before a stop.
    if (!live.conversation_id) await sessions.learnConversation(live.name, { boundMs: 10_000 });
    return { job, exitCode: ExitCode.ok, delivered: true };
  } catch (err) {
    if (!(err instanceof DeliveryError)) throw err;
    const job = (await engine.ledger.transition(id, 'cancelled', REASONS.notDelivered, { when: (j) => !isTerminal(j.state), fields: { delivery: 'failed' }, note: err.message, ...(err.screenText ? { screen: err.screenText } : {}) })) ?? controlPlane.jobs.require(id);
    return notDelivered(finish(engine, job));
  }
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

async function cancel(engine: JobEngine, id: string, reason: string, note: string): Promise<JobRecord> {
  return (await engine.ledger.transition(id, 'cancelled', reason, { when: (j) => !isTerminal(j.state), note })) ?? engine.deps.controlPlane.jobs.require(id);
}

/**
 * One job per session: waits (up to the dispatch wait) for the session's previous job to end, then
 * claims the session for this one. Gives up with `session_busy`, or with `claimed` when another
 * attempt took this job's record meanwhile (both: exit 5, nothing delivered).
 */
async function claimSession(engine: JobEngine, session: string, id: string, ownerToken: string, waitMs: number): Promise<'claimed' | JobRecord> {
  const { controlPlane } = engine.deps;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const record = controlPlane.jobs.require(id);
    if (record.owner?.token !== ownerToken || record.state !== 'registered') return finishRecord(record, true);
    const got = await controlPlane.sessions.mutate((tx) => {
      const row = tx.get(session);
      if (!row) return 'gone' as const;
      const holder = row.current_job ? controlPlane.jobs.get(row.current_job) : undefined;
      if (row.current_job && holder && !isTerminal(holder.state)) return 'busy' as const;
      tx.update(session, { current_job: id });
      return 'claimed' as const;
    });
    if (got === 'claimed') return 'claimed';
    if (got === 'gone') return cancel(engine, id, REASONS.targetNotFound, `session '${session}' was removed`);
    if (Date.now() >= deadline) return cancel(engine, id, REASONS.sessionBusy, `session '${session}' was still busy after ${Math.round(waitMs / 1000)} s`);
    // Woken by any job change in this process, or after a short while for changes made elsewhere.
    await waitForEvent(engine.ledger.onDidChangeJob, () => true, Math.min(500, Math.max(1, deadline - Date.now()))).catch(() => undefined);
  }
}

function finishRecord(job: JobRecord, claimedElsewhere: boolean): JobRecord {
  return claimedElsewhere ? { ...job, reason: job.reason ?? REASONS.claimed, state: isTerminal(job.state) ? job.state : 'cancelled' } : job;
}

/** Waits until the job is terminal: its own events, timers, or another process deciding. */
export async function waitForEnd(engine: JobEngine, id: string): Promise<JobRecord> {
  for (;;) {
    const job = engine.deps.controlPlane.jobs.require(id);
    if (isTerminal(job.state)) return job;
    await waitForEvent(engine.ledger.onDidChangeJob, (c) => c.job.id === id && isTerminal(c.job.state), 1000).catch(() => undefined);
    await sleep(0);
  }
}

function finish(engine: JobEngine, job: JobRecord, claimedElsewhere = false): SubmitResult {
  void engine;
  if (claimedElsewhere) return { job, exitCode: ExitCode.notDelivered };
  return { job, exitCode: exitCodeOf(job) };
}

export type { SessionRow };
