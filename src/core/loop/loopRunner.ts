import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DisposableBase } from '../base/disposable';
import { Emitter } from '../base/emitter';
import { ExitCode, LockTimeoutError, MamError, UsageError } from '../base/errors';
import { nameProblem, newJobId, printable } from '../base/ids';
import type { Logger } from '../base/log';
import { outcomeText } from '../jobs/compositeJobs';
import type { JobEngine } from '../jobs/jobEngine';
import { isTerminal, type JobRecord } from '../store/jobSchema';
import { REASONS } from '../jobs/lifecycle';
import { submitJob, waitForEnd } from '../jobs/submit';
import { loopStepTitle, titleFromTask } from '../jobs/title';
import { sourceOf } from '../config/settings';
import { acquire } from '../store/lock';
import { isAlive } from '../base/process';
import { challengePrompt, fixPrompt, implementPrompt, planPrompt, revisePrompt, reviewPrompt } from './loopPrompts';
import { LoopStore, type LoopRound, type LoopState, type LoopStep } from './loopState';
import { promoteReports, resolveReportsDir } from './reports';
import { isGitCheckout, pathsChangedBetween, resolveCommit, snapshotDiff, snapshotIdentity } from './snapshot';
import { agrees, rebuttalOf, verdictOf } from './verdict';

export interface LoopRequest {
  task: string;
  creator: string;
  planner?: string;
  planTalk?: number;
  /** Named reviewers; with neither this nor allReviewers, the creator reviews its own work. */
  reviewers?: string[];
  allReviewers?: boolean;
  maxLoop?: number;
  maxRebut?: number;
  reviewOnly?: boolean;
  /** Review this checkout instead of the workspace (relative to baseDir). */
  worktree?: string;
  base?: string;
  /** Where passing reports go (relative to baseDir, inside the workspace); default: the reportsDir setting. */
  reportsDir?: string;
  baseDir: string;
}

/** The loop could not start (another loop holds the checkout, a session is busy or missing): exit 5. */
export class LoopNotStartedError extends MamError {
  constructor(message: string) {
    super(message, 'loop_not_started', ExitCode.notDelivered);
  }
}

/** The loop was cancelled by someone else (`cancelLoop`) while this runner ran it. */
class LoopCancelledError extends Error {}

/** After so many rounds whose tree changed under review, the loop stops. */
const MAX_STALE_ROUNDS = 3;
const NOT_DELIVERED = new Set<string>([REASONS.sessionBusy, REASONS.targetNotFound, REASONS.notDelivered, REASONS.claimed]);

/**
 * The review loop (SPEC §7): optional planning, the creator implements and commits, the reviewers
 * review a pinned snapshot until every one says PASS, the creator fixes or rebuts in between. The
 * state is a file written after every step; each job's ID is written down before it is submitted,
 * so a loop restarted after a crash waits for what it started instead of asking again.
 */
