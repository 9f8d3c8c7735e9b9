/**
 * The submitter's half of a remote job (`mam job submit --session remote:<runner>`): the job is
 * registered like any other, then handed to the runner as one signed, retained dispatch message,
 * and judged by the events the runner relays back — signed with the job's token, applied by this
 * workspace's JobBus like a local agent's, under the same timers.
 */
import { isoOn } from '../base/clock';
import { UsageError, errorMessage } from '../base/errors';
import type { ResolvedConfig } from '../config/settings';
import type { JobEngine } from '../jobs/jobEngine';
import { isTerminal, type JobRecord } from '../store/jobSchema';
import { REASONS } from '../jobs/lifecycle';
import { resolveBroker, type BrokerEndpoint } from '../messaging/brokerEndpoint';
import { uniqueClientId } from '../messaging/mqttClient';
import { publishOnce } from '../messaging/quickPublish';
import { cancelTopics, dispatchSecretOf, dispatchTopics, MAX_TASK_BYTES, signedCancel, signedDispatch } from './dispatchMessage';

export interface RemoteDispatchInput {
  /** The registered job (state `registered`, owned by this attempt). */
  job: JobRecord;
  runner: string;
  /** A session on the runner's host; the runner's own `--session` wins. */
  session?: string;
  task: string;
  appendix?: string;
  token: string;
  ownerToken: string;
}

export interface RemoteDispatchResult {
  job: JobRecord;
  /** The broker took the dispatch: T and the budget count from now. */
  delivered: boolean;
  /** Another attempt took the record before this one dispatched it. */
  claimedElsewhere: boolean;
}

/**
 * What can be known before anything is written (exit 64 otherwise): a usable dispatch secret, and
 * a task small enough to travel in the dispatch.
 */
export function checkRemoteSubmit(config: ResolvedConfig, task: string, appendix?: string): void {
  dispatchSecretOf(config);
  const bytes = Buffer.byteLength(task) + Buffer.byteLength(appendix ?? '');
  if (bytes > MAX_TASK_BYTES) throw new UsageError(`the task is ${bytes} bytes; a remote job's task travels in its dispatch message, whose limit is ${MAX_TASK_BYTES}`);
}

/**
 * Marks the job `dispatched` (before anything leaves, so it is never sent twice), publishes its
 * signed dispatch retained at QoS 1 — retained so that a runner that is offline now still gets it
 * — and records `delivered_at` once the broker acknowledged it.
 */
export async function dispatchRemote(engine: JobEngine, input: RemoteDispatchInput): Promise<RemoteDispatchResult> {
  const { controlPlane, config } = engine.deps;
  const { job, runner } = input;
  const secret = dispatchSecretOf(config);
  const endpoint = engine.endpoint;
  if (!endpoint || !job.timers) throw new Error('dispatchRemote: the engine is not connected or the job has no timers');
  const topic = dispatchTopics.job(runner, job.id);
  const dispatched = await engine.ledger.transition(job.id, 'dispatched', null, {
    when: (j) => j.state === 'registered' && j.owner?.token === input.ownerToken,
    fields: { dispatched_at: isoOn(engine.clock), delivery: 'pending', target: { kind: 'remote', name: runner }, dispatch_topic: topic },
  });
  if (!dispatched) return { job: controlPlane.jobs.require(job.id), delivered: false, claimedElsewhere: true };

  const payload = signedDispatch(
    {
      job_id: job.id,
      workspace_id: engine.workspaceId,
      runner,
      ...(input.session !== undefined ? { session: input.session } : {}),
      task: input.task,
      ...(input.appendix !== undefined ? { appendix: input.appendix } : {}),
      role: job.role,
      type: job.type,
      timers: job.timers,
      token: input.token,
    },
    secret,
    engine.clock,
  );
  try {
    await publishOnce(endpoint, uniqueClientId('dispatch'), [{ topic, payload: JSON.stringify(payload), retain: true }]);
  } catch (err) {
    // A publish that timed out may still have reached the broker: take it back, so that no runner
    // starts a job whose submitter has already given up on it.
    await clearDispatch(engine, runner, job.id);
    const failed = await engine.ledger.transition(job.id, 'cancelled', REASONS.notDelivered, {
      when: (j) => !isTerminal(j.state),
      fields: { delivery: 'failed' },
      note: `the dispatch to runner '${runner}' was not published: ${errorMessage(err)}`,
    });
    return { job: failed ?? controlPlane.jobs.require(job.id), delivered: false, claimedElsewhere: false };
  }
  const delivered = await engine.ledger.patch(job.id, { delivery: 'published', delivered_at: isoOn(engine.clock) });
  return { job: delivered, delivered: true, claimedElsewhere: false };
}

/**
 * Removes the job's retained dispatch (an empty retained publish on its own topic), so that a
 * runner started later does not find a job that has ended. The runner removes it too when it takes
 * the job; doing it twice is harmless. Never throws: a failure is only logged.
 */
export async function clearDispatch(engine: JobEngine, runner: string, jobId: string): Promise<void> {
  await clearDispatches(engine, runner, [jobId]);
}

/** clearDispatch for several jobs of one runner, on one connection. */
export async function clearDispatches(engine: JobEngine, runner: string, jobIds: readonly string[]): Promise<void> {
  const endpoint = engine.endpoint;
  if (!endpoint || jobIds.length === 0) return;
  try {
    await publishOnce(endpoint, uniqueClientId('dispatch'), jobIds.map((id) => ({ topic: dispatchTopics.job(runner, id), payload: '', retain: true })));
  } catch (err) {
    engine.deps.logger.warn(`job${jobIds.length > 1 ? 's' : ''} ${jobIds.join(', ')}: could not clear ${jobIds.length > 1 ? 'their retained dispatches' : 'its retained dispatch'} to '${runner}': ${errorMessage(err)}`);
  }
}

/**
 * Tells the runner that the job was cancelled here (`mam job cancel`): its retained dispatch is
 * taken back, in case no runner took it yet, and a signed cancel is left for the runner, which
 * cancels its mirror job and so frees its session. Never throws: the job is cancelled here
 * whatever happens, and a runner that cannot be told is named in a warning.
 */
export async function cancelRemote(engine: JobEngine, runner: string, jobId: string): Promise<void> {
  const { config, logger } = engine.deps;
  try {
    const endpoint = engine.endpoint ?? (await brokerIfRunning(engine));
    const secret = dispatchSecretOf(config);
    const cancel = signedCancel({ job_id: jobId, workspace_id: engine.workspaceId, runner }, secret, engine.clock);
    await publishOnce(endpoint, uniqueClientId('cancel'), [
      { topic: dispatchTopics.job(runner, jobId), payload: '', retain: true },
      { topic: cancelTopics.job(runner, jobId), payload: JSON.stringify(cancel), retain: true },
    ]);
  } catch (err) {
    logger.warn(`job ${jobId}: runner '${runner}' could not be told of the cancel (its agent finishes the turn): ${errorMessage(err)}`);
  }
}

/** The broker a submit used, without starting one: if it is not running, no runner hears it either. */
function brokerIfRunning(engine: JobEngine): Promise<BrokerEndpoint> {
  const { controlPlane, config, env, logger } = engine.deps;
  return resolveBroker({ workspace: controlPlane.workspace, config, env, start: false, logger });
}
