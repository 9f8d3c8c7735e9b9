import { dateOn } from '../base/clock';
import { errorMessage, MamError } from '../base/errors';
import { exec, ProgramNotFoundError } from '../base/exec';
import { newJobId, printable } from '../base/ids';
import type { Logger } from '../base/log';
import type { JobEngine } from '../jobs/jobEngine';
import { submitJob } from '../jobs/submit';
import { LoopRunner } from '../loop/loopRunner';
import { isTerminal } from '../store/jobSchema';
import { creatorTask, failureReason, type LandingFailure } from './creatorBrief';
import type { MergeLog } from './mergeLog';
import type { Attempt, MergeEntry, MergeQueueStore } from './mergeQueue';
import { branchTip, freshScratch, ok, removeScratch, run, trackedChanges, worktreeOf } from './repo';

export interface LanderDeps {
  engine: JobEngine;
  store: MergeQueueStore;
  log: MergeLog;
  /** A checkout of the repository (the workspace): where branches are read and refs updated. */
  repo: string;
  logger: Logger;
  /** How long the validation command may run. */
  validateTimeoutMs: number;
  /** Progress lines for whoever runs the queue (they also go to the entry's log). */
  say?: (line: string) => void;
}

/** The entry was removed (`mam merge remove`) while it was being landed: leave it. */
class EntryGone extends Error {}

/** The target moved between the rebase and the compare-and-swap: start the entry over. */
const MOVED = Symbol('moved');

const MAX_TRIES = 3;

/**
 * Lands one entry, step by step, writing the entry before and after each step so that a runner
 * killed anywhere resumes it (`MergeRunner`): in a scratch worktree under `.mam/`, rebase the
 * branch onto the target's tip; run the validation there; when the result's tree is not the tree
 * the reviewers passed, review it first (a one-round review-only loop with the same reviewers,
 * pinned on the scratch worktree); then move the target by compare-and-swap. A conflict, a red
 * validation or a failed review becomes a job for the branch's creator, and the entry waits on it.
 */
export class Lander {
  constructor(private readonly deps: LanderDeps) {}

  async land(entry: MergeEntry): Promise<MergeEntry> {
    try {
      for (let tries = 1; ; tries++) {
        const out = await this.attempt(entry);
        if (out !== MOVED) return out;
        if (tries >= MAX_TRIES) return await this.wait(entry, `${entry.into} moved under every one of ${MAX_TRIES} tries; run mam merge run again`);
        this.say(entry, `${entry.into} moved since the rebase; starting over from its new tip`);
        entry = await this.patch(entry, { attempt: null, step: null });
      }
    } catch (err) {
      if (err instanceof EntryGone) return { ...entry, reason: 'removed while it was being landed' };
      throw err;
    }
  }

  private async attempt(entry: MergeEntry): Promise<MergeEntry | typeof MOVED> {
    const { repo, store } = this.deps;
    if (!entry.attempt) {
      const tip = await branchTip(repo, entry.branch);
      const target = await branchTip(repo, entry.into);
      if (!tip || !target) return this.wait(entry, `branch '${!tip ? entry.branch : entry.into}' no longer exists`);
      const attempt: Attempt = { target, tip, result: null, result_tree: null, validated: false, review_loop: null, reviewed: false };
      entry = await this.patch(entry, { state: 'running', step: 'rebasing', reason: null, job_id: null, job_prompt: null, attempt });
      this.say(entry, `landing ${entry.branch} (${tip.slice(0, 12)}) on ${entry.into} (${target.slice(0, 12)})`);
    }
    if (entry.attempt!.result === null) {
      entry = await this.patch(entry, { state: 'running', step: 'rebasing' });
      const failure = await this.rebase(entry);
      if (typeof failure === 'string') return this.wait(entry, failure);
      if (failure) return this.fail(entry, failure);
      entry = store.get(entry.id) ?? this.gone();
    }
    const a = entry.attempt!;
    if (a.result === a.target) return this.landed(entry, a.target, `nothing to land: ${entry.into} contains ${entry.branch} already`);
    if (entry.validate && !a.validated) {
      entry = await this.patch(entry, { state: 'running', step: 'validating' });
      const failure = await this.validate(entry);
      if (typeof failure === 'string') return this.wait(entry, failure);
      if (failure) return this.fail(entry, failure);
      entry = await this.patch(entry, { attempt: { ...entry.attempt!, validated: true } });
    }
    if (a.result_tree !== entry.reviewed.tree && !entry.attempt!.reviewed) {
      entry = await this.patch(entry, { state: 'running', step: 'reviewing' });
      const failure = await this.review(entry);
      if (typeof failure === 'string') return this.wait(entry, failure);
      if (failure) return this.fail(entry, failure);
      entry = store.get(entry.id) ?? this.gone();
    }
    entry = await this.patch(entry, { state: 'running', step: 'landing' });
    return this.moveTarget(entry);
  }

