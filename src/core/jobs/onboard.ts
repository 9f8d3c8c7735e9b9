import { ExitCode } from '../base/errors';
import type { JobEngine } from './jobEngine';
import type { JobRecord } from '../store/jobSchema';
import { REASONS } from './lifecycle';
import { submitJob } from './submit';

const ONBOARDING_TASK = `This is your onboarding to Multi-Agent Mux (MAM), which will send you jobs in this terminal.

Each job arrives as one line: \`MAM job <id>: read the brief at <path> and follow it exactly.\`
The brief holds the task and the exact commands to report on it. MAM judges a job only by those
commands' events — never by what is on your screen — so:

- run the \`started\` command as soon as you read a brief, before doing anything else;
- run \`completed\` (or \`error\`) when you are done, exactly once;
- run \`permission_required\` before you wait for a human.

To finish this onboarding, just run the \`started\` command and then the \`completed\` command below,
with the detail "onboarded".`;

export interface OnboardResult {
  job: JobRecord;
  /** Onboarded, the onboarding job failed, or it did not finish in time (SPEC §4). */
  exitCode: (typeof ExitCode)['ok' | 'onboardFailed' | 'onboardTimeout'];
}

/**
 * `session create --onboard`: delegates the onboarding job that teaches the agent the event
 * protocol, and waits for it. The session stays whatever happens.
 */
export async function onboardSession(engine: JobEngine, session: string, options: { timeoutS?: number; startTimeoutS?: number } = {}): Promise<OnboardResult> {
  engine.trust.require('onboard an agent');
  const { job } = await submitJob(engine, {
    session,
    prompt: ONBOARDING_TASK,
    role: 'onboarding',
    wait: true,
    baseDir: engine.deps.controlPlane.workspace,
    ...(options.timeoutS !== undefined ? { timeoutS: options.timeoutS } : {}),
    ...(options.startTimeoutS !== undefined ? { startTimeoutS: options.startTimeoutS } : {}),
    origin: { kind: 'onboarding', by: session },
  });
  if (job.state === 'completed') return { job, exitCode: ExitCode.ok };
  const late = job.state === 'timeout' || job.reason === REASONS.agentBlocked;
  return { job, exitCode: late ? ExitCode.onboardTimeout : ExitCode.onboardFailed };
}
