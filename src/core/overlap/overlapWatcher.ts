import { systemClock, type Clock } from '../base/clock';
import { DisposableBase, type Disposable } from '../base/disposable';
import { Emitter, type Event } from '../base/emitter';
import { pairKey, type OverlapPair, type OverlapReport } from './overlapReport';

export interface OverlapWatcherOptions {
  /** One look: usually `async () => checker.check(await registry.list())` with one OverlapChecker kept for all. */
  check: () => Promise<OverlapReport>;
  clock?: Clock;
  /** How long requests gather before one look runs (default 1,000 ms). */
  delayMs?: number;
  /** What `check` uses and the watcher's disposal ends: the OverlapChecker (its temporary indexes). */
  owns?: Disposable;
}

/**
 * Recomputes overlaps when asked, at bounded cost: requests made within `delayMs` of the first
 * are served by one look (so a burst of job events or saves costs one), never two looks run at
 * once, and requests made while one runs are served by one more look after it. Tells what changed
 * (`onDidChange`, only when the report differs in more than its time) and each conflict once
 * (`onNewConflict`): a pair of checkouts that still conflicts is not announced again; one that
 * stopped conflicting and conflicts again is.
 */
export class OverlapWatcher extends DisposableBase {
  private readonly didChange = this._register(new Emitter<OverlapReport>());
  private readonly newConflict = this._register(new Emitter<OverlapPair>());
  private readonly didFail = this._register(new Emitter<unknown>());
  readonly onDidChange: Event<OverlapReport> = this.didChange.event;
  readonly onNewConflict: Event<OverlapPair> = this.newConflict.event;
  /** A look failed (the report stays as it was). */
  readonly onDidFail: Event<unknown> = this.didFail.event;

  private readonly clock: Clock;
  private readonly delayMs: number;
  private timer: unknown;
  private running: Promise<void> | undefined;
  private pending = false;
  private last: OverlapReport | undefined;
  private lastContent = '';
  private conflicting = new Set<string>();
  private readonly idleWaiters: Array<() => void> = [];

  constructor(private readonly options: OverlapWatcherOptions) {
    super();
    this.clock = options.clock ?? systemClock;
    this.delayMs = options.delayMs ?? 1_000;
    if (options.owns) this._register(options.owns);
    this._register({ dispose: () => this.cancelTimer() });
  }

  /** The latest report, once one look has finished. */
  get report(): OverlapReport | undefined {
    return this.last;
  }

  /** Asks for a look: joins the one gathering, or the one after the look that runs now. */
  schedule(): void {
    if (this.isDisposed) return;
    if (this.running) {
      this.pending = true;
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, this.delayMs);
  }

  /** Resolves once nothing is gathering, running or pending. */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  override dispose(): void {
    super.dispose();
    this.pending = false;
    this.settleIdle();
  }

  private run(): void {
    this.running = (async () => {
      try {
        const report = await this.options.check();
        if (!this.isDisposed) this.publish(report);
      } catch (err) {
        if (!this.isDisposed) this.didFail.fire(err);
      }
    })().finally(() => {
      this.running = undefined;
      if (this.pending && !this.isDisposed) {
        this.pending = false;
        this.schedule();
      }
      this.settleIdle();
    });
  }

  private publish(report: OverlapReport): void {
    this.last = report;
    const content = JSON.stringify({ ...report, computed_at: undefined });
    const changed = content !== this.lastContent;
    this.lastContent = content;
    const now = new Set<string>();
    const fresh: OverlapPair[] = [];
    for (const pair of report.pairs) {
      if (pair.kind !== 'conflict') continue;
      const key = pairKey(pair);
      now.add(key);
      if (!this.conflicting.has(key)) fresh.push(pair);
    }
    this.conflicting = now;
    if (changed) this.didChange.fire(report);
    for (const pair of fresh) this.newConflict.fire(pair);
  }

  private isIdle(): boolean {
    return this.timer === undefined && this.running === undefined && !this.pending;
  }

  private settleIdle(): void {
    if (!this.isIdle() && !this.isDisposed) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