  /** The rebase in a fresh scratch worktree; records the result. A string: why the entry waits. */
  private async rebase(entry: MergeEntry): Promise<LandingFailure | string | undefined> {
    const { repo, store } = this.deps;
    const a = entry.attempt!;
    const dir = await freshScratch(repo, store.paths, entry.id, a.tip);
    const r = await run(dir, ['-c', 'rebase.updateRefs=false', '-c', 'rebase.autoSquash=false', '-c', 'rebase.autoStash=false', 'rebase', '--quiet', a.target]);
    this.say(entry, `git rebase ${a.target.slice(0, 12)}: exit ${r.exitCode}`, `${r.stdout}${r.stderr}`);
    if (r.exitCode !== 0) {
      const files = (await run(dir, ['diff', '--name-only', '--diff-filter=U', '-z'])).stdout.split('\0').filter(Boolean);
      await run(dir, ['rebase', '--abort']);
      await removeScratch(repo, store.paths, entry.id);
      if (files.length === 0) return `the rebase failed: ${printable(`${r.stderr}${r.stdout}`.trim().split('\n').at(-1) ?? '', 200)}`;
      return { kind: 'conflict', files, output: `${r.stdout}${r.stderr}` };
    }
    const result = (await ok(dir, ['rev-parse', 'HEAD'], 'reading the rebased commit')).trim();
    const tree = (await ok(dir, ['rev-parse', 'HEAD^{tree}'], 'reading the rebased tree')).trim();
    await this.patch(entry, { attempt: { ...a, result, result_tree: tree } });
    this.say(entry, `rebased: ${result.slice(0, 12)}, tree ${tree.slice(0, 12)}${tree === entry.reviewed.tree ? ' (the tree the reviewers passed)' : ` (reviewed: ${entry.reviewed.tree.slice(0, 12)})`}`);
    return undefined;
  }

  /** The validation command, argv only, in a scratch worktree at the result; its output goes to the log. */
  private async validate(entry: MergeEntry): Promise<LandingFailure | string | undefined> {
    const { repo, store, validateTimeoutMs } = this.deps;
    const argv = entry.validate!;
    const dir = await freshScratch(repo, store.paths, entry.id, entry.attempt!.result!);
    this.say(entry, `validate: ${argv.join(' ')}`);
    let exitCode: number | null;
    let output: string;
    try {
      const r = await exec(argv[0]!, argv.slice(1), { cwd: dir, timeoutMs: validateTimeoutMs });
      exitCode = r.exitCode;
      output = `${r.stdout}${r.stderr}`;
    } catch (err) {
      if (err instanceof ProgramNotFoundError) return `the validation command cannot run: ${err.message}`;
      exitCode = null;
      output = `the validation did not finish within ${Math.round(validateTimeoutMs / 1000)} s (${errorMessage(err)})`;
    }
    this.say(entry, `validation ${exitCode === 0 ? 'passed' : exitCode === null ? 'timed out' : `failed (exit ${exitCode})`}`, output);
    await removeScratch(repo, store.paths, entry.id);
    if (exitCode === 0) return undefined;
    return { kind: 'validation', command: argv.join(' '), exitCode, output };
  }

