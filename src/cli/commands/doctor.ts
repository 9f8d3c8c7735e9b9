import { ExitCode } from '../../core/base/errors';
import { runDoctor } from '../../core/doctor';
import { defineCommand, JSON_OPTION } from '../command';

export const doctorCommand = defineCommand({
  path: ['doctor'],
  summary: 'check tmux, git, Node.js, broker settings and the registry, and say what to fix',
  options: { ...JSON_OPTION },
  details: 'Exit status: 0 when nothing needs fixing, 1 otherwise. Changes nothing except repairing a disagreeing registry mirror.',
  async run(ctx) {
    const checks = await runDoctor({ workspace: ctx.workspace(), env: ctx.io.env });
    const problems = checks.filter((c) => !c.ok);
    if (ctx.args.options.json) {
      ctx.json({ workspace: ctx.workspace(), ok: problems.length === 0, checks });
    } else {
      ctx.out(`workspace: ${ctx.workspace()}`);
      for (const c of checks) {
        const mark = !c.ok ? '✗' : c.warning ? '!' : '✓';
        ctx.out(`${mark} ${c.name.padEnd(10)} ${c.detail}`);
        if (c.fix && (!c.ok || c.warning)) ctx.out(`  ${' '.repeat(10)} → ${c.fix}`);
      }
      const warnings = checks.filter((c) => c.ok && c.warning).length;
      const also = warnings === 0 ? '' : `, ${warnings} warning${warnings === 1 ? '' : 's'}`;
      ctx.out(problems.length === 0 ? `No problems found${also}.` : `${problems.length} problem${problems.length === 1 ? '' : 's'} found${also}.`);
    }
    return problems.length === 0 ? ExitCode.ok : ExitCode.failed;
  },
});
