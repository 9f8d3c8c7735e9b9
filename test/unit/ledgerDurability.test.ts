import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { newJobId } from '../../src/core/base/ids';
import { MemoryLogger } from '../../src/core/base/log';
import { buildCore } from '../../src/core/core';
import type { JobLedger } from '../../src/core/jobs/jobLedger';
import { signatureOf, type EventPayload } from '../../src/core/messaging/protocol';
import { newJobRecord } from '../../src/core/store/newJobRecord';
import { tempWorkspace } from '../support/helpers';
import { dispatchedSignedJob } from '../support/signedJob';

/**
 * The job record is not fsynced where the event's audit line is, and lands after it (jobLedger.ts
 * `writeEvent`): after a power cut the record may miss the last events its audit log holds. Applied
 * again (from the outbox, or redelivered), such an event brings the record up to date and is logged
 * once. Meanwhile the applying process reads the new record, others the old one until it lands.
 */
describe("job ledger: an event's record lands behind its audit line", () => {
  it('an event in the log but lost from the record is applied to the record, not logged twice', async () => {
    const logger = new MemoryLogger();
    const core = buildCore(tempWorkspace(), { env: { ...process.env }, logger, cliPath: '/nonexistent/cli.js' });
    try {
      const { ledger } = core.jobs;
      const { id, event } = await dispatchedSignedJob(ledger, 'cd'.repeat(16));
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

  it('an event is announced once its line is on disk, before its record lands: this process reads the new record, others the old one, and the lock is held until it has landed', async () => {
    const workspace = tempWorkspace();
    const core = buildCore(workspace, { env: { ...process.env }, logger: new MemoryLogger(), cliPath: '/nonexistent/cli.js' });
    // Another process's view of the same workspace: it reads the files.
    const other = buildCore(workspace, { env: { ...process.env }, logger: new MemoryLogger(), cliPath: '/nonexistent/cli.js' });
    const rename = fs.promises.rename;
    try {
      const { ledger } = core.jobs;
      const { id, event } = await dispatchedSignedJob(ledger, 'ab'.repeat(16));
      assert.equal((await ledger.applyEvent(event(1, 'started', 'on it'))).status, 'applied');

      // The record's rename waits until the test lets it go.
      let letRenameGo!: () => void;
      const gate = new Promise<void>((resolve) => (letRenameGo = resolve));
      fs.promises.rename = async (...args: Parameters<typeof rename>) => {
        await gate;
        return rename(...args);
      };
      const file = core.controlPlane.paths.jobFile(id);
      const lockFile = core.controlPlane.paths.lock(`job-${id}`);
      const seen = new Promise<Record<string, unknown>>((resolve) => {
        ledger.onDidChangeJob(({ job }) => {
          if (job.seq !== 2) return;
          const logged = core.controlPlane.audit.readEntries(id).entries.some((e) => e.type === 'event' && e.seq === 2);
          resolve({ here: core.controlPlane.jobs.get(id)!.seq, peek: core.controlPlane.jobs.peek(id)!.seq, listed: core.controlPlane.jobs.list().jobs[0]!.seq, other: other.controlPlane.jobs.get(id)!.seq, logged, locked: fs.existsSync(lockFile) });
        });
      });
      let settled = false;
      const applying = ledger.applyEvent(event(2, 'progress', 'half way')).finally(() => (settled = true));
      assert.deepEqual(await seen, { here: 2, peek: 2, listed: 2, other: 1, logged: true, locked: true });
      // Another process asking for the lock now gets it only once the record has landed.
      const otherReads = other.controlPlane.jobs.withJobLock(id, () => other.controlPlane.jobs.get(id)!.seq);
      assert.equal(settled, false, 'the ledger still holds the job while its record is held back');
      letRenameGo();
      assert.equal((await applying).status, 'applied');
      assert.equal(await otherReads, 2);
      assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).seq, 2);
      assert.ok(!fs.existsSync(lockFile));
    } finally {
      fs.promises.rename = rename;
      other.dispose();
      core.dispose();
    }
  });

  it('an event that moves the job is announced once: a look at the job while its record lands (a watcher, a state message) announces nothing', async () => {
    const core = buildCore(tempWorkspace(), { env: { ...process.env }, logger: new MemoryLogger(), cliPath: '/nonexistent/cli.js' });
    const rename = fs.promises.rename;
    try {
      const { ledger } = core.jobs;
      const { id, event } = await dispatchedSignedJob(ledger, 'ef'.repeat(16));
      const announced: string[] = [];
      ledger.onDidChangeJob(({ job }) => announced.push(`${job.state} ${job.seq}`));
      // The record's rename starts, and waits until the test has looked.
      let renaming!: () => void;
      const renameStarted = new Promise<void>((resolve) => (renaming = resolve));
      let letRenameGo!: () => void;
      const gate = new Promise<void>((resolve) => (letRenameGo = resolve));
      fs.promises.rename = async (...args: Parameters<typeof rename>) => {
        renaming();
        await gate;
        return rename(...args);
      };
      const applying = ledger.applyEvent(event(1, 'started', 'on it'));
      await renameStarted;
      ledger.observe(id);
      letRenameGo();
      assert.equal((await applying).status, 'applied');
      ledger.observe(id);
      assert.deepEqual(announced, ['started 1'], 'the start announced once, by its applier');
    } finally {
      fs.promises.rename = rename;
      core.dispose();
    }
  });
});


describe('job ledger: a change is announced once, by the process that made it', () => {
  /** A signed job of this process on session a1's pane, dispatched and started. */
  async function startedLocalJob(ledger: JobLedger, token: string) {
    const id = newJobId();
    const target = { kind: 'local' as const, name: 'a1', mux: 'tmux' as const, server: 'srv', pane: '%1', pane_pid: 4242 };
    await ledger.register(newJobRecord({ id, session: 'a1', type: 'direct', target, timers: { start_timeout_s: 10, heartbeat_s: 5, idle_timeout_s: 20, timeout_s: 600 }, owner: { pid: process.pid, host: os.hostname(), token: 'me' } }), token);
    await ledger.transition(id, 'dispatched', null);
    const event = (seq: number, name: EventPayload['event'], detail: string): EventPayload => {
      const p: EventPayload = { v: 1, job_id: id, event: name, seq, ts: new Date().toISOString(), sender: 'a1', detail };
      return { ...p, sig: signatureOf(p, token) };
    };
    assert.equal((await ledger.applyEvent(event(1, 'started', 'on it'))).status, 'applied');
    return { id, event };
  }

  it('a look at the job between its lock and its announcement (its session being freed) announces nothing; a change another process made meanwhile is announced after', async () => {
    const core = buildCore(tempWorkspace(), { env: { ...process.env }, logger: new MemoryLogger(), cliPath: '/nonexistent/cli.js' });
    const sessions = core.controlPlane.sessions;
    const mutate = sessions.mutate;
    try {
      const { ledger } = core.jobs;
      const { id, event } = await startedLocalJob(ledger, 'ab'.repeat(16));
      const announced: string[] = [];
      ledger.onDidChangeJob(({ job, previous }) => announced.push(`${previous} → ${job.state}${job.detail === 'noted elsewhere' ? ' (noted elsewhere)' : ''}`));
      // Freeing the session (after the job's lock, before the announcement) waits until the test has looked.
      let freeing!: () => void;
      const freeingStarted = new Promise<void>((resolve) => (freeing = resolve));
      let letGo!: () => void;
      const gate = new Promise<void>((resolve) => (letGo = resolve));
      sessions.mutate = (async (...args: Parameters<typeof mutate>) => {
        freeing();
        await gate;
        return mutate.apply(sessions, args);
      }) as typeof mutate;
      const completed = event(2, 'completed', 'done');
      const applying = ledger.applyEvent(completed);
      await freeingStarted;
      // The same event again (the broker's copy beside the outbox's): a duplicate, whose applier looks at the job.
      assert.equal((await ledger.applyEvent(completed, 'disk')).status, 'duplicate');
      ledger.observe(id);
      assert.deepEqual(announced, [], 'nothing announced before its applier does');
      // Another process changes the record meanwhile (it takes the lock the applier let go).
      await core.controlPlane.jobs.update(id, (j) => ({ ...j, detail: 'noted elsewhere', updated_at: new Date(Date.now() + 1000).toISOString() }));
      ledger.observe(id);
      letGo();
      assert.equal((await applying).status, 'applied');
      assert.deepEqual(announced, ['started → completed', 'completed → completed (noted elsewhere)'], 'the end once, by its applier; the other change after it');
      ledger.observe(id);
      assert.equal(announced.length, 2);
    } finally {
      sessions.mutate = mutate;
      core.dispose();
    }
  });
});