  /**
   * The loop's own rule: a tree nobody reviewed does not land. A review-only loop of one round,
   * with the reviewers that passed the branch and its creator, pinned on the scratch worktree at
   * the result. Its task names the result, so a runner killed mid-review finds the same loop
   * unfinished on the same checkout and resumes it (LoopRunner.start) without asking twice.
   */
  private async review(entry: MergeEntry): Promise<LandingFailure | string | undefined> {
    const { repo, store, engine, logger } = this.deps;
    const a = entry.attempt!;
    const dir = await freshScratch(repo, store.paths, entry.id, a.result!);
    const runner = new LoopRunner(engine, logger);
    runner.onDidProgress(({ message }) => this.say(entry, `review: ${message}`));
    const task = `Merge queue entry ${entry.id}: review branch ${entry.branch} rebased onto ${entry.into} (commit ${a.result}). The rebase changed the tree the reviewers passed in loop ${entry.reviewed.loop} (${entry.reviewed.tree.slice(0, 12)} → ${a.result_tree!.slice(0, 12)}): review the result before it lands.`;
    let loop;
    try {
      loop = await runner.start({ task, creator: entry.creator, reviewers: entry.reviewers, maxLoop: 1, maxRebut: 0, reviewOnly: true, worktree: dir, base: a.target, baseDir: repo });
    } catch (err) {
      if (err instanceof MamError) return `the review round could not run: ${err.message}`;
      throw err;
    } finally {
      runner.dispose();
    }
    await this.patch(entry, { attempt: { ...a, review_loop: loop.id } });
    const round = loop.rounds.at(-1);
    if (loop.status === 'passed' && round?.identity.tree === a.result_tree) {
      await this.patch(entry, { attempt: { ...a, review_loop: loop.id, reviewed: true } });
      await removeScratch(repo, store.paths, entry.id);
      return undefined;
    }
    await removeScratch(repo, store.paths, entry.id);
    if (loop.status !== 'failed' || loop.reason !== 'max_loop' || !round) return `the review loop ${loop.id} ended ${loop.status}${loop.reason ? ` (${loop.reason})` : ''}; run mam merge run to review again`;
    const findings = round.reviews.filter((r) => r.verdict !== 'PASS').map((r) => ({ reviewer: r.reviewer, verdict: r.verdict ?? 'NOT PASS', text: loop.steps.find((s) => s.key === r.step)?.text ?? '' }));
    return { kind: 'review', loop: loop.id, findings };
  }

  /** Compare-and-swap from the attempt's target tip to the result: where the target is checked out, a fast-forward there, only when that checkout is clean. */
  private async moveTarget(entry: MergeEntry): Promise<MergeEntry | typeof MOVED> {
    const { repo } = this.deps;
    const a = entry.attempt!;
    const result = a.result!;
    const now = await branchTip(repo, entry.into);
    if (now === result) return this.landed(entry, result, `${entry.into} is at ${result.slice(0, 12)} already: landed`);
    if (now !== a.target) return MOVED;
    const checkout = await worktreeOf(repo, entry.into);
    if (checkout) {
      const changed = await trackedChanges(checkout.path);
      if (changed.length > 0) return this.wait(entry, `${entry.into} is checked out in ${checkout.path} with uncommitted changes (${changed.slice(0, 3).join(', ')}${changed.length > 3 ? ', …' : ''}); commit or stash them there, then run mam merge run`);
      const r = await run(checkout.path, ['merge', '--ff-only', '--quiet', result]);
      this.say(entry, `git merge --ff-only ${result.slice(0, 12)} in ${checkout.path}: exit ${r.exitCode}`, `${r.stdout}${r.stderr}`);
      if (r.exitCode !== 0) return (await branchTip(repo, entry.into)) !== a.target ? MOVED : this.wait(entry, `could not fast-forward ${entry.into} in ${checkout.path}: ${printable(`${r.stderr}${r.stdout}`.trim().split('\n')[0] ?? '', 200)}`);
    } else {
      const r = await run(repo, ['update-ref', '-m', `mam merge ${entry.id}`, `refs/heads/${entry.into}`, result, a.target]);
      this.say(entry, `git update-ref refs/heads/${entry.into} ${result.slice(0, 12)} ${a.target.slice(0, 12)}: exit ${r.exitCode}`, r.stderr);
      if (r.exitCode !== 0) return (await branchTip(repo, entry.into)) === result ? this.landed(entry, result, 'landed') : MOVED;
    }
    return this.landed(entry, result, `landed ${entry.branch} on ${entry.into} at ${result.slice(0, 12)}`);
  }

