import * as os from 'node:os';
import { systemClock, unrefTimer, type Clock } from '../base/clock';
import { DisposableBase, toDisposable } from '../base/disposable';
import type { Logger } from '../base/log';
import type { ControlPlane } from '../store/controlPlane';
import type { MuxFactory } from '../mux';
import { adapterFor, isAgentName } from '../agents';
import { readScreen } from '../agents/screens';
import { lastLines } from '../mux/inject';
import { isAlive } from '../base/process';
import { isTerminal, type JobRecord } from '../store/jobSchema';
import type { JobLedger } from './jobLedger';
import { REASONS } from './lifecycle';
import { errorMessage } from '../base/errors';

export interface SupervisorOptions {
  controlPlane: ControlPlane;
  ledger: JobLedger;
  muxFactory: MuxFactory;
  logger: Logger;
  /** Which jobs this supervisor judges: its own, or (monitor, extension) those nobody waits on. */
  scope: { ownerToken: string } | 'orphans';
  /** How often panes are checked for `agent_exited`. */
  paneCheckMs?: number;
  /** Applies what is waiting for a job (its outbox) before a timer may judge it. */
  beforeJudge?: (jobId: string) => Promise<void>;
  /** Whose time T, K×N and the budget are measured on (tests pass a fake one). */
  clock?: Clock;
}

/**
 * Enforces the timers of SPEC §5 on open jobs — no `started` within T after delivery
 * (`agent_blocked`), no event for K×N (`deadline_timeout`), the wall-clock budget
 * (`wall_clock_timeout`) — and fails a job at once when its agent's pane process is gone
 * (`agent_exited`). Deadlines come from the job record, so any process adopting the job computes
 * the same ones; each decision is re-checked under the job's lock, so two supervisors never
 * decide twice.
 */
export class JobSupervisor extends DisposableBase {
  private readonly timers = new Map<string, unknown>();
  private readonly clock: Clock;
  private paneTimer: unknown;

  constructor(private readonly options: SupervisorOptions) {
    super();
    this.clock = options.clock ?? systemClock;
    this._register(options.ledger.onDidChangeJob(({ job }) => this.schedule(job)));
    this._register(toDisposable(() => {
      for (const t of this.timers.values()) this.clock.clearTimeout(t);
      this.timers.clear();
      this.clock.clearTimeout(this.paneTimer);
    }));
    this.armPaneCheck();
  }

  /** Pane checks run one after another, never two at once: the next is armed when one ends. */
  private armPaneCheck(): void {
    if (this.isDisposed) return;
    this.paneTimer = unrefTimer(this.clock.setTimeout(() => void this.checkPanes().finally(() => this.armPaneCheck()), this.options.paneCheckMs ?? 1000));
  }

  /** Looks at every open job on disk and takes on those in scope. */
  scan(): void {
    for (const job of this.options.controlPlane.jobs.list().jobs) this.schedule(job);
  }

  /** Decides every in-scope job whose deadline has passed, now (`mam monitor --once`). */
  async enforceDue(): Promise<void> {
    for (const job of this.options.controlPlane.jobs.list().jobs) {
      if (isTerminal(job.state) || !this.inScope(job)) continue;
      const due = nextDeadline(job);
      if (due && due.at <= this.clock.now()) await this.expire(job.id);
    }
  }

  /**
   * Arms (or re-arms) the job's next deadline. An orphan watcher arms it also for jobs whose
   * submitter is still alive, and looks at the owner only when the deadline comes: a submitter
   * that dies while it waits leaves no message behind, so the job must already be on the clock.
   */
  schedule(job: JobRecord, at?: number): void {
    this.clock.clearTimeout(this.timers.get(job.id));
    this.timers.delete(job.id);
    if (isTerminal(job.state) || !this.mayWatch(job)) return;
    const next = at ?? nextDeadline(job)?.at;
    if (next === undefined) return;
    this.timers.set(job.id, unrefTimer(this.clock.setTimeout(() => void this.expire(job.id), Math.max(0, next - this.clock.now()))));
  }

