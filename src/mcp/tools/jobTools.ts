import { ExitCode, UsageError } from '../../core/base/errors';
import { isTerminal, type JobRecord } from '../../core/store/jobSchema';
import { describeJob } from '../../core/jobs/formatLog';
import { submitJob } from '../../core/jobs/submit';
import { waitForJobs, type JobWaitResult } from '../../core/jobs/waitJobs';
import { cancelJob } from '../../core/jobs/jobActions';
import { settleUsage } from '../../core/jobs/jobUsage';
import { paneTextFile, readPaneText } from '../../core/jobs/paneText';
import type { Core } from '../../core/core';
import { publicJob } from '../records';
import { defineTool, type Tool, type ToolCall } from '../tool';
import { arg, input } from '../toolInput';

const JOB = arg.text.required({ description: 'the job ID (j-…)', max: 96 });

/** A job's record, its usage read again first where it may still be settling (docs/usage.md); read-only where the workspace is untrusted. */
async function current(core: Core, id: string): Promise<JobRecord> {
  const job = core.controlPlane.jobs.require(id);
  return core.trust.trusted ? (await settleUsage(core.jobs, [job]))[0]! : job;
}

/**
 * Waits as `mam job wait` does, each state change a progress notification, from `since` (the state
 * a submit just announced) or else from the state each job is in when the wait begins, announced
 * first; a cancelled call stops the wait only.
 */
function wait(core: Core, ids: readonly string[], any: boolean, timeoutS: number | undefined, call: ToolCall, since?: JobRecord): Promise<JobWaitResult> {
  return waitForJobs(core.jobs, {
    ids, any, signal: call.signal, ...(timeoutS !== undefined ? { timeoutS } : {}),
    ...(since ? { since: new Map([[since.id, since.state]]) } : { onStart: (jobs) => jobs.forEach((job) => call.progress(`job ${job.id}: ${job.state}`)) }),
    onChange: ({ job, previous }) => call.progress(`job ${job.id}: ${previous ?? 'new'} → ${job.state}${job.reason ? ` (${job.reason})` : ''}`),
  });
}

function waitAnswer(result: JobWaitResult): { data: Record<string, unknown>; text: string } {
  const open = result.jobs.filter((j) => !result.ended.includes(j.id)).map((j) => j.id);
  return {
    data: { exit_code: result.exitCode, timed_out: result.timedOut, ended: result.ended, jobs: result.jobs.map(publicJob) },
    text: [...result.jobs.map(describeJob), ...(result.timedOut ? [`still open: ${open.join(', ')} (wait again)`] : [])].join('\n'),
  };
}

const submit = defineTool({
  name: 'job_submit',
  title: 'Delegate a job',
  description: [
    'Delegates a task to a session (NAME, tmux:NAME, herdr:NAME, remote:RUNNER[/SESSION] or human:NAME): registers the job, writes its brief,',
    'types one line into the agent, and returns once it is delivered — the job then runs on, judged by its own events and timers.',
    'With wait: true it also waits for the outcome (progress notifications on each state change); or call job_wait later.',
  ].join(' '),
  input: input({
    session: arg.text.required({ description: 'where the job goes: NAME, tmux:NAME, herdr:NAME, remote:RUNNER[/SESSION], human:NAME', max: 140 }),
    prompt: arg.text({ description: 'the task (or brief_file)', max: 200_000 }),
    brief_file: arg.text({ description: 'a file holding the task, relative to the workspace (or prompt)', max: 4096 }),
    title: arg.text({ description: "a short title for lists (default: the task's first sentence)" }),
    role: arg.text({ description: 'the role the agent plays in this job (worker, reviewer, …)', max: 32 }),
    timeout_s: arg.seconds({ description: 'wall-clock budget in seconds (default MAM_JOB_TIMEOUT_S, 3600)' }),
    idle_timeout_s: arg.seconds({ description: 'seconds without an event before the job times out (default K×N, 120)' }),
    start_timeout_s: arg.seconds({ description: 'seconds for the agent to report started (default 180)' }),
    heartbeat_s: arg.seconds({ description: 'the heartbeat period asked of the agent (default 30)' }),
    parent_job: arg.text({ description: 'the job this one is part of', max: 96 }),
    wait: arg.flag({ description: 'wait for the outcome too (default false: return once delivered)' }),
    wait_timeout_s: arg.seconds({ description: "with wait: stop waiting after this many seconds (the job goes on); keep it under your client's tool timeout" }),
  }),
  acts: true,
  hints: { destructiveHint: false, openWorldHint: false },
  cli: 'mam job submit --session S --prompt TEXT --no-wait --json (with wait: then mam job wait ID)',
  async run(a, call) {
    const { core } = call;
    if (a.wait_timeout_s !== undefined && a.wait !== true) throw new UsageError('wait_timeout_s goes with wait: true');
    const submitted = await submitJob(core.jobs, {
      session: a.session, wait: false, baseDir: core.workspace,
      ...(a.prompt !== undefined ? { prompt: a.prompt } : {}), ...(a.brief_file !== undefined ? { briefFile: a.brief_file } : {}),
      ...(a.title !== undefined ? { title: a.title } : {}), ...(a.role !== undefined ? { role: a.role } : {}),
      ...(a.timeout_s !== undefined ? { timeoutS: a.timeout_s } : {}), ...(a.idle_timeout_s !== undefined ? { idleTimeoutS: a.idle_timeout_s } : {}),
      ...(a.start_timeout_s !== undefined ? { startTimeoutS: a.start_timeout_s } : {}), ...(a.heartbeat_s !== undefined ? { heartbeatS: a.heartbeat_s } : {}),
      ...(a.parent_job !== undefined ? { parentJob: a.parent_job } : { origin: { kind: 'person', by: 'mcp' } }),
    });
    const job = submitted.job;
    call.progress(`job ${job.id}: ${job.state}`);
    // Not delivered (no such target, busy, claimed elsewhere): recorded as the CLI records it, and an error for the caller.
    if (submitted.exitCode !== ExitCode.ok) {
      return { isError: true, data: { error: { code: job.reason ?? 'not_delivered', message: describeJob(job), exit_code: submitted.exitCode }, job: publicJob(job) }, text: describeJob(job) };
    }
    if (a.wait !== true || isTerminal(job.state)) return { data: { job: publicJob(job), exit_code: submitted.exitCode }, text: describeJob(job) };
    const result = await wait(core, [job.id], false, a.wait_timeout_s, call, job);
    const answer = waitAnswer(result);
    return { data: { job: publicJob(result.jobs[0]!), exit_code: result.exitCode, timed_out: result.timedOut }, text: answer.text };
  },
});