  private async landed(entry: MergeEntry, commit: string, message: string): Promise<MergeEntry> {
    const done = await this.patch(entry, { state: 'landed', step: null, reason: null, job_id: null, landed_commit: commit, landed_at: this.deps.store.now() });
    await removeScratch(this.deps.repo, this.deps.store.paths, entry.id);
    this.say(done, message);
    return done;
  }

  /** Waits without a job (a dirty target checkout, busy reviewers): the next run tries again. */
  private async wait(entry: MergeEntry, reason: string): Promise<MergeEntry> {
    const waiting = await this.patch(entry, { state: 'waiting', step: null, reason, job_id: null, attempt: null });
    await removeScratch(this.deps.repo, this.deps.store.paths, entry.id);
    this.say(waiting, `waiting: ${reason}`);
    return waiting;
  }

  /** A job for the branch's creator: its ID and task are written down first, then it is submitted. */
  private async fail(entry: MergeEntry, failure: LandingFailure): Promise<MergeEntry> {
    await removeScratch(this.deps.repo, this.deps.store.paths, entry.id);
    const waiting = await this.patch(entry, {
      state: 'waiting', step: null, attempt: null, job_id: newJobId(dateOn(this.deps.engine.clock)), job_prompt: creatorTask(entry, failure, this.deps.log.file(entry.id)),
      reason: `${failureReason(failure)}; waiting on ${entry.creator}`,
    });
    return this.submit(waiting);
  }

  /** Submits the job the entry has written down (again, with a new ID, when the last one never reached its session). */
  async submit(entry: MergeEntry): Promise<MergeEntry> {
    const { engine, repo } = this.deps;
    const jobs = engine.deps.controlPlane.jobs;
    const old = entry.job_id ? jobs.get(entry.job_id) : undefined;
    if (!entry.job_id || (old && isTerminal(old.state))) entry = await this.patch(entry, { job_id: newJobId(dateOn(engine.clock)) });
    try {
      const r = await submitJob(engine, { session: entry.creator, prompt: entry.job_prompt!, role: 'creator', wait: false, baseDir: repo, jobId: entry.job_id!, title: `Merge queue: fix ${entry.branch} to land on ${entry.into}`, origin: { kind: 'merge', by: entry.id } });
      this.say(entry, `job ${r.job.id} for ${entry.creator}: ${r.job.state}${r.job.reason ? ` (${r.job.reason})` : ''}`);
      return await this.patch(entry, { job_prompt: r.job.state === 'cancelled' ? entry.job_prompt! : null });
    } catch (err) {
      this.say(entry, `could not give ${entry.creator} job ${entry.job_id}: ${errorMessage(err)}; the next run tries again`);
      return entry;
    }
  }

  private async patch(entry: MergeEntry, fields: Partial<MergeEntry>): Promise<MergeEntry> {
    return (await this.deps.store.patch(entry.id, fields)) ?? this.gone();
  }

  private gone(): never {
    throw new EntryGone();
  }

  private say(entry: MergeEntry, line: string, output?: string): void {
    this.deps.log.write(entry.id, line, output);
    this.deps.logger.info(`${entry.id}: ${line}`);
    this.deps.say?.(`${entry.id} ${entry.branch}: ${line}`);
  }
}
