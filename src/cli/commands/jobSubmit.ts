import { printable } from '../../core/base/ids';
import { JOB_TYPES } from '../../core/store/jobSchema';
import { submitJob } from '../../core/jobs/submit';
import { parseTarget } from '../../core/jobs/targetAddress';
import { submitDiscussion } from '../../core/jobs/compositeJobs';
import { LoopRunner } from '../../core/loop/loopRunner';
import { ExitCode, UsageError } from '../../core/base/errors';
import { cancelJob, verifyJob } from '../../core/jobs/jobActions';
import { isOneOf } from '../args';
import { defineCommand, JSON_OPTION, type Command, type CommandContext } from '../command';
import { JOB_ID, JOB_OPTION, jobIdArg } from './jobId';
import { describeChange, describeJob } from './jobLine';

const submit = defineCommand({
  path: ['job', 'submit'],
  summary: 'delegate a job to a session and wait for its outcome',
  options: {
    session: { kind: 'string', value: 'TARGET', required: true, aliases: ['agent-session'], description: 'NAME, tmux:NAME, herdr:NAME, remote:RUNNER or remote:RUNNER/SESSION' },
    agent: { kind: 'string', value: 'AGENT', description: "the session's agent, as the seeds named it: checked against a local session MAM knows, else ignored; human: --session names a person (human:NAME)" },
    prompt: { kind: 'string', value: 'TEXT', description: 'the task (or use --brief)' },
    brief: { kind: 'string', value: 'FILE', description: 'a file holding the task (any language, any length)' },
    title: { kind: 'string', value: 'TEXT', description: 'a short title for lists (default: the first sentence of the task, at most 60 characters)' },
    role: { kind: 'string', value: 'ROLE', description: 'the role the agent plays in this job (worker, reviewer, …)' },
    type: { kind: 'string', value: 'TYPE', description: `${JOB_TYPES.join(', ')} (default direct)` },
    timeout: { kind: 'seconds', value: 'S', description: 'wall-clock budget (default MAM_JOB_TIMEOUT_S, 3600)' },
    'idle-timeout': { kind: 'seconds', value: 'S', description: 'K×N: seconds without an event before timing out (default 120)' },
    'start-timeout': { kind: 'seconds', value: 'S', description: 'T: seconds for the agent to publish started (default 180)' },
    heartbeat: { kind: 'seconds', value: 'N', description: 'the heartbeat period asked of the agent (default 30)' },
    'parent-job': { kind: 'string', value: 'ID', description: 'the job this one is part of' },
    'no-wait': { kind: 'boolean', description: 'return once the prompt is delivered' },
    reviewer: {
      kind: 'string', value: 'SESSION', aliases: ['reviewer-session'], besideAlias: 'reviewer-agent',
      description: "with --type loop: the session that reviews each iteration (the seeds' --reviewer AGENT --reviewer-session herdr:NAME works too: AGENT is checked like --agent)",
    },
    'max-iter': { kind: 'count', value: 'N', description: 'with --type loop: worker+reviewer iterations at most (default 3)' },
    with: { kind: 'string', value: 'SESSION', description: 'with --type discuss: the other session of the discussion' },
    'max-turns': { kind: 'count', value: 'N', description: 'with --type discuss: turns at most (default 6)' },
    ...JSON_OPTION,
  },
  details: [
    'Exit status: 0 completed; 1 failed or no started within T; 2 deadline or wall-clock timeout;',
    '3 broker unusable; 5 not delivered (session busy, target not found, claimed by another attempt); 64 bad input.',
    '',
    'The agent gets one short line naming the job and its brief (.mam/jobs/ID/brief.md), which holds the',
    'task and the exact `mam event` commands to run.',
    '',
    "The seeds' words work too: mam job submit --agent claude --agent-session herdr:w1 --prompt TEXT --role Worker",
    '  --type loop --reviewer codex --reviewer-session herdr:r1',
  ].join('\n'),
  async run(ctx) {
    const o = ctx.args.options;
    const type = o.type ?? 'direct';
    if (!isOneOf(JOB_TYPES, type)) throw new UsageError(`--type must be one of ${JOB_TYPES.join(', ')}`);
    for (const [flag, forType] of [['reviewer', 'loop'], ['max-iter', 'loop'], ['with', 'discuss'], ['max-turns', 'discuss']] as const) {
      if (o[flag] !== undefined && type !== forType) throw new UsageError(`--${ctx.args.aliasUsed[flag] ?? flag} goes with --type ${forType}`);
    }
    if (type !== 'direct' && o['no-wait']) throw new UsageError(`--no-wait is not available for --type ${type}: its turns are run by this command`);
    // The seeds named a person with `--agent human --agent-session NAME`: the job goes to human:NAME.
    const session = o.agent !== undefined ? await targetOf(ctx, 'agent', o.agent, o.session, ctx.args.aliasUsed.session ?? 'session') : o.session;
    // The parser keeps --reviewer AGENT aside only beside --reviewer-session, so the reviewer is there.
    const reviewer = o['reviewer-agent'] !== undefined && o.reviewer !== undefined ? await targetOf(ctx, 'reviewer', o['reviewer-agent'], o.reviewer, 'reviewer-session') : o.reviewer;
    const engine = ctx.jobs();
    const json = Boolean(o.json);
    // Only the jobs this command registers (its own, and a discussion's or loop's turns): the
    // engine also learns of every other job of the workspace, which is not what was asked about.
    const own = new Set<string>();
    engine.ledger.onDidChangeJob(({ job, previous, registered }) => {
      if (registered) own.add(job.id);
      if (!json && own.has(job.id) && job.state !== previous) ctx.io.stderr(describeChange(job, previous));
    });
    // A `--type loop` job is a review loop with one reviewer, saved and resumable like any (`mam loop resume`).
    const submitLoop: typeof submitDiscussion = (e, req) => {
      const runner = new LoopRunner(e, ctx.logger);
      runner.onDidProgress(({ message }) => !json && ctx.io.stderr(`mam: ${message}\n`));
      return runner.submitLoopJob(req);
    };
    const submit = type === 'direct' ? submitJob : type === 'discuss' ? submitDiscussion : submitLoop;
    const result = await submit(engine, {
      session,
      ...(reviewer !== undefined ? { reviewer } : {}),
      ...(o['max-iter'] !== undefined ? { maxIter: o['max-iter'] } : {}),
      ...(o.with !== undefined ? { partner: o.with } : {}),
      ...(o['max-turns'] !== undefined ? { maxTurns: o['max-turns'] } : {}),
      wait: !o['no-wait'],
      baseDir: ctx.io.cwd,
      ...(o.prompt !== undefined ? { prompt: o.prompt } : {}),
      ...(o.brief !== undefined ? { briefFile: o.brief } : {}),
      ...(o.title !== undefined ? { title: o.title } : {}),
      ...(o.role !== undefined ? { role: o.role } : {}),
      ...(o.type !== undefined ? { type } : {}),
      ...(o.timeout !== undefined ? { timeoutS: o.timeout } : {}),
      ...(o['idle-timeout'] !== undefined ? { idleTimeoutS: o['idle-timeout'] } : {}),
      ...(o['start-timeout'] !== undefined ? { startTimeoutS: o['start-timeout'] } : {}),
      ...(o.heartbeat !== undefined ? { heartbeatS: o.heartbeat } : {}),
      ...(o['parent-job'] !== undefined ? { parentJob: o['parent-job'] } : {}),
      // Someone's command (a person's, or an orchestrating agent's shell): a child job is its parent's.
      ...(o['parent-job'] === undefined ? { origin: { kind: 'person', by: 'cli' } } : {}),
    });
    const job = result.job;
    if (json) ctx.json({ ...job, exit_code: result.exitCode });
    else ctx.out(describeJob(job));
    return result.exitCode;
  },
});

