/**
 * An event is announced once its audit line is fsynced, while its job's record lands behind it
 * (jobLedger.ts `writeEvent`, JobStore.replaceBehind). An applier killed in between — the line on
 * disk, the record not — loses nothing: the lock it held is taken over at once, the outbox sweep
 * every subscriber runs applies the event again, the record catches up, the log keeps it once.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import { MemoryLogger } from '../../src/core/base/log';
import { buildCore } from '../../src/core/core';
import { JobOutbox } from '../../src/core/messaging/outbox';
import type { EventPayload } from '../../src/core/messaging/protocol';
import { REPO_ROOT, tempWorkspace } from '../support/helpers';
import { dispatchedSignedJob } from '../support/signedJob';

describe('faults: an applier killed before its record landed', function () {
  this.timeout(60_000);

  it('the next applier takes its lock over, the outbox sweep brings the record up to the log, each event logged once', async () => {
    const workspace = tempWorkspace();
    const logger = new MemoryLogger();
    const core = buildCore(workspace, { env: { ...process.env }, logger, cliPath: '/nonexistent/cli.js' });
    try {
      const { ledger } = core.jobs;
      const { id, event } = await dispatchedSignedJob(ledger, 'ef'.repeat(16));
      // As a publisher does: each event in the job's outbox before the broker has it.
      const outbox = new JobOutbox(core.controlPlane.paths.jobDir(id));
      const publish = async (name: EventPayload['event'], detail: string): Promise<EventPayload> => {
        const signed = event(outbox.allocate().seq, name, detail);
        await outbox.append(signed);
        return signed;
      };
      assert.equal((await ledger.applyEvent(await publish('started', 'on it'))).status, 'applied');
      const progress = await publish('progress', 'half way');

      const eventFile = path.join(workspace, 'event.json');
      fs.writeFileSync(eventFile, JSON.stringify(progress));
      const applier = execa(process.execPath, ['-r', 'esbuild-register', path.join(REPO_ROOT, 'test/fixtures/stalledApplier.ts'), workspace, eventFile], { cwd: REPO_ROOT, reject: false });
      try {
        await new Promise<void>((resolve, reject) => {
          applier.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('announced') && resolve());
          void applier.then((r) => reject(new Error(`the applier ended before announcing: ${r.stderr}`)));
        });
      } finally {
        applier.kill('SIGKILL');
        await applier;
      }

      const jobFile = core.controlPlane.paths.jobFile(id);
      const lockFile = core.controlPlane.paths.lock(`job-${id}`);
      const eventSeqs = (): number[] => core.controlPlane.audit.readEntries(id).entries.flatMap((e) => (e.type === 'event' ? [e.seq] : []));
      // Killed in between: the line is on disk, the record is not, its lock and temp file are left.
      assert.deepEqual(eventSeqs(), [1, 2]);
      assert.equal(core.controlPlane.jobs.require(id).seq, 1);
      assert.ok(fs.existsSync(lockFile), 'the killed applier held the job lock');
      assert.ok(fs.readdirSync(path.dirname(jobFile)).some((n) => n.startsWith(`.${path.basename(jobFile)}.tmp-`)), 'its temp record was left');

      assert.equal(await ledger.applyOutbox(id), 1);
      const job = core.controlPlane.jobs.require(id);
      assert.deepEqual([job.seq, job.detail, job.last_event], [2, 'half way', 'progress']);
      assert.deepEqual(eventSeqs(), [1, 2], 'each event once in the audit log');
      assert.ok(!fs.existsSync(lockFile));
      assert.ok(!fs.readdirSync(path.dirname(jobFile)).some((n) => n.includes('.tmp-')), 'the temp record was cleared when the lock was taken over');
      assert.ok(logger.lines.some((l) => /seq 2 was in the audit log but not in the record/.test(l.message)));

      // The job goes on: the next event is applied as usual.
      assert.equal((await ledger.applyEvent(await publish('completed', 'done'))).status, 'applied');
      assert.deepEqual([core.controlPlane.jobs.require(id).state, eventSeqs()], ['completed', [1, 2, 3]]);
    } finally {
      core.dispose();
    }
  });
});
