import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execa } from 'execa';
import { newJobId } from '../../src/core/base/ids';
import { MemoryLogger } from '../../src/core/base/log';
import { buildCore, type Core } from '../../src/core/core';
import { JobOutbox } from '../../src/core/messaging/outbox';
import { signatureOf, type EventPayload } from '../../src/core/messaging/protocol';
import { newJobRecord } from '../../src/core/store/newJobRecord';
import { REPO_ROOT, tempDir, tempWorkspace } from '../support/helpers';

/**
 * What one event writes, kept to what it must (docs/benchmarks.md, "At scale: issue 26"): the
 * outbox's counters are overwritten in place, status.json is replaced only when the job's state
 * changes, and a job's lock does not list its folder unless it was taken over from a dead holder.
 */
describe('what an event writes', () => {
  let core: Core;
  const token = 'ab'.repeat(16);
  beforeEach(() => {
    core = buildCore(tempWorkspace(), { env: { ...process.env }, logger: new MemoryLogger(), cliPath: '/nonexistent/cli.js' });
  });
  afterEach(() => core.dispose());

  async function startedJob(): Promise<{ id: string; event(seq: number, name: EventPayload['event']): EventPayload }> {
    const id = newJobId();
    await core.jobs.ledger.register(newJobRecord({ id, session: 'human:ann', type: 'direct', target: { kind: 'human', name: 'ann' }, owner: { pid: process.pid, host: os.hostname(), token: 'me' } }), token);
    await core.jobs.ledger.transition(id, 'dispatched', null);
    const event = (seq: number, name: EventPayload['event']): EventPayload => {
      const p: EventPayload = { v: 1, job_id: id, event: name, seq, ts: new Date().toISOString(), sender: 'ann', detail: name === 'heartbeat' ? null : `${name} ${seq}` };
      return { ...p, sig: signatureOf(p, token) };
    };
    assert.equal((await core.jobs.ledger.applyEvent(event(1, 'started'))).status, 'applied');
    return { id, event };
  }

  it('status.json is replaced when the state changes, not for a progress or a heartbeat', async () => {
    const { id, event } = await startedJob();
    const status = path.join(core.controlPlane.paths.auditJobDir(id), 'status.json');
    const before = fs.statSync(status).ino;
    assert.equal((await core.jobs.ledger.applyEvent(event(2, 'progress'))).status, 'applied');
    assert.equal((await core.jobs.ledger.applyEvent(event(3, 'heartbeat'))).status, 'applied');
    assert.equal(fs.statSync(status).ino, before, 'the same file: not replaced');
    assert.equal(core.controlPlane.jobs.require(id).detail, 'progress 2', 'the record has the progress');
    assert.deepEqual(core.controlPlane.audit.readStatus(id)?.state, 'started');
    assert.equal((await core.jobs.ledger.applyEvent(event(4, 'completed'))).status, 'applied');
    assert.deepEqual(core.controlPlane.audit.readStatus(id)?.state, 'completed', 'replaced at the state change');
  });

  it("the outbox's counters are overwritten in place, and an older MAM's counters are read and continued", () => {
    const outbox = new JobOutbox(tempDir('outbox'));
    fs.writeFileSync(path.join(outbox.jobDir, 'seq'), '7\n'); // as an older MAM wrote it
    assert.equal(outbox.allocatedSeq(), 7);
    assert.equal(outbox.allocateSeq(), 8);
    const seqFile = path.join(outbox.jobDir, 'seq');
    for (let i = 9; i <= 12; i++) {
      assert.equal(outbox.allocateSeq(), i);
      assert.equal(fs.statSync(seqFile).size, 16, 'every write the same length: the file is never truncated');
    }
    assert.equal(fs.readFileSync(seqFile, 'utf8'), '000000000000012\n');
    outbox.markAcked(12);
    outbox.markAcked(9);
    assert.deepEqual(outbox.pending(), [], 'nothing was appended: nothing pending');
    assert.equal(Number(fs.readFileSync(path.join(outbox.jobDir, 'acked'), 'utf8')), 9, 'a shorter number leaves no digits of the longer one');
  });

  it("a record's temp file left by a holder that died is cleared when its lock is taken over, and only then", async () => {
    const { id } = await startedJob();
    const record = core.controlPlane.paths.jobFile(id);
    const stray = path.join(path.dirname(record), `.${path.basename(record)}.tmp-99999-dead`);
    fs.writeFileSync(stray, '{');
    await core.jobs.ledger.patch(id, { detail: 'a normal hold' });
    assert.ok(fs.existsSync(stray), 'a lock taken normally does not list the folder');

    const holder = execa(process.execPath, ['-r', 'esbuild-register', path.join(REPO_ROOT, 'test/fixtures/lockHolder.ts'), core.controlPlane.paths.lock(`job-${id}`)], { reject: false });
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
      void holder.then((r) => reject(new Error(`holder exited early: ${r.stderr}`)));
    });
    holder.kill('SIGKILL');
    await holder;
    await core.jobs.ledger.patch(id, { detail: 'after the holder died' });
    assert.ok(!fs.existsSync(stray), 'cleared at the takeover');
    assert.equal(core.controlPlane.jobs.require(id).detail, 'after the holder died');
  });
});
