import { JSON_OPTION, type Command } from '../command';
import { dash, since, table } from '../output';

const list: Command = {
  path: ['session', 'list'],
  summary: 'list the registered sessions',
  options: { ...JSON_OPTION },
  details: 'Reads the registry (.mam/agent-sessions.db) without touching any multiplexer.',
  async run(ctx) {
    const sessions = await ctx.controlPlane().sessions.list();
    if (ctx.args.options.json) {
      ctx.json(sessions);
      return 0;
    }
    if (sessions.length === 0) {
      ctx.out('No sessions registered in this workspace.');
      return 0;
    }
    for (const line of table(sessions, [
      ['NAME', (s) => s.name],
      ['AGENT', (s) => s.agent],
      ['ROLE', (s) => s.role],
      ['STATUS', (s) => s.status],
      ['MUX', (s) => `${s.mux}:${s.server}`],
      ['PANE', (s) => dash(s.target)],
      ['JOB', (s) => dash(s.current_job)],
      ['UPDATED', (s) => since(s.updated_at)],
      ['CWD', (s) => s.cwd],
    ])) {
      ctx.out(line);
    }
    return 0;
  },
};

export const sessionCommands: readonly Command[] = [list];
