import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dateOn, isoOn } from '../base/clock';
import { ExitCode, UsageError, errorMessage } from '../base/errors';
import { newJobId } from '../base/ids';
import { writeFileAtomic } from '../store/atomicFile';
import { newJobRecord } from '../store/newJobRecord';
import type { JobEngine } from './jobEngine';
import { isTerminal, type JobRecord, type JobType } from '../store/jobSchema';
import { parseTarget } from './targetAddress';
import { exitCodeOf, submitJob, titleOf, type SubmitRequest, type SubmitResult } from './submit';

/**
 * The job types made of other jobs (SPEC §5). The parent is a record of its own (no prompt is
 * typed for it); each turn is a child job (`parent_job`) delivered and judged like any other.
 * `discuss` — two sessions taking turns until both say [AGREE] or the turns run out — runs here;
 * `loop` — a worker, then a reviewer, until the reviewer says PASS — is a review loop with one
 * reviewer (loop/jobLoop.ts), which registers its parent here.
 */
export interface CompositeRequest extends SubmitRequest {
  /** loop: the reviewing session. */
  reviewer?: string;
  /** loop: worker+reviewer rounds at most (default 3). */
  maxIter?: number;
  /** discuss: the other session. */
  partner?: string;
  /** discuss: turns at most (default 6). */
  maxTurns?: number;
}

/** `--type discuss`: the discussion, then its parent's end. */
export async function submitDiscussion(engine: JobEngine, req: CompositeRequest): Promise<SubmitResult> {
  if (!req.partner) throw new UsageError('--type discuss needs --with SESSION');
  parseTarget(req.partner);
  const task = taskText(req);
  await engine.connect();
  const parent = await registerParent(engine, req, 'discuss', task);
  const child = (session: string, prompt: string, role: string, title: string): Promise<SubmitResult> =>
    submitJob(engine, { ...req, session, prompt, briefFile: undefined, role, type: 'direct', parentJob: parent.id, wait: true, title });
  let result: { state: 'completed' | 'failed'; reason: string | null; detail: string; exitCode: SubmitResult['exitCode'] };
  try {
    result = await runDiscussion(engine, parent, req, task, child);
  } catch (err) {
    await engine.ledger.transition(parent.id, 'failed', 'error', { when: (j) => !isTerminal(j.state), note: errorMessage(err) });
    throw err;
  }
  await moveParent(engine, parent.id, 'started');
  const job = (await engine.ledger.transition(parent.id, result.state, result.reason, { when: (j) => !isTerminal(j.state), fields: { detail: result.detail } })) ?? engine.deps.controlPlane.jobs.require(parent.id);
  return { job, exitCode: result.exitCode };
}

type RunChild = (session: string, prompt: string, role: string, title: string) => Promise<SubmitResult>;

async function runDiscussion(engine: JobEngine, parent: JobRecord, req: CompositeRequest, task: string, child: RunChild) {
  const maxTurns = req.maxTurns ?? 6;
  const sides = [req.session, req.partner!];
  const transcript: string[] = [];
  let lastAgreed = false;
  for (let turn = 1; turn <= maxTurns; turn++) {
    const side = sides[(turn - 1) % 2]!;
    const prompt = [
      `You are discussing this topic with another agent (turn ${turn} of at most ${maxTurns}).`,
      `\n### Topic\n\n${task}`,
      transcript.length ? `\n### The discussion so far\n\n${transcript.join('\n\n')}` : '',
      '\nGive your view. If you agree with where the discussion has landed, end your answer (the --detail or --report of `completed`) with [AGREE] alone on its last line.',
    ].join('\n');
    const result = await child(side, prompt, 'discussant', `Discussion · turn ${turn}`);
    await moveParent(engine, parent.id, 'started');
    if (result.job.state !== 'completed') return childFailed(result, `turn ${turn} (${side})`);
    const answer = outcomeText(result.job);
    transcript.push(`**${side}** (turn ${turn}):\n\n${answer}`);
    const agreed = agrees(answer);
    if (agreed && lastAgreed) return { state: 'completed' as const, reason: null, detail: `agreed after ${turn} turns`, exitCode: ExitCode.ok };
    lastAgreed = agreed;
  }
  writeFileAtomic(path.join(engine.deps.controlPlane.paths.jobDir(parent.id), 'transcript.md'), transcript.join('\n\n'));
  return { state: 'failed' as const, reason: 'no_agreement', detail: `no agreement within ${maxTurns} turns`, exitCode: ExitCode.failed };
}

function childFailed(result: SubmitResult, what: string) {
  const job = result.job;
  return { state: 'failed' as const, reason: job.reason ?? job.state, detail: `${what} ended ${job.state}${job.reason ? ` (${job.reason})` : ''}`, exitCode: exitCodeOf(job) };
}

/** Discussions end when both sides put `[AGREE]` alone on their last line. */
export function agrees(text: string): boolean {
  return lastLine(text) === '[AGREE]';
}

/** The last non-empty line of an answer, trimmed: where its `[AGREE]` or its verdict stands. */
export function lastLine(text: string): string {
  const lines = text.replace(/\r\n/g, '\n').split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return lines.at(-1) ?? '';
}

/** What a finished child said: its report if it handed one in, else its completion detail. */
export function outcomeText(job: JobRecord): string {
  if (job.report) {
    try {
      return fs.readFileSync(job.report, 'utf8');
    } catch {
      // fall back to the detail
    }
  }
  return job.detail ?? '';
}

export async function registerParent(engine: JobEngine, req: CompositeRequest, type: JobType, task: string): Promise<JobRecord> {
  const target = parseTarget(req.session);
  const id = newJobId(dateOn(engine.clock));
  const brief = path.join(engine.deps.controlPlane.paths.jobDir(id), 'brief.md');
  const job = await engine.ledger.register(
    newJobRecord({
      id, session: req.session, type, role: req.role ?? null, parent_job: req.parentJob ?? null, target: { kind: target.kind, name: target.name }, brief,
      owner: { pid: process.pid, host: os.hostname(), token: randomBytes(8).toString('hex') }, title: titleOf(req, task),
      ...(type === 'loop' ? { reviewer: req.reviewer, max_iter: req.maxIter ?? 3 } : { partner: req.partner, max_turns: req.maxTurns ?? 6 }),
    }, dateOn(engine.clock)),
    randomBytes(32).toString('hex'),
  );
  writeFileAtomic(brief, `# MAM ${type} job ${id}\n\nThis job is made of child jobs (see \`mam job list\`, parent ${id}).\n\n## Task\n\n${task.trim()}\n`);
  return job;
}

/** Parents follow their children: dispatched, then started, never backwards. */
export async function moveParent(engine: JobEngine, id: string, to: 'started'): Promise<void> {
  await engine.ledger.transition(id, 'dispatched', null, { when: (j) => j.state === 'registered', fields: { dispatched_at: isoOn(engine.clock) } });
  await engine.ledger.transition(id, to, null, { when: (j) => j.state === 'dispatched' });
}

export function taskText(req: SubmitRequest): string {
  if ((req.prompt === undefined) === (req.briefFile === undefined)) throw new UsageError('give exactly one of --prompt TEXT or --brief FILE');
  if (req.prompt !== undefined) return req.prompt;
  try {
    return fs.readFileSync(path.resolve(req.baseDir, req.briefFile!), 'utf8');
  } catch {
    throw new UsageError(`--brief ${req.briefFile} does not exist or cannot be read`, 'missing_brief');
  }
}