export class LoopRunner extends DisposableBase {
  private readonly progress = this._register(new Emitter<{ loop: LoopState; message: string }>());
  readonly onDidProgress = this.progress.event;
  readonly loops: LoopStore;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: JobEngine,
    private readonly logger: Logger,
  ) {
    super();
    this.loops = new LoopStore(engine.deps.controlPlane.paths);
  }

  /** Validates, takes the checkout's loop lock, and runs a new loop (or resumes the same unfinished one). */
  async start(req: LoopRequest): Promise<LoopState> {
    const options = await this.validate(req);
    const release = await this.lockCheckout(options.checkout);
    try {
      const unfinished = this.loops.list().find((l) => l.status === 'running' && l.checkout === options.checkout);
      if (unfinished) {
        if (unfinished.task !== options.task) {
          throw new LoopNotStartedError(`loop ${unfinished.id} on ${options.checkout} did not finish; resume it with 'mam loop resume ${unfinished.id}' or cancel it with 'mam loop cancel ${unfinished.id}'`);
        }
        return await this.run(unfinished, 'resuming');
      }
      await this.checkSessionsFree(options);
      const now = new Date().toISOString();
      const state: LoopState = {
        ...options, title: titleFromTask(options.task), id: `l-${now.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`,
        created_at: now, updated_at: now, status: 'running', reason: null, exit_code: null, owner: null, plan: null, steps: [], rounds: [], rebuts_used: 0,
      };
      return await this.run(state, 'starting');
    } finally {
      release();
    }
  }

  /** Continues an unfinished loop where it stopped. */
  async resume(id: string): Promise<LoopState> {
    const state = this.loops.get(id);
    if (!state) throw new UsageError(`unknown loop '${id}'`);
    if (state.status !== 'running') throw new UsageError(`loop ${id} has ended (${state.status}); nothing to resume`);
    const release = await this.lockCheckout(state.checkout);
    try {
      return await this.run(state, 'resuming');
    } finally {
      release();
    }
  }

  private async run(state: LoopState, how: 'starting' | 'resuming'): Promise<LoopState> {
    try {
      return await this.runSteps(state, how);
    } catch (err) {
      if (err instanceof LoopCancelledError) return this.letGo(state);
      throw err;
    }
  }

  private async runSteps(state: LoopState, how: 'starting' | 'resuming'): Promise<LoopState> {
    state.owner = { pid: process.pid, host: os.hostname() };
    await this.save(state);
    this.say(state, `${how} loop ${state.id} on ${state.checkout} (base ${state.base.slice(0, 12)})`);
    // Nothing is judged before it is read: connect (which applies every event waiting in an outbox
    // and every retained state) before waiting on a job a crashed run left open; and those jobs
    // have lost their submitter, so their timers are ours now.
    await this.engine.connect();
    this.engine.supervise('orphans');
    try {
      await this.plan(state);
      if (!state.review_only) {
        const implemented = await this.step(state, 'implement', 'implement', state.creator, null, () => implementPrompt(state), 'creator');
        if (!this.succeeded(state, implemented, 'the implementation')) return await this.finish(state);
      }
      for (;;) {
        const round = await this.review(state);
        if (round.status === 'stale') {
          if (state.rounds.filter((r) => r.status === 'stale').length > MAX_STALE_ROUNDS) return await this.end(state, 'failed', 'tree_keeps_changing', ExitCode.failed);
          continue;
        }
        if (round.status === 'passed') {
          this.promote(state, round);
          return await this.end(state, 'passed', null, ExitCode.ok);
        }
        if (state.rounds.filter((r) => r.status !== 'stale').length >= state.max_loop) return await this.end(state, 'failed', 'max_loop', ExitCode.failed);
        const findings = round.reviews.map((r) => ({ reviewer: r.reviewer, text: this.stepOf(state, r.step)?.text ?? '' })).filter((_, i) => round.reviews[i]!.verdict !== 'PASS');
        const fix = await this.step(state, `r${round.n}:fix`, 'fix', state.creator, round.n, () => fixPrompt(state, round, findings), 'creator');
        if (!this.succeeded(state, fix, 'the fix')) return await this.finish(state);
        const rebut = rebuttalOf(fix.text ?? '');
        if (rebut && state.rebuts_used < state.max_rebut && !state.steps.some((s) => s.key === `r${round.n + 1}:rebut`)) {
          state.rebuts_used++;
          state.steps.push({ key: `r${round.n + 1}:rebut`, kind: 'fix', session: state.creator, job_id: fix.job_id, round: round.n + 1, status: 'done', text: rebut });
          this.say(state, `round ${round.n}: ${state.creator} rebuts: ${printable(rebut, 300)}`);
          await this.save(state);
        } else if (rebut) {
          this.say(state, `round ${round.n}: ${state.creator} rebuts, but has no rebuttals left`);
        }
      }
    } catch (err) {
      await this.end(state, 'failed', (err as Error).message, ExitCode.failed);
      throw err;
    }
  }

  private async plan(state: LoopState): Promise<void> {
    if (!state.planner || state.plan !== null) return;
    let plan = (await this.step(state, 'plan', 'plan', state.planner, null, () => planPrompt(state), 'planner')).text ?? '';
    for (let turn = 1; turn <= state.plan_talk; turn++) {
      const challenge = await this.step(state, `plan:challenge:${turn}`, 'challenge', state.creator, null, () => challengePrompt(state, plan, turn), 'creator');
      if (agrees(challenge.text ?? '')) break;
      plan = (await this.step(state, `plan:revise:${turn}`, 'revise', state.planner, null, () => revisePrompt(state, plan, challenge.text ?? ''), 'planner')).text ?? plan;
    }
    state.plan = plan;
    await this.save(state);
  }

  /** One review round: identity, children awaited, every reviewer at once, then the stale check. */
  private async review(state: LoopState): Promise<LoopRound> {
    let round = state.rounds.at(-1);
    if (!round || round.status !== 'reviewing') {
      const n = (round?.n ?? 0) + 1;
      const children = await this.awaitChildren(state);
      const identity = await snapshotIdentity(state.checkout, state.base, `${state.id}/r${n}`);
      const rebut = this.stepOf(state, `r${n}:rebut`)?.text;
      round = { n, identity, status: 'reviewing', reviews: [], started_at: new Date().toISOString(), ...(children.length ? { children } : {}), ...(rebut ? { rebut } : {}) };
      state.rounds.push(round);
      await this.save(state);
      this.say(state, `round ${n}: reviewing base ${identity.base.slice(0, 12)} head ${identity.head.slice(0, 12)} tree ${identity.tree.slice(0, 12)} with ${state.reviewers.join(', ')}`);
    }
    const current = round;
    const previous = state.rounds.filter((r) => r.n < current.n && r.status !== 'stale').at(-1);
    const diff = await snapshotDiff(state.checkout, current.identity);
    const steps = await Promise.all(
      state.reviewers.map((reviewer) => this.step(state, `r${current.n}:review:${reviewer}`, 'review', reviewer, current.n, () => reviewPrompt(state, current, diff, previous), 'reviewer')),
    );
    current.reviews = steps.map((s) => ({
      reviewer: s.session,
      step: s.key,
      job_id: s.job_id,
      verdict: s.job_state === 'completed' ? verdictOf(s.text ?? '') : 'NOT PASS',
    }));
    for (const r of current.reviews) this.say(state, `round ${current.n}: ${r.reviewer} ${r.verdict}`);
    const after = await snapshotIdentity(state.checkout, state.base);
    if (after.tree !== current.identity.tree || after.head !== current.identity.head) {
      current.status = 'stale';
      const changed = await pathsChangedBetween(state.checkout, current.identity.tree, after.tree);
      current.changed_during_review = changed.slice(0, 50);
      const what = changed.length > 0 ? `${changed.slice(0, 5).join(', ')}${changed.length > 5 ? ` and ${changed.length - 5} more` : ''} changed` : `a commit was made (head ${after.head.slice(0, 12)})`;
      this.say(state, `round ${current.n}: ${printable(what, 400)} while it was reviewed; its approvals are discarded and it is reviewed again`);
    } else {
      current.status = current.reviews.every((r) => r.verdict === 'PASS') ? 'passed' : 'not_passed';
    }
    current.finished_at = new Date().toISOString();
    await this.save(state);
    return current;
  }

  /**
   * Runs one job of the loop exactly once: its ID is written down first; a restarted loop waits
   * for a job that is still running, and reuses the outcome of one that ended.
   */
  private async step(state: LoopState, key: string, kind: LoopStep['kind'], session: string, round: number | null, prompt: () => string, role: string): Promise<LoopStep> {
    let step = this.stepOf(state, key);
    if (step?.status === 'done') return step;
    const jobs = this.engine.deps.controlPlane.jobs;
    if (!step) {
      step = { key, kind, session, job_id: newJobId(), round, status: 'planned' };
      state.steps.push(step);
      await this.save(state);
    }
    let job: JobRecord | undefined = jobs.get(step.job_id);
    if (job && job.state === 'registered' && !(job.owner && job.owner.host === os.hostname() && isAlive(job.owner.pid))) {
      // Registered but never delivered by a run that died: nothing reached the agent; ask anew.
      await this.engine.ledger.transition(job.id, 'cancelled', 'abandoned', { when: (j) => j.state === 'registered' });
      step.job_id = newJobId();
      await this.save(state);
      job = undefined;
    } else if (job && job.state === 'failed' && job.reason === REASONS.agentExited) {
      // The agent died while this loop was not running to see it (a crash or a reboot took both):
      // its session has been resumed since, or delivery will say it has not; ask it anew.
      this.say(state, `${key}: job ${job.id} ended when its agent's pane went away; asking ${session} again`);
      step.job_id = newJobId();
      await this.save(state);
      job = undefined;
    }
    if (!job) {
      this.say(state, `${key}: job ${step.job_id} to ${session}`);
      job = (await submitJob(this.engine, { session, prompt: prompt(), role, wait: true, baseDir: state.checkout, jobId: step.job_id, title: loopStepTitle(step) })).job;
    } else {
      if (!isTerminal(job.state)) {
        this.say(state, `${key}: waiting for job ${job.id} (${job.state}) from before the restart`);
        job = await waitForEnd(this.engine, job.id);
      }
      // While no loop ran, its timer ended it, and then its agent completed it after all: the job's
      // outcome stays as it was (SPEC §5), but the completion is the work this step asked for.
      const late = job.state === 'timeout' ? job.late_events?.filter((e) => e.event === 'completed').at(-1) : undefined;
      if (late) {
        this.say(state, `${key}: job ${job.id} timed out while no loop was running, and completed later; using that completion`);
        job = { ...job, state: 'completed', reason: null, detail: late.detail ?? null, report: late.report ?? null };
      }
    }
    step.status = 'done';
    step.job_state = job.state;
    step.job_reason = job.reason;
    step.text = outcomeText(job);
    step.report = job.report ?? null;
    await this.save(state);
    this.say(state, `${key}: ${session} ${job.state}${job.reason ? ` (${job.reason})` : ''}`);
    return step;
  }

  /** Jobs the creator delegated (`--parent-job`) are awaited before a review, and shown to it. */
  private async awaitChildren(state: LoopState): Promise<Array<{ id: string; state: string; session: string }>> {
    const parents = new Set(state.steps.filter((s) => s.kind === 'implement' || s.kind === 'fix').map((s) => s.job_id));
    const children = this.engine.deps.controlPlane.jobs.list().jobs.filter((j) => j.parent_job && parents.has(j.parent_job));
    const out = [];
    for (const child of children) {
      let job = child;
      if (!isTerminal(job.state)) {
        this.say(state, `waiting for ${job.id}, delegated by ${state.creator}, before the review`);
        job = await waitForEnd(this.engine, job.id);
      }
      out.push({ id: job.id, state: job.state, session: job.session });
    }
    return out;
  }

  /** Passing reports go to the loop's reports folder (`<dir>/<reviewer>/`), each beside its identity sidecar. */
  private promote(state: LoopState, round: LoopRound): void {
    const dir = state.reports_dir ?? this.engine.deps.controlPlane.paths.reportsDir;
    promoteReports(dir, state, round);
    this.say(state, `round ${round.n}: every reviewer passed; reports in ${dir}`);
  }

  /** A step that did not complete ends the loop: 5 when its job was never delivered, 1 otherwise. */
  private succeeded(state: LoopState, step: LoopStep, what: string): boolean {
    if (step.job_state === 'completed') return true;
    const undelivered = step.job_state === 'cancelled' && NOT_DELIVERED.has(step.job_reason ?? '');
    state.status = 'failed';
    state.reason = `${what} (job ${step.job_id}) ended ${step.job_state}${step.job_reason ? ` (${step.job_reason})` : ''}`;
    state.exit_code = undelivered ? ExitCode.notDelivered : ExitCode.failed;
    return false;
  }

  private async end(state: LoopState, status: LoopState['status'], reason: string | null, exitCode: number): Promise<LoopState> {
    state.status = status;
    state.reason = reason;
    state.exit_code = exitCode;
    return this.finish(state);
  }

  private async finish(state: LoopState): Promise<LoopState> {
    state.owner = null;
    await this.save(state);
    this.say(state, `loop ${state.id} ${state.status}${state.reason ? `: ${state.reason}` : ''}`);
    return state;
  }

  private stepOf(state: LoopState, key: string): LoopStep | undefined {
    return state.steps.find((s) => s.key === key);
  }

  private save(state: LoopState): Promise<void> {
    this.saving = this.saving.then(() => {
      // Cancelled from elsewhere (cancelLoop): stop at this step, and never overwrite that.
      if (state.status !== 'cancelled' && this.loops.get(state.id)?.status === 'cancelled') throw new LoopCancelledError(state.id);
      this.loops.save(state);
    });
    return this.saving;
  }

  /** After a cancel: the loop as the canceller wrote it, no longer owned by this process. */
  private letGo(state: LoopState): LoopState {
    this.saving = Promise.resolve();
    const latest = this.loops.get(state.id) ?? state;
    if (latest.owner?.pid === process.pid && latest.owner.host === os.hostname()) {
      latest.owner = null;
      this.loops.save(latest);
    }
    this.say(latest, `loop ${latest.id} cancelled`);
    return latest;
  }

  private say(state: LoopState, message: string): void {
    this.logger.info(message);
    this.progress.fire({ loop: state, message });
  }

  /** One loop per checkout: a lock held for the loop's whole run. */
  private async lockCheckout(checkout: string): Promise<() => void> {
    const name = `loop-${createHash('sha256').update(checkout).digest('hex').slice(0, 16)}`;
    try {
      return await acquire(this.engine.deps.controlPlane.paths.lock(name), { timeoutMs: 0, what: `the checkout ${checkout}`, logger: this.logger });
    } catch (err) {
      if (err instanceof LockTimeoutError) throw new LoopNotStartedError(`another loop is running on ${checkout}: ${err.message}`);
      throw err;
    }
  }

  /** A new loop starts only when all its sessions run and none is busy with another job. */
  private async checkSessionsFree(options: { creator: string; planner: string | null; reviewers: string[] }): Promise<void> {
    const cp = this.engine.deps.controlPlane;
    const sessions = await cp.sessions.list();
    for (const name of new Set([options.creator, ...(options.planner ? [options.planner] : []), ...options.reviewers])) {
      if (isPerson(name)) continue; // a person takes their turn when it comes
      const row = sessions.find((s) => s.name === name)!;
      if (row.status !== 'running') throw new LoopNotStartedError(`session '${name}' is ${row.status}; resume it first`);
      const holder = row.current_job ? cp.jobs.get(row.current_job) : undefined;
      if (holder && !isTerminal(holder.state)) throw new LoopNotStartedError(`session '${name}' is busy with job ${holder.id}`);
    }
  }

  private async validate(req: LoopRequest): Promise<Omit<LoopState, 'id' | 'created_at' | 'updated_at' | 'status' | 'reason' | 'exit_code' | 'owner' | 'plan' | 'steps' | 'rounds' | 'rebuts_used'>> {
    const cp = this.engine.deps.controlPlane;
    const config = this.engine.deps.config;
    const reportsDir = req.reportsDir !== undefined
      ? resolveReportsDir(cp.workspace, req.reportsDir, req.baseDir, '--reports-dir')
      : resolveReportsDir(cp.workspace, config.values.reportsDir, cp.workspace, sourceOf(config, 'reportsDir'));
    if (!req.task.trim()) throw new UsageError('--task is empty');
    for (const [flag, n, min] of [['--max-loop', req.maxLoop, 1], ['--max-rebut', req.maxRebut, 0], ['--plan-talk', req.planTalk, 0]] as const) {
      if (n !== undefined && !(Number.isInteger(n) && n >= min)) throw new UsageError(`${flag} must be a whole number ≥ ${min}`);
    }
    if (req.planTalk !== undefined && !req.planner) throw new UsageError('--plan-talk goes with --planner');
    if (req.reviewers?.length && req.allReviewers) throw new UsageError('give either --reviewer or --all-reviewer, not both');
    const checkout = fs.realpathSync(path.resolve(req.baseDir, req.worktree ?? cp.workspace));
    if (!(await isGitCheckout(checkout))) throw new UsageError(`${checkout} is not a git checkout`);
    const base = await resolveCommit(checkout, req.base ?? 'HEAD');
    const sessions = await cp.sessions.list();
    const named = [req.creator, ...(req.planner ? [req.planner] : []), ...(req.reviewers ?? [])];
    for (const name of named) {
      // A reviewer (or planner) may be a person, `human:NAME`; the creator is an agent's session.
      const person = isPerson(name) && name !== req.creator;
      const problem = nameProblem(person ? name.slice('human:'.length) : name, person ? "person's name" : 'session name');
      if (problem) throw new UsageError(problem);
      if (!person && !sessions.some((s) => s.name === name)) throw new UsageError(`unknown session '${name}'`);
    }
    let reviewers = req.reviewers?.length ? [...new Set(req.reviewers)] : [];
    if (req.allReviewers) {
      reviewers = sessions.filter((s) => s.role === 'reviewer' && s.status === 'running' && s.name !== req.creator).map((s) => s.name);
      if (reviewers.length === 0) throw new UsageError('--all-reviewer: no running reviewer session other than the creator');
    }
    if (reviewers.length === 0) reviewers = [req.creator];
    return {
      task: req.task, creator: req.creator, planner: req.planner ?? null, plan_talk: req.planTalk ?? (req.planner ? 1 : 0), reviewers,
      max_loop: req.maxLoop ?? 3, max_rebut: req.maxRebut ?? 2, review_only: Boolean(req.reviewOnly), checkout, base, reports_dir: reportsDir,
    };
  }
}

/** `human:NAME`: a person in the loop (a reviewer or a planner), who reports from VS Code or a terminal. */
function isPerson(name: string): boolean {
  return name.startsWith('human:');
}
