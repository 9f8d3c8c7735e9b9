import * as fs from 'node:fs';
import { DisposableBase, toDisposable } from './base/disposable';
import { Emitter } from './base/emitter';
import { errorMessage } from './base/errors';
import { systemClock, type Clock } from './base/clock';
import type { Logger } from './base/log';
import type { NamedScreen } from './mux/inject';
import type { SessionService } from './sessions/sessionService';
import { reconcile, type ReconcileReport } from './sessions/sessionStatus';
import type { ControlPlane } from './store/controlPlane';

export interface MonitorDeps {
  controlPlane: ControlPlane;
  sessions: SessionService;
  logger: Logger;
  /** Asked for a look after each pass: the sessions' checkouts may have moved. */
  overlaps?: { schedule(): void };
  /** Its interval runs on this clock (the jobs engine's); default: the system clock. */
  clock?: Clock;
}

/**
 * The monitor of one workspace (SPEC §4), the same for `mam monitor` and the extension: each pass
 * repairs session drift, records conversation IDs that have appeared in an agent's store, notices
 * agents that show a screen only a person should answer, and asks for an overlap look. `start`
 * runs a pass every interval; `pass` runs one (`mam monitor --once`, and the CLI's own loop).
 */
export class Monitor extends DisposableBase {
  private timer: unknown;
  private readonly reconciled = this._register(new Emitter<ReconcileReport>());
  /** What each pass repaired (the CLI prints it). */
  readonly onDidReconcile = this.reconciled.event;
  private readonly terminated = this._register(new Emitter<string[]>());
  /** Sessions whose panes are gone (a crash, a reboot, `tmux kill-server`). */
  readonly onDidTerminateSessions = this.terminated.event;

  constructor(private readonly deps: MonitorDeps) {
    super();
    this._register(toDisposable(() => this.stop()));
  }

  private get clock(): Clock {
    return this.deps.clock ?? systemClock;
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** A pass now and then every `intervalMs`; nothing in an untrusted workspace. */
  start(intervalMs = 5000): void {
    if (!this.deps.sessions.trust.trusted || this.timer) return;
    this.timer = this.clock.setInterval(() => void this.pass().catch((err: unknown) => this.deps.logger.warn(`monitor: ${errorMessage(err)}`)), intervalMs);
    void this.pass().catch((err: unknown) => this.deps.logger.warn(`monitor: ${errorMessage(err)}`));
  }

  stop(): void {
    if (this.timer !== undefined) this.clock.clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass; undefined when the workspace's `.mam/` is gone (a deleted control plane stays deleted). */
  async pass(): Promise<ReconcileReport | undefined> {
    const { controlPlane, sessions } = this.deps;
    if (!fs.existsSync(controlPlane.paths.dir)) return undefined;
    sessions.trust.require('ask the multiplexer about its panes');
    const report = await reconcile(sessions, controlPlane.sessions);
    let changed = report.terminated.length + report.registered.length + report.revived.length + report.pidUpdated.length + report.repaired.length > 0;
    this.reconciled.fire(report);
    if (report.terminated.length) this.terminated.fire(report.terminated);
    const running = (await controlPlane.sessions.list()).filter((r) => r.status === 'running');
    for (const row of running) {
      if (!row.conversation_id && (await sessions.learnConversation(row.name, { boundMs: 0, onlyIfUnique: true, quiet: true }))) changed = true;
    }
    const attention = new Map<string, NamedScreen>();
    for (const row of running) {
      const screen = await sessions.attentionOf(row);
      if (screen) attention.set(row.name, screen);
    }
    if (sessions.noteAttention(attention)) changed = true;
    if (changed) sessions.notifyChanged();
    this.deps.overlaps?.schedule();
    return report;
  }
}
