import { strict as assert } from 'node:assert';
import { MemoryLogger } from '../../src/core/base/log';
import { JobLedger } from '../../src/core/jobs/jobLedger';
import type { EventName, EventPayload } from '../../src/core/messaging/protocol';
import { needsPermission } from '../../src/core/store/jobSchema';
import { controlPlane, jobRecord, tempWorkspace } from '../support/helpers';

/**
 * An agent that asked for permission waits for a person however long it takes, and its heartbeat
 * process goes on beating meanwhile: a heartbeat is liveness, not news from the agent, so the job
 * still needs the person until the agent itself says something else.
 */
describe('a job waiting for permission', () => {
  it('still needs permission after heartbeats; the agent\'s next own event ends the wait', async () => {
    const cp = controlPlane(tempWorkspace());
    const ledger = new JobLedger(cp, new MemoryLogger());
    try {
      const now = new Date().toISOString();
      const job = await ledger.register(jobRecord({ state: 'dispatched', dispatched_at: now, delivered_at: now }), undefined);
      let seq = 0;
      const send = (event: EventName) => ledger.applyEvent({ v: 1, job_id: job.id, event, seq: ++seq, ts: new Date().toISOString(), sender: 'w1', detail: null } satisfies EventPayload);
      await send('started');
      await send('permission_required');
      assert.equal(needsPermission(cp.jobs.require(job.id)), true);
      await send('heartbeat');
      await send('heartbeat');
      assert.equal(needsPermission(cp.jobs.require(job.id)), true, 'heartbeats do not answer the question');
      await send('progress');
      assert.equal(needsPermission(cp.jobs.require(job.id)), false);
    } finally {
      ledger.dispose();
    }
  });
});