  /** Jobs this supervisor keeps on its clock: its own, or (orphans) any job of this host. */
  private mayWatch(job: JobRecord): boolean {
    const scope = this.options.scope;
    if (scope !== 'orphans') return job.owner?.token === scope.ownerToken;
    return !job.owner || job.owner.host === os.hostname();
  }

  /** Jobs this supervisor may judge now: its own, or (orphans) those whose submitter is gone. */
  private inScope(job: JobRecord): boolean {
    const scope = this.options.scope;
    if (scope !== 'orphans') return job.owner?.token === scope.ownerToken;
    const owner = job.owner;
    return !owner || (owner.host === os.hostname() && !isAlive(owner.pid));
  }

  private async expire(jobId: string): Promise<void> {
    this.timers.delete(jobId);
    const job = this.options.controlPlane.jobs.get(jobId);
    if (!job || isTerminal(job.state)) return;
    const due = nextDeadline(job);
    if (!due) return;
    if (due.at > this.clock.now()) return this.schedule(job);
    // Its submitter still waits on it and judges it itself; look again shortly, in case it dies.
    if (!this.inScope(job)) return this.schedule(job, this.clock.now() + OWNER_GRACE_MS);
    const seen = { state: job.state, seq: job.seq, last: job.last_event_at };
    // Late events first: one may be waiting in the job's outbox, and then no timer may judge.
    if (this.options.beforeJudge) {
      await this.options.beforeJudge(jobId);
      const now = this.options.controlPlane.jobs.get(jobId);
      if (!now || now.state !== seen.state || now.seq !== seen.seq) return now && !isTerminal(now.state) ? this.schedule(now) : undefined;
    }
    // For diagnosis only (never to judge): what the agent's pane showed when the timer ran out.
    const screen = await this.lastScreen(job);
    const blocked = screen ? await this.blockingScreenOf(job, screen) : undefined;
    const done = await this.options.ledger.transition(jobId, due.state, due.reason, {
      when: (j) => j.state === seen.state && j.seq === seen.seq && j.last_event_at === seen.last,
      note: blocked ? `${due.note}; the agent shows ${blocked}` : due.note,
      ...(screen ? { screen } : {}),
    });
    if (done) this.options.logger.info(`job ${jobId}: ${due.state} (${due.reason}): ${due.note}`);
    else this.schedule(this.options.controlPlane.jobs.require(jobId));
  }

  /**
   * Fails at once, with `reason`, every open job in scope that `which` picks: a fact heard from
   * elsewhere (its remote runner is gone), not a timer. As before a timer, what waits in the job's
   * outbox is applied first; a job that ended meanwhile stays as it ended.
   */
  async failNow(which: (job: JobRecord) => boolean, reason: string, note: string): Promise<JobRecord[]> {
    const ended: JobRecord[] = [];
    for (const job of this.options.controlPlane.jobs.list().jobs) {
      if (isTerminal(job.state) || !this.inScope(job) || !which(job)) continue;
      await this.options.beforeJudge?.(job.id);
      const done = await this.options.ledger.transition(job.id, 'failed', reason, { when: (j) => !isTerminal(j.state) && which(j), note });
      if (!done) continue;
      this.options.logger.info(`job ${job.id}: failed (${reason}): ${note}`);
      ended.push(done);
    }
    return ended;
  }

  /** The visible screen of the job's pane (its last lines), or undefined when it cannot be read. */
  private async lastScreen(job: JobRecord): Promise<string | undefined> {
    const t = job.target;
    if (t?.kind !== 'local' || !t.pane || !t.mux || !t.server) return undefined;
    try {
      return lastLines(await this.options.muxFactory(t.mux, t.server).capture(t.pane));
    } catch {
      return undefined;
    }
  }

