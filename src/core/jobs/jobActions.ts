import * as fs from 'node:fs';
import { isoOn } from '../base/clock';
import { exec, ProgramNotFoundError } from '../base/exec';
import { UsageError } from '../base/errors';
import { splitWords } from '../base/shellWords';
import type { JobEngine } from './jobEngine';
import { isTerminal, type JobRecord, type VerifyResult } from '../store/jobSchema';
import { REASONS } from './lifecycle';

/**
 * Cancels an open job; an ended one is left as it is. The session is freed by the ledger; the
 * job's target is told (a remote runner frees its session too).
 */
export async function cancelJob(engine: JobEngine, jobId: string): Promise<{ job: JobRecord; changed: boolean }> {
  engine.trust.require('cancel a job');
  const current = engine.deps.controlPlane.jobs.require(jobId);
  if (isTerminal(current.state)) return { job: current, changed: false };
  const job = await engine.ledger.transition(jobId, 'cancelled', REASONS.cancelledByUser, { when: (j) => !isTerminal(j.state), note: 'cancelled by the user' });
  if (!job) return { job: engine.deps.controlPlane.jobs.require(jobId), changed: false };
  if (job.target) await engine.deps.targets.of(job.target.kind).cancel(engine, job);
  return { job, changed: true };
}

export type { VerifyResult };

/**
 * Runs a validation command (split into words, no shell) in the job's folder, with the job's ID,
 * report and folder in its environment, and records the result on the job and in its audit log.
 */
export async function verifyJob(engine: JobEngine, jobId: string, commandLine: string): Promise<VerifyResult> {
  engine.trust.require('run a validation command');
  const { controlPlane } = engine.deps;
  const job = controlPlane.jobs.require(jobId);
  const command = splitWords(commandLine);
  if (command.length === 0) throw new UsageError('--validate names no command');
  const session = job.target?.kind === 'local' ? await controlPlane.sessions.get(job.target.name) : undefined;
  const cwd = session && fs.existsSync(session.cwd) ? session.cwd : controlPlane.workspace;
  let exitCode: number;
  let output: string;
  try {
    const r = await exec(command[0]!, command.slice(1), {
      cwd,
      env: { MAM_JOB_ID: job.id, MAM_JOB_REPORT: job.report ?? '', MAM_JOB_DIR: controlPlane.paths.auditJobDir(job.id), MAM_WORKSPACE: controlPlane.workspace },
      timeoutMs: 30 * 60_000,
    });
    exitCode = r.exitCode;
    output = `${r.stdout}${r.stderr}`;
  } catch (err) {
    if (err instanceof ProgramNotFoundError) throw new UsageError(`--validate: ${err.message}`);
    throw err;
  }
  const result: VerifyResult = {
    job_id: job.id,
    command,
    exit_code: exitCode,
    passed: exitCode === 0,
    at: isoOn(engine.clock),
    output_tail: output.trim().split('\n').slice(-20).join('\n'),
  };
  await controlPlane.jobs.withJobLock(job.id, () => controlPlane.audit.append(job.id, { type: 'note', at: result.at, note: 'verify', command, exit_code: exitCode, passed: result.passed }));
  await engine.ledger.patch(job.id, { verify: result });
  return result;
}
