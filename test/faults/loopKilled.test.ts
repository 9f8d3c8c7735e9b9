/**
 * A loop killed while its creator works, and the creator completing meanwhile, with nobody
 * listening (no monitor, no VS Code, and the broker's job warden off): the completion exists only
 * in the job's outbox. `mam loop resume` must read it before any timer may judge the job.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import type { LoopState } from '../../src/core/loop/loopState';
import { JobOutbox } from '../../src/core/messaging/outbox';
import { CLI, until } from '../support/helpers';
import { loopFixture, type JobFixture } from '../support/jobs';

describe('faults: a loop killed midway loses no completion', function () {
  this.timeout(120_000);
  let f: JobFixture;
  beforeEach(() => {
    // Heartbeats every second, judged after 3 s of silence: a timer would be quick to judge.
    f = loopFixture({ MAM_NO_WARDEN: '1', MAM_HEARTBEAT_S: '1', MAM_LIVENESS_K: '3' });
  });
  afterEach(async () => {
    await f.dispose();
  });

  it('resume reads the completion waiting in the outbox: the job completes, is not asked again, and the loop passes', async () => {
    await f.agent('creator', 'creator', ['--work-ms', '2000']);
    const loop = execa(process.execPath, [CLI, 'loop', '--task', 'Survive the kill', '--creator', 'creator'], { cwd: f.workspace, env: f.env, reject: false });
    const loopsDir = f.controlPlane.paths.loopsDir;
    const state = (): LoopState | undefined => {
      const name = fs.existsSync(loopsDir) ? fs.readdirSync(loopsDir).find((n) => n.endsWith('.json')) : undefined;
      return name ? (JSON.parse(fs.readFileSync(path.join(loopsDir, name), 'utf8')) as LoopState) : undefined;
    };
    const implementJob = () => state()?.steps.find((s) => s.key === 'implement')?.job_id;
    try {
      await until(() => f.controlPlane.jobs.get(implementJob() ?? 'j-none')?.state === 'started', 30_000, 'the creator to start');
    } finally {
      loop.kill('SIGKILL');
      await loop;
    }
    const id = implementJob()!;
    // The creator completes with nobody listening: its completion is in the outbox, not in the record.
    await until(() => new JobOutbox(f.controlPlane.paths.jobDir(id)).events().some((e) => e.event === 'completed'), 30_000, 'the completion in the outbox');
    assert.equal(f.controlPlane.jobs.get(id)!.state, 'started', 'nobody applied it');

    const resumed = await f.run(['loop', 'resume', state()!.id, '--json']);
    assert.equal(resumed.exitCode, 0, resumed.stderr);
    const s = JSON.parse(resumed.stdout) as LoopState;
    assert.equal(s.status, 'passed');
    assert.equal(s.steps.find((x) => x.key === 'implement')!.job_id, id, 'the same job: not asked again');
    // Completed in time, not judged first (heartbeats its process sent after the completion, while
    // nobody had applied it, are late; the completion itself is not).
    const job = f.controlPlane.jobs.get(id)!;
    assert.deepEqual([job.state, (job.late_events ?? []).filter((e) => e.event !== 'heartbeat')], ['completed', []]);
  });
});
