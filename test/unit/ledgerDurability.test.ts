import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { newJobId } from '../../src/core/base/ids';
import { MemoryLogger } from '../../src/core/base/log';
import { buildCore } from '../../src/core/core';
import { signatureOf, type EventPayload } from '../../src/core/messaging/protocol';
import { newJobRecord } from '../../src/core/store/newJobRecord';
import { tempWorkspace } from '../support/helpers';

/**
 * The job record is not fsynced where the event's audit line is (jobLedger.ts `write`): after a
 * power cut the record may miss the last events its audit log holds. Applied again (from the
 * outbox, or redelivered), such an event brings the record up to date and is logged once.
 */
describe('job ledger: the record catches up with its audit log after a power cut', () => {
  it('an event in the log but lost from the record is applied to the record, not logged twice', async () => {
    const logger = new MemoryLogger();
    const core = buildCore(tempWorkspace(), { env: { ...process.env }, logger, cliPath: '/nonexistent/cli.js' });
    try {
      const { ledger } = core.jobs;
      const token = 'cd'.repeat(16);
      const id = newJobId();
      await ledger.register(newJobRecord({ id, session: 'human:ann', type: 'direct', target: { kind: 'human', name: 'ann' }, timers: { start_timeout_s: 10, heartbeat_s: 5, idle_timeout_s: 20, timeout_s: 600 }, owner: { pid: process.pid, host: os.hostname(), token: 'me' } }), token);
      await ledger.transition(id, 'dispatched', null);
      const event = (seq: number, name: EventPayload['event'], detail: string): EventPayload => {
        const p: EventPayload = { v: 1, job_id: id, event: name, seq, ts: new Date().toISOString(), sender: 'ann', detail };
        return { ...p, sig: signatureOf(p, token) };
      };
      assert.equal((await ledger.applyEvent(event(1, 'started', 'on it'))).status, 'applied');
      const file = core.controlPlane.paths.jobFile(id);
      const beforeCut = fs.readFileSync(file);
      const progress = event(2, 'progress', 'half way');
      assert.equal((await ledger.applyEvent(progress)).status, 'applied');

      // The power cut: the record's last replacement never reached the disk; the log line did.
      fs.writeFileSync(file, beforeCut);
      assert.equal(core.controlPlane.jobs.require(id).seq, 1);
      const again = await ledger.applyEvent(progress, 'disk');
      assert.equal(again.status, 'applied');
      const job = core.controlPlane.jobs.require(id);
      assert.deepEqual([job.seq, job.detail, job.last_event], [2, 'half way', 'progress']);
      const logged = core.controlPlane.audit.readEntries(id).entries.filter((e) => e.type === 'event').map((e) => (e as { seq: number }).seq);
      assert.deepEqual(logged, [1, 2], 'each event once in the audit log');
      assert.ok(logger.lines.some((l) => /seq 2 was in the audit log but not in the record/.test(l.message)));
    } finally {
      core.dispose();
    }
  });
});
