import { reconcile, sessionStatus, type ReconcileReport } from '../../core/sessions/sessionStatus';
import { defineCommand, JSON_OPTION } from '../command';
import { dash, table } from '../output';
import { whileWorkspaceLasts } from './monitor';

export const sessionStatusCommand = defineCommand({
  path: ['session', 'status'],
  summary: 'every session with its pane’s liveness, command, cwd, resume ID and drift (read-only)',
  options: { ...JSON_OPTION },
  details: 'Never starts a multiplexer server and never changes the registry; `mam session monitor --once` repairs drift.',
  async run(ctx) {
    const service = ctx.sessions();
    const states = await sessionStatus(service, await ctx.controlPlane().sessions.list());
    if (ctx.args.options.json) {
      ctx.json(states);
      return 0;
    }
    if (states.length === 0) {
      ctx.out('No sessions, and no panes on the workspace’s servers.');
      return 0;
    }
    for (const line of table(states, [
      ['NAME', (s) => s.session?.name ?? '(unregistered)'],
      ['AGENT', (s) => dash(s.session?.agent)],
      ['STATUS', (s) => (s.attention ? 'needs attention' : dash(s.session?.status))],
      ['PANE', (s) => (s.pane ? `${s.pane.id} ${s.pane.alive ? 'alive' : 'dead'}` : '-')],
      ['COMMAND', (s) => dash(s.pane?.command)],
      ['CONVERSATION', (s) => dash(s.session?.conversation_id)],
      ['DRIFT', (s) => (s.drift.length ? s.drift.join(',') : '-')],
      ['CWD', (s) => dash(s.pane?.cwd ?? s.session?.cwd)],
    ])) {
      ctx.out(line);
    }
    for (const s of states) {
      if (s.attention && s.session) ctx.out(`${s.session.name}: ${s.session.agent} shows ${s.attention.name}. ${s.attention.answer}`);
    }
    return 0;
  },
});

export const sessionMonitor = defineCommand({
  path: ['session', 'monitor'],
  summary: 'repair drift: dead sessions become terminated, unregistered live panes are registered',
  options: {
    once: { kind: 'boolean', description: 'repair once and exit' },
    interval: { kind: 'seconds', value: 'S', default: 5, description: 'seconds between passes (default 5)' },
    ...JSON_OPTION,
  },
  async run(ctx) {
    const service = ctx.sessions();
    const registry = ctx.controlPlane().sessions;
    const print = (r: ReconcileReport): void => {
      if (ctx.args.options.json) return ctx.json(r);
      for (const n of r.terminated) ctx.out(`terminated ${n}: its pane is gone`);
      for (const n of r.registered) ctx.out(`registered ${n}: a live pane nobody had registered`);
      for (const n of r.revived) ctx.out(`running ${n}: its pane is alive`);
      for (const n of r.repaired) ctx.out(`repaired ${n}: its create or resume had been killed midway`);
      for (const n of r.pidUpdated) ctx.out(`updated ${n}: its pane runs a new process`);
    };
    if (ctx.args.options.once) {
      const r = await reconcile(service, registry);
      print(r);
      if (!ctx.args.options.json && Object.values(r).every((v) => v.length === 0)) ctx.out('Nothing to repair.');
      return 0;
    }
    await whileWorkspaceLasts(ctx, ctx.args.options.interval, async () => print(await reconcile(service, registry)));
    return 0;
  },
});