const waitTool = defineTool({
  name: 'job_wait',
  title: 'Wait for jobs',
  description: [
    'Waits for jobs to end: all of them, or the first with any: true; timeout_s gives up (the jobs go on: wait again).',
    "Each state change is a progress notification; cancelling the call stops the wait, never a job. exit_code as the CLI's job table",
    "(0 completed, 1 failed, 2 timeout, 5 not delivered, 75 still open when the wait ran out). Keep timeout_s under your client's tool timeout.",
  ].join(' '),
  input: input({
    jobs: arg.texts.required({ description: 'the job IDs, in the order to report them', max: 100, itemMax: 96 }),
    any: arg.flag({ description: 'return when the first of them ends (default: when all have)' }),
    timeout_s: arg.seconds({ description: 'give up after this many seconds (the jobs go on)' }),
  }),
  // It changes nothing, but it connects to the broker (starting the embedded one) and applies the events it hears.
  acts: true,
  hints: { readOnlyHint: true },
  cli: 'mam job wait ID… [--any] [--timeout S] --json',
  async run(a, call) {
    return waitAnswer(await wait(call.core, a.jobs, a.any === true, a.timeout_s, call));
  },
});

const status = defineTool({
  name: 'job_status',
  title: "A job's record",
  description: "One job's record: state, reason, the agent's last detail, timers, delivery, report, tokens, and how many events it logged.",
  input: input({ job: JOB }),
  acts: false,
  hints: { readOnlyHint: true },
  cli: 'mam job status ID --json',
  async run(a, { core }) {
    const job = await current(core, a.job);
    const events = core.controlPlane.audit.readEntries(job.id).entries.filter((e) => e.type === 'event').length;
    return { data: { job: publicJob(job), events }, text: describeJob(job) };
  },
});

const logs = defineTool({
  name: 'job_logs',
  title: "A job's log",
  description: "A job's audit log: every accepted event and state transition, oldest first (last: only the newest N). pane: true gives instead the text its pane showed, kept when it ended.",
  input: input({
    job: JOB,
    pane: arg.flag({ description: "the pane's text from the job's line to its end, instead of the log" }),
    last: arg.count({ description: 'only the newest N entries', min: 1, max: 10_000 }),
  }),
  acts: false,
  hints: { readOnlyHint: true },
  cli: 'mam job logs ID [--pane] --json',
  async run(a, { core }) {
    const cp = core.controlPlane;
    const job = cp.jobs.require(a.job);
    if (a.pane === true) {
      const text = readPaneText(cp.paths, job.id);
      const why = text !== undefined ? null : isTerminal(job.state) ? 'its pane was gone (or it never reached one) when it ended' : `it is ${job.state}; its pane text is kept when it ends`;
      return { data: { job: job.id, file: text === undefined ? null : paneTextFile(cp.paths, job.id), text: text ?? null, why }, text: text === undefined ? `No pane text kept for ${job.id}: ${why}.` : `${text.split('\n').length} lines of pane text for ${job.id}.` };
    }
    const { entries, badLines } = cp.audit.readEntries(job.id);
    const shown = a.last !== undefined ? entries.slice(-a.last) : entries;
    return { data: { job: job.id, entries: shown, total: entries.length, unreadable_lines: badLines }, text: `${shown.length} of ${entries.length} log entries of ${job.id}.` };
  },
});

const cancel = defineTool({
  name: 'job_cancel',
  title: 'Cancel a job',
  description: 'Cancels an open job: its session takes new jobs again (the agent may still finish its turn); an ended job is left as it is.',
  input: input({ job: JOB }),
  acts: true,
  hints: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
  cli: 'mam job cancel ID --json',
  async run(a, { core }) {
    const { job, changed } = await cancelJob(core.jobs, a.job);
    return { data: { job: publicJob(job), changed }, text: changed ? `Cancelled ${job.id}.` : `${job.id} had already ended: ${job.state}${job.reason ? ` (${job.reason})` : ''}.` };
  },
});

export const jobTools: readonly Tool[] = [submit, waitTool, status, logs, cancel];
