import { AGENT_NAMES } from '../../core/agents';
import { splitWords } from '../../core/base/shellWords';
import { SESSION_ROLES, type SessionRow } from '../../core/store/sessionSchema';
import { onboardSession } from '../../core/jobs/onboard';
import { ExitCode, UsageError } from '../../core/base/errors';
import { printable } from '../../core/base/ids';
import { LoopStore } from '../../core/loop/loopState';
import { resumeAll } from '../../core/recovery';
import { isAlive } from '../../core/base/process';
import { defineCommand, JSON_OPTION, type Command, type CommandContext } from '../command';
import { dash, since, table } from '../output';
import { sessionMonitor, sessionStatusCommand } from './sessionStatus';

const NAME = [{ name: 'session', description: 'the session name', required: true }] as const;

function attachHint(ctx: CommandContext, row: SessionRow): string {
  return row.target ? ctx.sessions().muxOf(row).attachArgv(row.target).join(' ') : '';
}

const list = defineCommand({
  path: ['session', 'list'],
  summary: 'list the registered sessions',
  options: { ...JSON_OPTION },
  details: "Reads the registry (.mam/agent-sessions.db) without touching any multiplexer; 'mam session status' also checks the panes.",
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
});

const create = defineCommand({
  path: ['session', 'create'],
  summary: 'start an agent in a new pane of the workspace’s multiplexer server and register it',
  options: {
    agent: { kind: 'string', value: 'AGENT', required: true, description: `the agent: ${AGENT_NAMES.join(', ')}` },
    name: { kind: 'string', value: 'NAME', required: true, aliases: ['session'], description: 'the session name: letters, digits, . _ - (up to 64)' },
    role: { kind: 'string', value: 'ROLE', description: `its role: ${SESSION_ROLES.join(', ')} (default worker)` },
    cwd: { kind: 'string', value: 'DIR', description: 'where the agent runs (default: the current folder)' },
    mux: { kind: 'string', value: 'tmux|herdr', description: 'the multiplexer (default: MAM_MUX, else tmux)' },
    server: { kind: 'string', value: 'NAME', aliases: ['herdr-session'], description: 'the multiplexer server (default: mam-<workspace>); --herdr-session NAME also means --mux herdr' },
    command: { kind: 'string', value: '"PROGRAM ARGS"', description: 'run this instead of the agent’s program (split into words; no shell is involved)' },
    onboard: { kind: 'boolean', description: 'delegate the onboarding job that teaches the agent the event protocol, and wait for it' },
    'onboard-timeout': { kind: 'seconds', value: 'S', description: 'how long onboarding may take (default: the job budget)' },
    ...JSON_OPTION,
  },
  details: [
    'Examples:',
    '  mam session create --agent claude --name creator-1 --role creator',
    '  mam session create --agent shell --name watcher --command "npm run watch"',
    '  mam session create --agent codex --role reviewer --session reviewer-1 --herdr-session my-project   (the seeds\' words)',
  ].join('\n'),
  async run(ctx) {
    const o = ctx.args.options;
    // The seeds' --herdr-session NAME names a herdr server: herdr is implied, and tmux contradicts it.
    const herdrServer = ctx.args.aliasUsed.server === 'herdr-session';
    if (herdrServer && o.mux !== undefined && o.mux !== 'herdr') throw new UsageError(`--herdr-session names a herdr server; it does not go with --mux ${printable(o.mux, 20)}`);
    const mux = herdrServer ? 'herdr' : o.mux;
    const row = await ctx.sessions().create({
      name: o.name,
      agent: o.agent,
      baseDir: ctx.io.cwd,
      ...(o.role !== undefined ? { role: o.role } : {}),
      ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
      ...(mux !== undefined ? { mux } : {}),
      ...(o.server !== undefined ? { server: o.server } : {}),
      ...(o.command !== undefined ? { command: splitWords(o.command) } : {}),
    });
    if (!o.json) ctx.out(`Created session ${row.name} (${row.agent}, ${row.role}) in pane ${row.target} of ${row.mux} server ${row.server}.\nAttach: ${attachHint(ctx, row)}`);
    if (!o.onboard) {
      if (o.json) ctx.json(row);
      return 0;
    }
    const onboarding = await onboardSession(ctx.jobs(), row.name, o['onboard-timeout'] !== undefined ? { timeoutS: o['onboard-timeout'] } : {});
    if (o.json) ctx.json({ ...row, onboarding: onboarding.job, exit_code: onboarding.exitCode });
    else if (onboarding.exitCode === ExitCode.ok) ctx.out(`Onboarded ${row.name} (job ${onboarding.job.id}).`);
    else ctx.out(`Onboarding of ${row.name} ${onboarding.exitCode === ExitCode.onboardTimeout ? 'did not finish in time' : 'failed'}: job ${onboarding.job.id} ${onboarding.job.state} (${onboarding.job.reason ?? '-'}). The session is kept.`);
    return onboarding.exitCode;
  },
});

