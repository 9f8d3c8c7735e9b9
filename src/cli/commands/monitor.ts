import type { ReconcileReport } from '../../core/sessions/sessionStatus';
import * as fs from 'node:fs';
import { LockTimeoutError } from '../../core/base/errors';
import { isTerminal } from '../../core/store/jobSchema';
import { acquire } from '../../core/store/lock';
import { defineCommand, type CommandContext } from '../command';
import { repeatUntilSignal } from '../repeat';
import { watchConflicts } from './conflicts';

/**
 * `mam monitor`: what the extension does in the background, headless. Repairs session drift,
 * applies job events (live from the broker, from outboxes on disk when it is down), and enforces
 * the timers of jobs nobody is waiting on (submitted with --no-wait, or whose submitter died).
 */
export const monitorCommand = defineCommand({
  path: ['monitor'],
  summary: 'keep sessions and jobs in order: repair drift, apply events, enforce job timers',
  options: {
    once: { kind: 'boolean', description: 'one pass, then exit' },
    'until-idle': { kind: 'boolean', description: 'only jobs: enforce their timers until none is open, then exit (one per workspace; a --no-wait submit starts it when MQTT_BROKER names your own broker)' },
    interval: { kind: 'seconds', value: 'S', default: 5, description: 'seconds between session checks (default 5)' },
  },
  async run(ctx) {
    // Watched from the start: a workspace deleted while the engine connects still stops the monitor.
    const gone = folderWatch(ctx.controlPlane().paths.dir);
    const engine = ctx.jobs();
    // The core's monitor, the extension's too: repairs drift, learns conversation IDs, notices blocking screens.
    const monitor = ctx.core().monitor;
    const print = (r: ReconcileReport): void => {
      for (const n of r.terminated) ctx.out(`terminated ${n}: its pane is gone`);
      for (const n of r.registered) ctx.out(`registered ${n}: a live pane nobody had registered`);
      for (const n of r.revived) ctx.out(`running ${n}: its pane is alive`);
      for (const n of r.repaired) ctx.out(`repaired ${n}: its create or resume had been killed midway`);
    };
    engine.ledger.onDidChangeJob(({ job, previous }) => {
      if (job.state !== previous) ctx.out(`job ${job.id}: ${previous ?? 'new'} → ${job.state}${job.reason ? ` (${job.reason})` : ''}`);
    });
    engine.ledger.onDidApplyEvent(({ job, payload, late }) => {
      if (late) ctx.out(`job ${job.id}: late ${payload.event} (seq ${payload.seq}) after it ended ${job.state}`);
    });
    if (ctx.args.options['until-idle']) return watchUntilIdle(ctx);
    // Overlaps between sessions' checkouts, looked at again after each job event and each pass.
    const overlaps = watchConflicts(ctx, ctx.args.options.once ? 0 : undefined);
    engine.ledger.onDidChangeJob(() => overlaps.schedule());
    await engine.connect();
    const supervisor = engine.supervise('orphans');
    monitor.onDidReconcile(print);
    if (ctx.args.options.once) {
      await monitor.pass();
      await supervisor.enforceDue();
      overlaps.schedule();
      await overlaps.whenIdle();
      overlaps.dispose();
      return 0;
    }
    await whileWorkspaceLasts(ctx, ctx.args.options.interval, async () => {
      await monitor.pass();
      overlaps.schedule();
    }, gone);
    overlaps.dispose();
    return 0;
  },
});

/**
 * The detached job watcher for workspaces on an external broker (the embedded broker's daemon
 * does this itself): one per workspace, under the `warden` lock; it exits once no job is open.
 */
async function watchUntilIdle(ctx: CommandContext): Promise<number> {
  let release: () => void;
  try {
    release = await acquire(ctx.controlPlane().paths.lock('warden'), { timeoutMs: 0, what: 'the job watcher' });
  } catch (err) {
    if (err instanceof LockTimeoutError) return 0; // another watcher runs
    throw err;
  }
  try {
    const engine = ctx.jobs();
    const cp = ctx.controlPlane();
    await engine.connect();
    const gone = folderWatch(cp.paths.dir);
    const idle = (): boolean => gone() || !cp.jobs.list().jobs.some((j) => !isTerminal(j.state));
    engine.supervise('orphans', { rescanEveryMs: 30_000 });
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (!idle()) return;
        clearInterval(timer);
        sub.dispose();
        resolve();
      };
      // Looked at when a job ends here, and now and then (a job may end in another process).
      const sub = engine.ledger.onDidChangeJob(({ job }) => isTerminal(job.state) && check());
      const timer = setInterval(check, 5_000);
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { clearInterval(timer); sub.dispose(); resolve(); });
      check();
    });
    return 0;
  } finally {
    release();
  }
}

/**
 * Runs `pass` at once and then every `intervalS` seconds (at least 0.2) until SIGINT or SIGTERM,
 * or until the workspace's `.mam/` is gone — also when it went while a pass ran, whose programs
 * then fail for want of their working folder.
 */
export async function whileWorkspaceLasts(
  ctx: Pick<CommandContext, 'controlPlane' | 'out'>,
  intervalS: number,
  pass: () => Promise<void>,
  gone: () => boolean = folderWatch(ctx.controlPlane().paths.dir),
): Promise<void> {
  const dir = ctx.controlPlane().paths.dir;
  const stop = (): 'stop' => {
    ctx.out(`${dir} is gone; the monitor stops.`);
    return 'stop';
  };
  await repeatUntilSignal(Math.max(0.2, intervalS) * 1000, async () => {
    if (gone()) return stop();
    try {
      await pass();
    } catch (err) {
      if (gone()) return stop();
      throw err;
    }
    return undefined;
  });
}

/**
 * True once `dir` is deleted or replaced (another folder under the same name): a monitor of a
 * workspace that is gone stops, rather than recreate its `.mam/` for ever.
 */
export function folderWatch(dir: string): () => boolean {
  const identity = (): string | undefined => {
    try {
      const st = fs.statSync(dir);
      return `${st.dev}:${st.ino}`;
    } catch {
      return undefined;
    }
  };
  let first = identity();
  return () => {
    const now = identity();
    if (first === undefined) first = now; // not made yet: watched from when it is
    return first !== undefined && now !== first;
  };
}
