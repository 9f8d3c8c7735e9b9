import { printable, printableLines } from '../../core/base/ids';
import { paneTextFile, readPaneText } from '../../core/jobs/paneText';
import { ExitCode, UsageError } from '../../core/base/errors';
import { isTerminal, JOB_STATES } from '../../core/store/jobSchema';
import { formatEntry } from '../../core/jobs/formatLog';
import { settleUsage } from '../../core/jobs/jobUsage';
import { formatUsage } from '../../core/usage/format';
import { workspacePrices } from '../../core/usage/prices';
import { defineCommand, JSON_OPTION, type Command } from '../command';
import { isOneOf } from '../args';
import { dash, since, table } from '../output';
import { JOB_ID, JOB_OPTION, jobIdArg } from './jobId';
import { jobActionCommands } from './jobSubmit';
import { waitCommand } from './jobWait';

const list = defineCommand({
  path: ['job', 'list'],
  summary: 'list jobs, newest first',
  options: {
    ...JSON_OPTION,
    state: { kind: 'string', value: 'STATE', description: `only jobs in this state (${JOB_STATES.join(', ')})` },
    session: { kind: 'string', value: 'NAME', description: 'only jobs for this session' },
  },
  async run(ctx) {
    const state = ctx.args.options.state;
    if (state !== undefined && !isOneOf(JOB_STATES, state)) {
      throw new UsageError(`--state must be one of ${JOB_STATES.join(', ')}`);
    }
    const session = ctx.args.options.session;
    const { jobs, unreadable } = ctx.controlPlane().jobs.list();
    for (const u of unreadable) ctx.logger.warn(`skipped .mam/jobs/${u.file}: ${u.why}`);
    // What a job spent may still be settling (docs/usage.md): read it again before showing it.
    const shown = await settleUsage(ctx.jobs(), jobs.filter((j) => (state === undefined || j.state === state) && (session === undefined || sessionName(j.session) === session)));
    if (ctx.args.options.json) {
      ctx.json(shown);
      return 0;
    }
    if (shown.length === 0) {
      ctx.out(jobs.length === 0 ? 'No jobs in this workspace.' : 'No jobs match.');
      return 0;
    }
    for (const line of table(shown, [
      ['ID', (j) => j.id],
      ['SESSION', (j) => j.session],
      ['TYPE', (j) => j.type],
      ['STATE', (j) => j.state],
      ['REASON', (j) => dash(j.reason)],
      ['AGE', (j) => since(j.created_at)],
      ['DETAIL', (j) => truncate(dash(j.detail === null ? null : printable(j.detail, 200)), 60)],
    ])) {
      ctx.out(line);
    }
    return 0;
  },
});

const status = defineCommand({
  path: ['job', 'status'],
  summary: "show one job's record and latest status",
  options: { ...JOB_OPTION, ...JSON_OPTION },
  positionals: JOB_ID,
  async run(ctx) {
    const id = jobIdArg(ctx, 'status');
    const cp = ctx.controlPlane();
    const job = (await settleUsage(ctx.jobs(), [cp.jobs.require(id)]))[0]!;
    const audit = cp.audit.readEntries(id);
    if (ctx.args.options.json) {
      ctx.json({ job, status: cp.audit.readStatus(id) ?? null, events: audit.entries.filter((e) => e.type === 'event').length });
      return 0;
    }
    const rows: Array<[string, unknown]> = [
      ['job', job.id],
      ['session', job.session],
      ['type', job.type],
      ['role', job.role],
      ['state', job.state],
      ['reason', job.reason],
      ['created', `${job.created_at} (${since(job.created_at)} ago)`],
      ['updated', `${job.updated_at} (${since(job.updated_at)} ago)`],
      ['last seq', job.seq],
      ['parent job', job.parent_job],
      ['detail', job.detail === null ? null : printable(job.detail, 2000)],
      ...(job.why ? [['why', printable(job.why, 2000)] satisfies [string, unknown]] : []),
      ['delivery', job.delivery],
      ['timers', job.timers ? `T ${job.timers.start_timeout_s}s, idle ${job.timers.idle_timeout_s}s, budget ${job.timers.timeout_s}s, heartbeat ${job.timers.heartbeat_s}s` : null],
      ['brief', job.brief],
      ['report', job.report],
      ['events', audit.entries.filter((e) => e.type === 'event').length],
      ['tokens', formatUsage(job.usage, workspacePrices(cp.paths, (m) => ctx.logger.warn(m))) ?? null],
      ...(job.late_events?.length ? [['late', job.late_events.map((l) => `${l.event} (seq ${l.seq}) at ${l.at}`).join('; ')] satisfies [string, unknown]] : []),
    ];
    for (const [k, v] of rows) ctx.out(`${k.padEnd(10)}  ${dash(v)}`);
    return 0;
  },
});

const logs = defineCommand({
  path: ['job', 'logs'],
  summary: "print a job's audit log: every accepted event and state transition (--pane: what its pane showed)",
  options: {
    ...JOB_OPTION,
    pane: { kind: 'boolean', description: "the text of the job's pane from its line to its end (kept when it ended; the last 5,000 lines at most)" },
    ...JSON_OPTION,
  },
  positionals: JOB_ID,
  details: 'Exit status: 0; 1 with --pane when no pane text was kept (the job is open, or its pane was gone); 64 an unknown job.',
  async run(ctx) {
    const id = jobIdArg(ctx, 'logs');
    const cp = ctx.controlPlane();
    const job = cp.jobs.require(id);
    if (ctx.args.options.pane) {
      const text = readPaneText(cp.paths, id);
      if (ctx.args.options.json) ctx.json({ job: id, file: text === undefined ? null : paneTextFile(cp.paths, id), text: text ?? null });
      else if (text !== undefined) ctx.io.stdout(printableLines(text));
      else ctx.io.stderr(`mam: no pane text kept for ${id}: ${isTerminal(job.state) ? 'its pane was gone (or it never reached one) when it ended' : `it is ${job.state}; its pane text is kept when it ends`}\n`);
      return text === undefined ? ExitCode.failed : ExitCode.ok;
    }
    const { entries, badLines } = cp.audit.readEntries(id);
    if (badLines > 0) ctx.logger.warn(`${badLines} unreadable line(s) in the audit log of ${id}`);
    if (ctx.args.options.json) {
      ctx.json(entries);
      return 0;
    }
    if (entries.length === 0) ctx.out(`No events logged for ${id} yet.`);
    for (const e of entries) ctx.out(formatEntry(e));
    return 0;
  },
});

function sessionName(target: string): string {
  const colon = target.indexOf(':');
  return colon >= 0 ? target.slice(colon + 1) : target;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export const jobCommands: readonly Command[] = [...jobActionCommands, waitCommand, list, status, logs];