const stop = defineCommand({
  path: ['session', 'stop'],
  summary: 'ask the agent to exit, close its pane, keep its conversation for resume',
  positionals: NAME,
  options: {
    'purge-conversation': { kind: 'boolean', description: 'delete the stored conversation instead of keeping it (needs --yes)' },
    yes: { kind: 'boolean', description: 'confirm --purge-conversation' },
    ...JSON_OPTION,
  },
  async run(ctx) {
    const o = ctx.args.options;
    const result = await ctx.sessions().stop(ctx.args.positionals[0]!, { purgeConversation: Boolean(o['purge-conversation']), yes: Boolean(o.yes) });
    if (o.json) {
      ctx.json(result);
      return 0;
    }
    const r = result.row;
    if (result.alreadyStopped) ctx.out(`Session ${r.name} was already ${r.status}.`);
    else ctx.out(`Stopped session ${r.name}.`);
    if (result.purged !== undefined) ctx.out(`Deleted its conversation (${result.purged}).`);
    else if (r.resumable) ctx.out(`Resume it with: mam session resume ${r.name}${r.conversation_id ? `  (conversation ${r.conversation_id})` : ''}`);
    else ctx.out('It cannot be resumed: no saved conversation was found.');
    return 0;
  },
});

const resume = defineCommand({
  path: ['session', 'resume'],
  summary: 'restart a stopped session in its saved conversation, in its original folder (--all: every session a crash or reboot ended)',
  positionals: [{ name: 'session', description: 'the session name (or --all)' }],
  options: {
    cwd: { kind: 'string', value: 'DIR', description: 'must be the folder the session ran in (checked, never changed)' },
    all: { kind: 'boolean', description: 'resume every session that was running when its multiplexer server went away (not those you stopped)' },
    ...JSON_OPTION,
  },
  details: [
    'With --all: jobs still open on a dead agent end failed (agent_exited) first; a running loop then continues with',
    "'mam loop resume ID'. Exit status: 0 all resumed (or none to resume); 4 an agent shows a screen only you can answer;",
    '1 a session could not be resumed.',
  ].join('\n'),
  async run(ctx) {
    const o = ctx.args.options;
    const name = ctx.args.positionals[0];
    if (o.all) {
      if (name !== undefined) throw new UsageError('give a session name or --all, not both');
      if (o.cwd !== undefined) throw new UsageError('--cwd goes with a session name, not --all');
      const engine = ctx.jobs();
      const results = await resumeAll({ controlPlane: ctx.controlPlane(), sessions: ctx.sessions(), ledger: engine.ledger });
      if (o.json) ctx.json(results);
      else if (results.length === 0) ctx.out('Nothing to resume: no session lost its pane.');
      for (const r of o.json ? [] : results) {
        const jobs = r.failed_jobs.length ? ` (open job${r.failed_jobs.length === 1 ? '' : 's'} ${r.failed_jobs.join(', ')} failed: agent_exited)` : '';
        const what = { resumed: 'resumed', needs_attention: 'needs attention', not_resumable: 'not resumable', failed: 'failed' }[r.outcome];
        ctx.out(`${r.name} (${r.agent}): ${what}: ${r.detail}${jobs}`);
      }
      const loops = new LoopStore(ctx.controlPlane().paths).list().filter((l) => l.status === 'running' && (!l.owner || !isAlive(l.owner.pid)));
      if (!o.json) for (const l of loops) ctx.out(`Loop ${l.id} was running: continue it with 'mam loop resume ${l.id}'.`);
      if (results.some((r) => r.outcome === 'failed' || r.outcome === 'not_resumable')) return ExitCode.failed;
      return results.some((r) => r.outcome === 'needs_attention') ? ExitCode.needsAttention : 0;
    }
    if (name === undefined) throw new UsageError("mam session resume: missing SESSION (or --all); see 'mam session resume --help'");
    const row = await ctx.sessions().resume(name, { baseDir: ctx.io.cwd, ...(o.cwd !== undefined ? { cwd: o.cwd } : {}) });
    if (o.json) ctx.json(row);
    else ctx.out(`Resumed session ${row.name} in pane ${row.target}${row.conversation_id ? ` (conversation ${row.conversation_id})` : ''}.\nAttach: ${attachHint(ctx, row)}`);
    return 0;
  },
});

const send = defineCommand({
  path: ['session', 'send'],
  summary: 'type one line into a running agent, checked like any delivery',
  positionals: NAME,
  options: { text: { kind: 'string', value: 'TEXT', required: true, description: 'the line to type (typed literally, never run by a shell)' }, ...JSON_OPTION },
  async run(ctx) {
    const name = ctx.args.positionals[0]!;
    const report = await ctx.sessions().send(name, ctx.args.options.text);
    if (ctx.args.options.json) ctx.json(report);
    else if (report.submitted === 'unconfirmed') ctx.out(`Typed into ${name}, but the screen did not react to Enter; check the pane.`);
    else ctx.out(`Sent to ${name}.`);
    return 0;
  },
});

export const sessionCommands: readonly Command[] = [list, create, stop, resume, sessionStatusCommand, send, sessionMonitor];
