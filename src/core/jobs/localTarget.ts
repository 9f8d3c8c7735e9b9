import { isoOn } from '../base/clock';
import { errorMessage } from '../base/errors';
import { waitForEvent } from '../base/emitter';
import { DeliveryError } from '../mux/inject';
import { isTerminal, type JobRecord } from '../store/jobSchema';
import { injectedLine } from './brief';
import { recordUsage } from './jobUsage';
import type { JobEngine } from './jobEngine';
import type { Delivery, JobTarget } from './jobTarget';
import { REASONS } from './lifecycle';

/** A session on this host (`NAME`, `tmux:NAME`, `herdr:NAME`): its one-line prompt is typed into its pane. */
export const localTarget: JobTarget = {
  kind: 'local',
  check: () => undefined,
  deliver: (engine, { job, ownerToken, address }) => deliverJob(engine, { id: job.id, ownerToken, briefPath: job.brief!, target: address }),
  // The ledger frees the session; the agent finishes its turn and its late events are kept.
  cancel: async () => undefined,
  // What the job spent, as far as the agent's store shows it now (jobUsage.ts settles the rest).
  afterEnd: async (engine, job) => void (await recordUsage(engine, job)),
};

/**
 * Claims the session, marks the job `dispatched` and types its one-line prompt, exactly once: the
 * delivery of a local job, also used by `mam remote run` for the mirror of a remote job.
 * `delivered: false` means the job has ended (or belongs to another attempt).
 */
export async function deliverJob(
  engine: JobEngine,
  input: { id: string; ownerToken: string; briefPath: string; target: { name: string; mux?: 'tmux' | 'herdr' } },
): Promise<Delivery> {
  const { controlPlane, config, sessions } = engine.deps;
  const { id, briefPath, target } = input;
  const notDelivered = (job: JobRecord, claimedElsewhere = false): Delivery => ({ job, delivered: false, claimedElsewhere });
  // The session must exist, match the asked multiplexer, and run.
  const row = await controlPlane.sessions.get(target.name);
  if (!row || (target.mux && row.mux !== target.mux)) return notDelivered(await cancel(engine, id, REASONS.targetNotFound, `no ${target.mux ?? ''} session '${target.name}'`.replace('  ', ' ')));
  if (row.status !== 'running' || !row.target) return notDelivered(await cancel(engine, id, REASONS.targetNotFound, `session '${target.name}' is ${row.status}`));

  const claimed = await claimSession(engine, row.name, id, input.ownerToken, config.values.dispatchWaitS * 1000);
  if (claimed !== 'claimed') return notDelivered(claimed);
  const live = (await controlPlane.sessions.get(row.name))!;

  // Never inject twice: the record says `dispatched` before a single key is typed.
  const dispatched = await engine.ledger.transition(id, 'dispatched', null, {
    when: (j) => j.state === 'registered' && j.owner?.token === input.ownerToken,
    fields: { dispatched_at: isoOn(engine.clock), delivery: 'pending', target: { kind: 'local', name: live.name, mux: live.mux, server: live.server, pane: live.target, pane_pid: live.pid } },
  });
  if (!dispatched) return notDelivered(controlPlane.jobs.require(id), true);
  let report;
  try {
    report = await sessions.deliver(live, injectedLine(id, briefPath));
  } catch (err) {
    if (!(err instanceof DeliveryError)) throw err;
    const job = (await engine.ledger.transition(id, 'cancelled', REASONS.notDelivered, { when: (j) => !isTerminal(j.state), fields: { delivery: 'failed' }, note: err.message, ...(err.screenText ? { screen: err.screenText } : {}) })) ?? controlPlane.jobs.require(id);
    return notDelivered(job);
  }
  // Typed: the job is the agent's now, whatever its bookkeeping here comes to. A note that cannot
  // be written (the job's lock busy past its wait) is said, and ends nothing.
  const job = await engine.ledger.patch(id, { delivery: report.submitted === 'unconfirmed' ? 'unconfirmed' : 'typed', delivered_at: isoOn(engine.clock) }).catch((err: unknown) => {
    engine.deps.logger.warn(`job ${id}: delivered, but could not note it: ${errorMessage(err)}`);
    return controlPlane.jobs.require(id);
  });
  // An agent that names its own conversation (codex) writes it at its first message: record it
  // now, so the session can be resumed even if its server dies before a stop.
  if (!live.conversation_id) await sessions.learnConversation(live.name, { boundMs: 10_000 }).catch((err: unknown) => engine.deps.logger.warn(`session ${live.name}: its conversation is not known yet: ${errorMessage(err)}`));
  return { job, delivered: true, claimedElsewhere: false };
}

async function cancel(engine: JobEngine, id: string, reason: string, note: string): Promise<JobRecord> {
  return (await engine.ledger.transition(id, 'cancelled', reason, { when: (j) => !isTerminal(j.state), note })) ?? engine.deps.controlPlane.jobs.require(id);
}

/**
 * One job per session: waits (up to the dispatch wait) for the session's previous job to end, then
 * claims the session for this one. Gives up with `session_busy`, or with `claimed` when another
 * attempt took this job's record meanwhile (both: exit 5, nothing delivered).
 */
async function claimSession(engine: JobEngine, session: string, id: string, ownerToken: string, waitMs: number): Promise<'claimed' | JobRecord> {
  const { controlPlane } = engine.deps;
  const clock = engine.clock;
  const deadline = clock.now() + waitMs;
  for (;;) {
    const record = controlPlane.jobs.require(id);
    if (record.owner?.token !== ownerToken || record.state !== 'registered') return claimedElsewhere(record);
    const got = await controlPlane.sessions.mutate((tx) => {
      const row = tx.get(session);
      if (!row) return 'gone' as const;
      const holder = row.current_job ? controlPlane.jobs.get(row.current_job) : undefined;
      if (row.current_job && holder && !isTerminal(holder.state)) return 'busy' as const;
      tx.update(session, { current_job: id });
      return 'claimed' as const;
    });
    if (got === 'claimed') return 'claimed';
    if (got === 'gone') return cancel(engine, id, REASONS.targetNotFound, `session '${session}' was removed`);
    if (clock.now() >= deadline) return cancel(engine, id, REASONS.sessionBusy, `session '${session}' was still busy after ${Math.round(waitMs / 1000)} s`);
    // Woken by any job change in this process, or after a short while for changes made elsewhere.
    await waitForEvent(engine.ledger.onDidChangeJob, () => true, Math.min(500, Math.max(1, deadline - clock.now())), 'a job change', clock).catch(() => undefined);
  }
}

/** The record another attempt took, as this attempt reports it: cancelled (`claimed`) unless it has ended. */
function claimedElsewhere(job: JobRecord): JobRecord {
  return { ...job, reason: job.reason ?? REASONS.claimed, state: isTerminal(job.state) ? job.state : 'cancelled' };
}