/** The seeds' product names for the agents MAM knows by a shorter one. */
const SEED_AGENT_NAMES: Readonly<Record<string, string>> = { 'claude-code': 'claude', 'hermes-agent': 'hermes', 'agy-agent': 'agy', 'grok-build': 'grok' };

/**
 * The seeds named the agent beside its session (`--agent claude --agent-session herdr:w1`). The
 * agent is the session's own, so the flag decides nothing; but a local session MAM knows that runs
 * another agent means the caller meant another session, and nothing is sent. For a remote runner,
 * a person, or a session not registered here, there is nothing to check it against. The agent
 * `human` names a person: `--agent human --agent-session alice` is the target `human:alice`.
 */
async function targetOf(ctx: CommandContext, flag: string, agent: string, target: string, sessionFlag: string): Promise<string> {
  const where = parseTarget(target);
  const named = agent.trim().toLowerCase();
  if (named === 'human') {
    if (where.kind === 'human') return target;
    // The seeds wrote a person's session as any other (`herdr:alice`): the name is the person's.
    if (where.kind === 'local') return `human:${where.name}`;
    throw new UsageError(`--${flag} human names a person: give --${sessionFlag} NAME (or human:NAME), not ${printable(target, 60)}`);
  }
  if (where.kind !== 'local') return target;
  const row = await ctx.controlPlane().sessions.get(where.name);
  if (!row || (SEED_AGENT_NAMES[named] ?? named) === row.agent) return target;
  throw new UsageError(`--${flag} ${printable(agent, 40)}: session ${row.name} runs ${row.agent}, not ${printable(agent, 40)}; name the session that runs it, or leave --${flag} out`);
}

const cancel = defineCommand({
  path: ['job', 'cancel'],
  summary: 'cancel an open job (its session is freed; late events are kept)',
  positionals: JOB_ID,
  options: { ...JOB_OPTION, ...JSON_OPTION },
  async run(ctx) {
    const { job, changed } = await cancelJob(ctx.jobs(), jobIdArg(ctx, 'cancel'));
    if (ctx.args.options.json) ctx.json(job);
    else if (!changed) ctx.out(`${job.id} had already ended: ${job.state}${job.reason ? ` (${job.reason})` : ''}.`);
    else {
      const where = job.target?.kind === 'remote' ? `runner ${job.target.name}'s session` : `session ${job.target?.name ?? job.session}`;
      ctx.out(`Cancelled ${job.id}: ${where} takes new jobs again; the agent may still finish its current turn.`);
    }
    return 0;
  },
});

const verify = defineCommand({
  path: ['job', 'verify'],
  summary: "run a validation command against a job's artefacts and record the result",
  positionals: JOB_ID,
  options: {
    ...JOB_OPTION,
    validate: { kind: 'string', value: 'CMD', required: true, description: 'the command (split into words, never run by a shell); it gets MAM_JOB_ID, MAM_JOB_REPORT, MAM_JOB_DIR' },
    ...JSON_OPTION,
  },
  details: 'Exit status: 0 when the command succeeded, 1 when it failed.',
  async run(ctx) {
    const result = await verifyJob(ctx.jobs(), jobIdArg(ctx, 'verify'), ctx.args.options.validate);
    if (ctx.args.options.json) ctx.json(result);
    else ctx.out(`${result.passed ? 'passed' : 'failed'}: ${result.command.join(' ')} exited ${result.exit_code}${result.output_tail ? `\n${result.output_tail}` : ''}`);
    return result.passed ? ExitCode.ok : ExitCode.failed;
  },
});

export const jobActionCommands: readonly Command[] = [submit, cancel, verify];
