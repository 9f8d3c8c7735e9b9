import { reconcile, type ReconcileReport } from '../../core/sessions/sessionStatus';
import { type Command } from '../command';
import { repeatUntilSignal } from '../repeat';

/**
 * `mam monitor`: what the extension does in the background, headless. Repairs session drift,
 * applies job events (live from the broker, from outboxes on disk when it is down), and enforces
 * the timers of jobs nobody is waiting on (submitted with --no-wait, or whose submitter died).
 */
export const monitorCommand: Command = {
  path: ['monitor'],
  summary: 'keep sessions and jobs in order: repair drift, apply events, enforce job timers',
  options: {
    once: { kind: 'boolean', description: 'one pass, then exit' },
    interval: { kind: 'seconds', value: 'S', description: 'seconds between session checks (default 5)' },
  },
  async run(ctx) {
    const registry = ctx.controlPlane().sessions;
    const engine = ctx.jobs();
    const print = (r: ReconcileReport): void => {
      for (const n of r.terminated) ctx.out(`terminated ${n}: its pane is gone`);
      for (const n of r.registered) ctx.out(`registered ${n}: a live pane nobody had registered`);
      for (const n of r.revived) ctx.out(`running ${n}: its pane is alive`);
    };
    engine.ledger.onDidChangeJob(({ job, previous }) => {
      if (job.state !== previous) ctx.out(`job ${job.id}: ${previous ?? 'new'} → ${job.state}${job.reason ? ` (${job.reason})` : ''}`);
    });
    engine.ledger.onDidApplyEvent(({ job, payload, late }) => {
      if (late) ctx.out(`job ${job.id}: late ${payload.event} (seq ${payload.seq}) after it ended ${job.state}`);
    });
    await engine.connect();
    const supervisor = engine.supervise('orphans');
    if (ctx.args.options.once) {
      print(await reconcile(ctx.sessions(), registry));
      await supervisor.enforceDue();
      return 0;
    }
    const intervalMs = Math.max(0.2, (ctx.args.options.interval as number | undefined) ?? 5) * 1000;
    await repeatUntilSignal(intervalMs, async () => print(await reconcile(ctx.sessions(), registry)));
    return 0;
  },
};
