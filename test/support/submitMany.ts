/**
 * Submits many jobs from one process — one engine, one broker connection — as `mam job submit
 * --no-wait` does for one: for tests that need dozens of jobs at once without dozens of cold CLI
 * processes (test/faults/manyHosts.test.ts runs it on a host in a network namespace).
 *
 *   node -r esbuild-register test/support/submitMany.ts WORKSPACE JOBS_JSON
 *
 * JOBS_JSON: [{ "session": "remote:R1/S1", "prompt": "…", "heartbeatS"?, "idleTimeoutS"?,
 * "startTimeoutS"?, "timeoutS"? }, …]. Prints one line of JSON: [{ "id", "session", "state",
 * "exitCode" }, …] in the order given; exits 0 once every job was handed over (or refused).
 * The environment is the workspace's, as for `mam`; MAM_NO_WARDEN stops each submit from
 * spawning a `mam monitor --until-idle` of its own (the test runs one judge itself).
 */
import * as path from 'node:path';
import { MemoryLogger } from '../../src/core/base/log';
import { buildCore } from '../../src/core/core';
import { submitJob } from '../../src/core/jobs/submit';

interface JobSpec {
  session: string;
  prompt: string;
  heartbeatS?: number;
  idleTimeoutS?: number;
  startTimeoutS?: number;
  timeoutS?: number;
}

async function main(): Promise<void> {
  const [workspace, json] = process.argv.slice(2);
  if (!workspace || !json) throw new Error('usage: submitMany.ts WORKSPACE JOBS_JSON');
  const specs = JSON.parse(json) as JobSpec[];
  const logger = new MemoryLogger();
  const core = buildCore(workspace, { env: process.env, logger, cliPath: path.join(__dirname, '../../dist/cli.js') });
  try {
    await core.jobs.connect();
    // Ten at a time, as ten people or agents submitting at once would: each registers its record and
    // publishes its dispatch, and the runners take them as they come.
    const out: Array<{ id: string; session: string; state: string; exitCode: number }> = [];
    for (let i = 0; i < specs.length; i += 10) {
      const batch = specs.slice(i, i + 10);
      const results = await Promise.all(batch.map((spec) => submitJob(core.jobs, { ...spec, wait: false, baseDir: workspace })));
      results.forEach(({ job, exitCode }, j) => out.push({ id: job.id, session: batch[j]!.session, state: job.state, exitCode }));
    }
    await core.jobs.flush();
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    core.dispose();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`submitMany: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
