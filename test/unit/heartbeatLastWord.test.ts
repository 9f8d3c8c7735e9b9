import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newJobId } from '../../src/core/base/ids';
import { MemoryLogger } from '../../src/core/base/log';
import { buildCore, type Core } from '../../src/core/core';
import { JobOutbox } from '../../src/core/messaging/outbox';
import { appendJobEvent, publishHeartbeat } from '../../src/core/messaging/publisher';
import { newJobRecord } from '../../src/core/store/newJobRecord';
import { tempWorkspace } from '../support/helpers';

/**
 * The heartbeat service's heartbeat never follows the agent's last word. Its check reads the job's
 * record; the agent's `completed` is in the outbox before any record says so, and a heartbeat due
 * then used to be appended after it: the finished job kept it as a late event (a remote runner's
 * submitter saw `heartbeat` as the job's last event in CI).
 */
describe('a heartbeat after the agent\'s last word', () => {
  let core: Core;
  let id: string;
  let outbox: JobOutbox;
  const sender = 'agent-1';

  beforeEach(async () => {
    core = buildCore(tempWorkspace(), { env: { ...process.env }, logger: new MemoryLogger(), cliPath: '/nonexistent/cli.js' });
    id = newJobId();
    await core.jobs.ledger.register(newJobRecord({ id, session: 'human:ann', type: 'direct', target: { kind: 'human', name: 'ann' }, owner: { pid: process.pid, host: os.hostname(), token: 'me' } }), 'ab'.repeat(16));
    await core.jobs.ledger.transition(id, 'dispatched', null);
    outbox = new JobOutbox(core.controlPlane.paths.jobDir(id));
  });
  afterEach(() => core.dispose());

  const append = (event: 'started' | 'progress' | 'completed' | 'error') => appendJobEvent({ workspace: core.controlPlane.workspace, jobId: id, event, sender, ...(event === 'started' ? {} : { detail: event }) });
  const heartbeat = () => publishHeartbeat({ workspace: core.controlPlane.workspace, jobId: id, sender, endpoint: undefined });
  const names = () => outbox.events().map((p) => `${p.seq} ${p.event}`);

  it('is appended while the job is open', async () => {
    await append('started');
    await append('progress');
    const r = await heartbeat();
    assert.equal(r?.payload.seq, 3);
    assert.deepEqual(names(), ['1 started', '2 progress', '3 heartbeat']);
    assert.equal(outbox.hasEnded(), false);
  });

  for (const last of ['completed', 'error'] as const) {
    it(`is not appended once the outbox holds ${last}, sent or not, and nothing is written`, async () => {
      await append('started');
      await append(last);
      const before = fs.readFileSync(outbox.file);
      assert.equal(await heartbeat(), undefined, 'waiting to be sent');
      outbox.markAcked(2);
      assert.equal(await heartbeat(), undefined, 'acknowledged by the broker');
      assert.deepEqual(fs.readFileSync(outbox.file), before);
      assert.deepEqual(names(), ['1 started', `2 ${last}`]);
      assert.equal(core.controlPlane.jobs.require(id).state, 'dispatched', 'the record does not say so yet');
    });
  }

  it('a last word whose `ended` counter was never written (its process died after the append) is found in the backlog', async () => {
    await append('started');
    await append('completed');
    fs.rmSync(path.join(outbox.jobDir, 'ended'));
    assert.equal(await heartbeat(), undefined);
    assert.deepEqual(names(), ['1 started', '2 completed']);
  });
});
