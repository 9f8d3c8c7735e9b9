import { isoOn } from '../base/clock';
import type { JobTarget } from './jobTarget';

/**
 * A person (`human:NAME`): nothing is typed anywhere. The job is `dispatched` (assigned) at once,
 * and T and the budget count from now; the person follows the brief — `mam event …` in a terminal,
 * or Start and Complete on the job in VS Code — and their events are judged like an agent's.
 */
export const personTarget: JobTarget = {
  kind: 'human',
  check: () => undefined,
  async deliver(engine, { job, ownerToken }) {
    const now = isoOn(engine.clock);
    const assigned = await engine.ledger.transition(job.id, 'dispatched', null, {
      when: (j) => j.state === 'registered' && j.owner?.token === ownerToken,
      fields: { dispatched_at: now, delivered_at: now, delivery: 'assigned' },
    });
    return { job: assigned ?? engine.deps.controlPlane.jobs.require(job.id), delivered: true, claimedElsewhere: false };
  },
  cancel: async () => undefined,
  afterEnd: async () => undefined,
};
