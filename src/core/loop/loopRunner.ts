import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { dateOn, isoOn, type Clock } from '../base/clock';
import { DisposableBase } from '../base/disposable';
import { Emitter } from '../base/emitter';
import { ExitCode, UsageError, errorMessage, exitCodeOf } from '../base/errors';
import { newJobId, printable } from '../base/ids';
import type { Logger } from '../base/log';
import { agrees, moveParent, outcomeText, type CompositeRequest } from '../jobs/compositeJobs';
import type { JobEngine } from '../jobs/jobEngine';
import { isTerminal, type JobRecord } from '../store/jobSchema';
import { REASONS } from '../jobs/lifecycle';
import { submitJob, waitForEnd, type SubmitResult } from '../jobs/submit';
import { loopStepTitle, titleFromTask } from '../jobs/title';
import { isAlive } from '../base/process';
import { addressPrompt, endLoopJob, judgePrompt, loopJobOptions, loopJobSubmitOptions, workPrompt } from './jobLoop';
import { canMoveLoop, canMoveRound, LoopTransitionError, nextAfter, type RoundStatus } from './loopLifecycle';
import { LoopLocks } from './loopLocks';
import { challengePrompt, fixPrompt, implementPrompt, planPrompt, revisePrompt, reviewPrompt } from './loopPrompts';
import { checkSessionsFree, LoopNotStartedError, loopOptionsOf, type LoopRequest } from './loopRequest';
import { LoopStore, type LoopOptions, type LoopRound, type LoopState, type LoopStep } from './loopState';
import { promoteReports } from './reports';
import { pathsChangedBetween, snapshotDiff, snapshotIdentity, UNPINNED } from './snapshot';
import { rebuttalOf, verdictOf } from './verdict';

/** The loop was cancelled by someone else (`cancelLoop`) while this runner ran it. */
class LoopCancelledError extends Error {}

const NOT_DELIVERED = new Set<string>([REASONS.sessionBusy, REASONS.targetNotFound, REASONS.notDelivered, REASONS.claimed]);

/**
 * The review loop (SPEC §7): optional planning, the creator implements and commits, the reviewers
 * review a pinned snapshot until every one says PASS, the creator fixes or rebuts in between. The
 * state is a file written after every step; each job's ID is written down before it is submitted,
 * so a loop restarted after a crash waits for what it started instead of asking again. Which
 * state may follow which, and what follows a judged round, is looked up in loopLifecycle.ts.
 * `mam job submit --type loop` runs here too, as a loop with one reviewer (jobLoop.ts).
 */
