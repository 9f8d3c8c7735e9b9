import { waitForJobs } from '../../core/jobs/waitJobs';
import { defineCommand, JSON_OPTION } from '../command';
import { describeChange, describeJob } from './jobLine';

/** `mam job wait`: the end of jobs submitted with --no-wait (or by anyone else), one or all. */
export const waitCommand = defineCommand({
  path: ['job', 'wait'],
  summary: 'wait for jobs to end: all of them, or the first with --any',
  positionals: [{ name: 'job', description: 'a job ID; name several to wait for each', required: true, variadic: true }],
  options: {
    any: { kind: 'boolean', description: 'return when the first of them ends' },
    timeout: { kind: 'seconds', value: 'S', description: 'give up after S seconds (the jobs go on; exit 75)' },
    ...JSON_OPTION,
  },
  details: [
    'Exit status as the job table, for the first job to end with --any, else 0 when every job',
    'completed, or the status of the first job named that did not: 1 failed; 2 timeout; 5 not',
    'delivered; 3 broker unusable with a job still open; 64 an unknown job; 75 --timeout passed',
    'with the jobs still open (wait again).',
    '',
    'Prints one line per job named (--json: {exit_code, timed_out, ended, jobs}); while it waits,',
    "each job's state changes go to stderr. It only watches: stopping it changes no job.",
  ].join('\n'),
  async run(ctx) {
    const o = ctx.args.options;
    const json = Boolean(o.json);
    const result = await waitForJobs(ctx.jobs(), {
      ids: ctx.args.positionals,
      any: Boolean(o.any),
      ...(o.timeout !== undefined ? { timeoutS: o.timeout } : {}),
      onChange: ({ job, previous }) => !json && ctx.io.stderr(describeChange(job, previous)),
    });
    if (json) {
      ctx.json({ exit_code: result.exitCode, timed_out: result.timedOut, ended: result.ended, jobs: result.jobs });
    } else {
      for (const job of result.jobs) ctx.out(describeJob(job));
      if (result.timedOut) ctx.io.stderr(`mam: still open after ${o.timeout} s: ${result.jobs.filter((j) => !result.ended.includes(j.id)).map((j) => j.id).join(', ')}\n`);
    }
    return result.exitCode;
  },
});
