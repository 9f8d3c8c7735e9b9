import { systemClock, type Clock } from './base/clock';
import { DisposableBase } from './base/disposable';
import type { Event } from './base/emitter';
import type { Logger } from './base/log';
import { errorMessage } from './base/errors';
import { OverlapChecker } from './overlap/overlapChecker';
import type { OverlapPair, OverlapReport } from './overlap/overlapReport';
import { OverlapWatcher } from './overlap/overlapWatcher';
import type { SessionRow } from './store/sessionSchema';

/**
 * Overlaps between the running sessions' checkouts of one workspace, for the views: looked at again
 * when a job changes, the sessions change, a file is saved (`schedule`) or something moves in a
 * compared checkout (its watches), at the watcher's bounded cost (one look per burst, never two at
 * once; a look reads only the checkouts that moved). Inert until `start` — an untrusted workspace
 * runs no git, and watches nothing.
 */
export class WorkspaceOverlaps extends DisposableBase {
  private readonly watcher: OverlapWatcher;
  private started = false;
  readonly onDidChange: Event<OverlapReport>;
  /** A pair of checkouts that newly conflicts: once per conflict (one that stops and comes back is new). */
  readonly onNewConflict: Event<OverlapPair>;

  /** `clock`: the debounce of looks and the reports' time (the engine's clock; default the system's). */
  constructor(listSessions: () => Promise<SessionRow[]>, logger: Logger, clock: Clock = systemClock) {
    super();
    // Watched: a look asks git only about the checkouts where something moved, and an agent's edit
    // (no VS Code save, no job event) asks for a look itself.
    const checker = new OverlapChecker({ clock, watch: true });
    this.watcher = this._register(new OverlapWatcher({ check: async () => checker.check(await listSessions()), owns: checker, clock }));
    this._register(checker.onDidMove(() => this.schedule()));
    this.onDidChange = this.watcher.onDidChange;
    this.onNewConflict = this.watcher.onNewConflict;
    this._register(this.watcher.onDidFail((err) => logger.warn(`overlap check failed: ${errorMessage(err)}`)));
  }

  start(): void {
    this.started = true;
    this.schedule();
  }

  /** Asks for a look (ignored before `start`). */
  schedule(): void {
    if (this.started) this.watcher.schedule();
  }

  /** The latest report, once a look has finished. */
  get report(): OverlapReport | undefined {
    return this.watcher.report;
  }

  /** Resolves once no look is gathering, running or pending (tests, `--once`). */
  whenIdle(): Promise<void> {
    return this.watcher.whenIdle();
  }

  /** The pairs a session is part of, conflicts first. */
  pairsOf(session: string): OverlapPair[] {
    const pairs = this.report?.pairs.filter((p) => p.a.sessions.includes(session) || p.b.sessions.includes(session)) ?? [];
    return [...pairs].sort((x, y) => Number(y.kind === 'conflict') - Number(x.kind === 'conflict'));
  }
}