  /** The name of the blocking screen the job's agent shows, when its adapter knows it. */
  private async blockingScreenOf(job: JobRecord, screen: string): Promise<string | undefined> {
    const row = job.target?.kind === 'local' ? await this.options.controlPlane.sessions.get(job.target.name).catch(() => undefined) : undefined;
    if (!row || !isAgentName(row.agent)) return undefined;
    const reading = readScreen(screen, adapterFor(row.agent));
    return reading.kind === 'blocked' ? reading.screen.name : undefined;
  }

  /** Fails at once any watched job whose agent's pane has gone, instead of waiting out K×N. */
  private async checkPanes(): Promise<void> {
    const open = [...this.timers.keys()].map((id) => this.options.controlPlane.jobs.get(id)).filter((j): j is JobRecord => !!j && !isTerminal(j.state) && this.inScope(j));
    const byServer = new Map<string, { mux: 'tmux' | 'herdr'; server: string; jobs: JobRecord[] }>();
    for (const job of open) {
      const t = job.target;
      if (t?.kind !== 'local' || !t.pane || !t.mux || !t.server || (job.state !== 'dispatched' && job.state !== 'started')) continue;
      const key = `${t.mux}\u0000${t.server}`;
      byServer.set(key, { mux: t.mux, server: t.server, jobs: [...(byServer.get(key)?.jobs ?? []), job] });
    }
    for (const { mux, server, jobs } of byServer.values()) {
      let panes;
      try {
        panes = await this.options.muxFactory(mux, server).listPanes();
      } catch (err) {
        this.options.logger.debug(`pane check on ${server}: ${errorMessage(err)}`);
        continue;
      }
      for (const job of jobs) {
        const pane = panes.find((p) => p.id === job.target!.pane);
        const gone = !pane || !pane.alive || (job.target!.pane_pid != null && pane.pid !== null && pane.pid !== job.target!.pane_pid);
        if (!gone) continue;
        await this.options.ledger.transition(job.id, 'failed', REASONS.agentExited, {
          when: (j) => !isTerminal(j.state) && j.target?.pane === job.target!.pane,
          note: `the agent's pane ${job.target!.pane} on ${server} is gone`,
        });
      }
    }
  }
}

/** How long an orphan watcher waits before looking again at a job whose submitter is alive past its deadline. */
const OWNER_GRACE_MS = 5_000;

/** Longer than any delivery can take (ready wait 60 s, typing and confirmation a few seconds). */
const DELIVERY_BOUND_MS = 120_000;

/** The job's next deadline, from its record alone. */
export function nextDeadline(job: JobRecord): { at: number; state: 'failed' | 'timeout'; reason: string; note: string } | undefined {
  const timers = job.timers;
  if (!timers || !job.dispatched_at) return undefined;
  // T and the budget count from delivery. A delivery whose submitter died midway is taken as done
  // once its own bounds (ready wait, typing, confirmation) have certainly passed.
  const dispatched = job.delivered_at ? Date.parse(job.delivered_at) : Date.parse(job.dispatched_at) + DELIVERY_BOUND_MS;
  const budget = { at: dispatched + timers.timeout_s * 1000, state: 'timeout' as const, reason: REASONS.wallClock, note: `the wall-clock budget of ${timers.timeout_s} s ran out` };
  let liveness;
  if (job.state === 'dispatched') {
    liveness = { at: dispatched + timers.start_timeout_s * 1000, state: 'failed' as const, reason: REASONS.agentBlocked, note: `no started within ${timers.start_timeout_s} s of delivery` };
  } else if (job.state === 'started') {
    const last = job.last_event_at ? Date.parse(job.last_event_at) : dispatched;
    liveness = { at: last + timers.idle_timeout_s * 1000, state: 'timeout' as const, reason: REASONS.deadline, note: `no event for ${timers.idle_timeout_s} s` };
  } else {
    return undefined;
  }
  return liveness.at <= budget.at ? liveness : budget;
}