export class LoopRunner extends DisposableBase {
  private readonly progress = this._register(new Emitter<{ loop: LoopState; message: string }>());
  readonly onDidProgress = this.progress.event;
  readonly loops: LoopStore;
  private readonly locks: LoopLocks;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: JobEngine,
    private readonly logger: Logger,
    private readonly clock: Clock = engine.clock,
  ) {
    super();
    this.loops = new LoopStore(engine.deps.controlPlane.paths, clock);
    this.locks = new LoopLocks(engine.deps.controlPlane.paths, logger);
  }

  /** Validates, takes the checkout's loop lock, and runs a new loop (or resumes the same unfinished one). */
  async start(req: LoopRequest): Promise<LoopState> {
    const options = await loopOptionsOf(this.engine, req);
    const release = await this.locks.forCheckout(options.checkout);
    try {
      const unfinished = this.unfinishedOn(options);
      if (unfinished) return await this.run(unfinished, 'resuming');
      await checkSessionsFree(this.engine, options);
      return await this.run(this.newState(options), 'starting');
    } finally {
      release();
    }
  }

  /**
   * Checks a request as `start` does and stores the new loop without running it: a process of its
   * own runs it (`mam loop resume ID`, LoopService.start). The same task's unfinished loop on the
   * checkout is returned as it is, for that process to go on with.
   */
  async prepare(req: LoopRequest): Promise<LoopState> {
    const options = await loopOptionsOf(this.engine, req);
    const release = await this.locks.forCheckout(options.checkout);
    try {
      const unfinished = this.unfinishedOn(options);
      if (unfinished) return unfinished;
      await checkSessionsFree(this.engine, options);
      const state = this.newState(options);
      this.loops.save(state);
      return state;
    } finally {
      release();
    }
  }

  /** The running loop on the request's checkout (its owner is gone: we hold the checkout's lock); another task's is in the way. */
  private unfinishedOn(options: LoopOptions): LoopState | undefined {
    const unfinished = this.loops.list().find((l) => l.status === 'running' && l.checkout === options.checkout);
    if (unfinished && unfinished.task !== options.task) {
      throw new LoopNotStartedError(`loop ${unfinished.id} on ${options.checkout} did not finish; resume it with 'mam loop resume ${unfinished.id}' or cancel it with 'mam loop cancel ${unfinished.id}'`);
    }
    return unfinished;
  }

  /**
   * `mam job submit --type loop`: registers its parent job and runs it as a loop with one
   * reviewer. Such loops share no checkout lock: like any job, several may run side by side.
   */
  async submitLoopJob(req: CompositeRequest): Promise<SubmitResult> {
    const state = this.newState(await loopJobOptions(this.engine, req));
    const release = await this.locks.forLoop(state);
    try {
      const ended = await this.run(state, 'starting');
      return { job: this.engine.deps.controlPlane.jobs.require(state.job!.id), exitCode: exitCodeOf(ended.exit_code, ExitCode.failed) };
    } finally {
      release();
    }
  }

  private newState(options: LoopOptions): LoopState {
    const now = this.now();
    return {
      ...options, title: titleFromTask(options.task), id: `l-${now.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`,
      created_at: now, updated_at: now, status: 'running', reason: null, exit_code: null, owner: null, plan: null, steps: [], rounds: [], rebuts_used: 0,
    };
  }

  /** Continues an unfinished loop where it stopped. */
  async resume(id: string): Promise<LoopState> {
    const state = this.loops.get(id);
    if (!state) throw new UsageError(`unknown loop '${id}'`);
    if (state.status !== 'running') throw new UsageError(`loop ${id} has ended (${state.status}); nothing to resume`);
    const release = await this.locks.forLoop(state);
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
      if (err instanceof LoopCancelledError) return await this.letGo(state);
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
    // A `--type loop` job is under way once its loop runs (and it ends with it: finish).
    if (state.job) await moveParent(this.engine, state.job.id, 'started');
    try {
      await this.plan(state);
      if (!state.review_only) {
        const implemented = await this.step(state, 'implement', 'implement', state.creator, null, () => (state.job ? workPrompt(state) : implementPrompt(state)), this.creatorRole(state));
        if (!this.succeeded(state, implemented, 'the implementation')) return await this.finish(state);
      }
      for (;;) {
        const round = await this.review(state);
        const next = nextAfter(round, state.rounds, state.max_loop);
        if (next.do === 'review_again') continue;
        if (next.do === 'end') {
          // A `--type loop` job's rounds pinned no snapshot: there is no identity to promote its reports with.
          if (next.status === 'passed' && !state.job) this.promote(state, round);
          return await this.end(state, next.status, next.reason, next.status === 'passed' ? ExitCode.ok : ExitCode.failed);
        }
        const findings = round.reviews.map((r) => ({ reviewer: r.reviewer, text: this.stepOf(state, r.step)?.text ?? '' })).filter((_, i) => round.reviews[i]!.verdict !== 'PASS');
        const prompt = () => (state.job ? addressPrompt(state, round, findings.map((f) => f.text).join('\n\n')) : fixPrompt(state, round, findings));
        const fix = await this.step(state, `r${round.n}:fix`, 'fix', state.creator, round.n, prompt, this.creatorRole(state));
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
      await this.end(state, 'failed', errorMessage(err), ExitCode.failed);
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
      const identity = state.job ? { ...UNPINNED } : await snapshotIdentity(state.checkout, state.base, `${state.id}/r${n}`);
      const rebut = this.stepOf(state, `r${n}:rebut`)?.text;
      round = { n, identity, status: 'reviewing', reviews: [], started_at: this.now(), ...(children.length ? { children } : {}), ...(rebut ? { rebut } : {}) };
      state.rounds.push(round);
      await this.save(state);
      const what = state.job ? `what ${state.creator} reported` : `base ${identity.base.slice(0, 12)} head ${identity.head.slice(0, 12)} tree ${identity.tree.slice(0, 12)}`;
      this.say(state, `round ${n}: reviewing ${what} with ${state.reviewers.join(', ')}`);
    }
    const current = round;
    // One prompt for every reviewer, made before any step: the steps are then written down in the reviewers' order.
    const prompt = await this.reviewPromptOf(state, current);
    const steps = await Promise.all(state.reviewers.map((reviewer) => this.step(state, `r${current.n}:review:${reviewer}`, 'review', reviewer, current.n, prompt, 'reviewer')));
    current.reviews = steps.map((s) => ({
      reviewer: s.session,
      step: s.key,
      job_id: s.job_id,
      verdict: s.job_state === 'completed' ? verdictOf(s.text ?? '') : 'NOT PASS',
    }));
    for (const r of current.reviews) this.say(state, `round ${current.n}: ${r.reviewer} ${r.verdict}`);
    const stale = state.job ? false : await this.changedUnderReview(state, current);
    moveRound(current, stale ? 'stale' : current.reviews.every((r) => r.verdict === 'PASS') ? 'passed' : 'not_passed');
    current.finished_at = this.now();
    await this.save(state);
    return current;
  }

  /** The reviewers' prompt: the snapshot's diff (and the round before), or for a `--type loop` job what its worker last reported. */
  private async reviewPromptOf(state: LoopState, round: LoopRound): Promise<() => string> {
    if (state.job) {
      const work = state.steps.filter((s) => s.kind === 'implement' || s.kind === 'fix').at(-1) ?? { job_id: '', text: '' };
      return () => judgePrompt(state, round, work);
    }
    const previous = state.rounds.filter((r) => r.n < round.n && r.status !== 'stale').at(-1);
    const diff = await snapshotDiff(state.checkout, round.identity);
    return () => reviewPrompt(state, round, diff, previous);
  }

  /** True when the checkout moved while the round was reviewed (its approvals no longer hold); notes what changed. */
  private async changedUnderReview(state: LoopState, round: LoopRound): Promise<boolean> {
    const after = await snapshotIdentity(state.checkout, state.base);
    if (after.tree === round.identity.tree && after.head === round.identity.head) return false;
    const changed = await pathsChangedBetween(state.checkout, round.identity.tree, after.tree);
    round.changed_during_review = changed.slice(0, 50);
    const what = changed.length > 0 ? `${changed.slice(0, 5).join(', ')}${changed.length > 5 ? ` and ${changed.length - 5} more` : ''} changed` : `a commit was made (head ${after.head.slice(0, 12)})`;
    this.say(state, `round ${round.n}: ${printable(what, 400)} while it was reviewed; its approvals are discarded and it is reviewed again`);
    return true;
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
      step = { key, kind, session, job_id: newJobId(dateOn(this.clock)), round, status: 'planned' };
      state.steps.push(step);
      await this.save(state);
    }
    let job: JobRecord | undefined = jobs.get(step.job_id);
    if (job && job.state === 'registered' && !(job.owner && job.owner.host === os.hostname() && isAlive(job.owner.pid))) {
      // Registered but never delivered by a run that died: nothing reached the agent; ask anew.
      await this.engine.ledger.transition(job.id, 'cancelled', 'abandoned', { when: (j) => j.state === 'registered' });
      step.job_id = newJobId(dateOn(this.clock));
      await this.save(state);
      job = undefined;
    } else if (job && job.state === 'failed' && job.reason === REASONS.agentExited) {
      // The agent died while this loop was not running to see it (a crash or a reboot took both):
      // its session has been resumed since, or delivery will say it has not; ask it anew.
      this.say(state, `${key}: job ${job.id} ended when its agent's pane went away; asking ${session} again`);
      step.job_id = newJobId(dateOn(this.clock));
      await this.save(state);
      job = undefined;
    }
    if (!job) {
      this.say(state, `${key}: job ${step.job_id} to ${session}`);
      const asPartOf = state.job ? loopJobSubmitOptions(state.job) : {};
      job = (await submitJob(this.engine, { ...asPartOf, session, prompt: prompt(), role, wait: true, baseDir: state.checkout, jobId: step.job_id, title: loopStepTitle(step), origin: { kind: 'loop', by: state.id } })).job;
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
    if (!canMoveLoop(state.status, status)) throw new LoopTransitionError('loop', state.status, status);
    state.status = status;
    state.reason = reason;
    state.exit_code = exitCode;
    return this.finish(state);
  }

  private async finish(state: LoopState): Promise<LoopState> {
    state.owner = null;
    // A `--type loop` job: its parent ends with the loop, and the exit status is the job type's.
    if (state.job) state.exit_code = await endLoopJob(this.engine, state, state.job);
    await this.save(state);
    this.say(state, `loop ${state.id} ${state.status}${state.reason ? `: ${state.reason}` : ''}`);
    return state;
  }

  /** The creator's role in its jobs: a `--type loop` job calls it the worker. */
  private creatorRole(state: LoopState): string {
    return state.job ? 'worker' : 'creator';
  }

  private now(): string {
    return isoOn(this.clock);
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
  private async letGo(state: LoopState): Promise<LoopState> {
    this.saving = Promise.resolve();
    const latest = this.loops.get(state.id) ?? state;
    if (latest.owner?.pid === process.pid && latest.owner.host === os.hostname()) {
      latest.owner = null;
      this.loops.save(latest);
    }
    if (latest.job) await endLoopJob(this.engine, latest, latest.job);
    this.say(latest, `loop ${latest.id} cancelled`);
    return latest;
  }

  private say(state: LoopState, message: string): void {
    this.logger.info(message);
    this.progress.fire({ loop: state, message });
  }
}

/** Moves a round along the table (loopLifecycle.ts); a move it refuses is a bug, never written down. */
function moveRound(round: LoopRound, to: RoundStatus): void {
  if (!canMoveRound(round.status, to)) throw new LoopTransitionError('round', round.status, to);
  round.status = to;
}
