import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { randomBytes } from 'node:crypto';
import { newJobId } from '../../src/core/base/ids';
import { isAlive } from '../../src/core/base/process';
import { HeartbeatRegistry } from '../../src/core/messaging/heartbeatRegistry';
import { JobOutbox } from '../../src/core/messaging/outbox';
import type { JobEngine } from '../../src/core/jobs/jobEngine';
import { CLI, heartbeatServices, until } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';
import { jobRecord } from '../support/rows';

/**
 * One heartbeat service per workspace and host (src/core/messaging/heartbeatService.ts), with the
 * real `mam event` and the embedded broker. Each "agent" is a small process that runs `mam event
 * started` and stays: `mam event` finds no multiplexer above it, so it watches that process.
 */
describe('heartbeats: one service per workspace and host', function () {
  this.timeout(90_000);
  let f: JobFixture | undefined;
  const agents: ChildProcess[] = [];

  afterEach(async () => {
    for (const a of agents.splice(0)) if (a.exitCode === null) a.kill('SIGKILL');
    if (f) for (const pid of heartbeatServices(f.workspace)) process.kill(pid, 'SIGKILL');
    await f?.dispose();
    f = undefined;
  });

  async function openJobs(engine: JobEngine, n: number): Promise<string[]> {
    const ids: string[] = [];
    const now = new Date().toISOString();
    for (let i = 0; i < n; i++) {
      const id = newJobId();
      ids.push(id);
      await engine.ledger.register(
        { ...jobRecord({ id, session: `agent-${i}` }), signed: true, timers: { start_timeout_s: 180, heartbeat_s: 0.4, idle_timeout_s: 600, timeout_s: 3600 }, owner: { pid: process.pid, host: os.hostname(), token: randomBytes(8).toString('hex') } },
        randomBytes(16).toString('hex'),
      );
      await engine.ledger.transition(id, 'dispatched', null, { fields: { dispatched_at: now, delivered_at: now, delivery: 'typed' } });
    }
    return ids;
  }

  /** An agent process that reports `started` (asking for heartbeats every 0.4 s) and then stays. */
  async function agent(id: string): Promise<ChildProcess> {
    const script = `const r = require('node:child_process').spawnSync(process.execPath, [${JSON.stringify(CLI)}, 'event', 'started', '--job', ${JSON.stringify(id)}, '--heartbeat', '0.4'], { stdio: 'inherit' }); process.send(r.status); setInterval(() => {}, 1e9);`;
    const child = spawn(process.execPath, ['-e', script], { cwd: f!.workspace, env: f!.env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    agents.push(child);
    const status = await new Promise((resolve) => child.once('message', resolve));
    assert.equal(status, 0, `mam event started for ${id}`);
    return child;
  }

  const heartbeats = (id: string): number => new JobOutbox(f!.controlPlane.paths.jobDir(id)).events().filter((e) => e.event === 'heartbeat').length;

  it('ten jobs: one service publishes for all; an agent gone is dropped at once while the others go on; ended jobs leave it; it exits with the last', async () => {
    f = jobFixture();
    const engine = f.engine();
    await engine.connect();
    const ids = await openJobs(engine, 10);
    const procs: ChildProcess[] = [];
    for (const id of ids) procs.push(await agent(id));
    const registry = new HeartbeatRegistry(f.controlPlane.paths);
    assert.equal(heartbeatServices(f.workspace).length, 1, 'one service for the ten jobs');
    assert.deepEqual(registry.list().map((r) => r.job).sort(), [...ids].sort());
    await until(() => ids.every((id) => heartbeats(id) >= 2), 20_000, 'two heartbeats for every job');
    // Delivered, on the broker, and applied: the measuring engine has them in the jobs' records.
    await until(() => ids.every((id) => (engine.deps.controlPlane.jobs.get(id)?.seq ?? 0) >= 3), 20_000, 'the heartbeats applied');

    // The first agent dies: its job leaves the service at the next look, the others go on.
    procs[0]!.kill('SIGKILL');
    await until(() => registry.read(ids[0]!) === undefined, 5_000, 'the dead agent\'s job to be dropped');
    const after = heartbeats(ids[0]!);
    const others = ids.slice(1).map(heartbeats);
    await until(() => ids.slice(1).every((id, i) => heartbeats(id) >= others[i]! + 3), 20_000, 'three more heartbeats for each other job');
    assert.equal(heartbeats(ids[0]!), after, 'no heartbeat for the job whose agent is gone');

    // Jobs that end leave the service too (their agents still run); the last one ends it.
    const service = heartbeatServices(f.workspace)[0]!;
    for (const id of ids.slice(1)) await engine.ledger.transition(id, 'completed', 'done', {});
    await until(() => registry.list().length === 0, 10_000, 'the ended jobs to leave the service');
    await until(() => !isAlive(service) && !fs.existsSync(registry.pidFile), 10_000, 'the service to exit');
  });

  it('a service killed midway is started again by the next event of a job it served', async () => {
    f = jobFixture();
    const engine = f.engine();
    await engine.connect();
    const [id] = await openJobs(engine, 1);
    await agent(id!);
    const [first] = heartbeatServices(f.workspace);
    assert.ok(first);
    process.kill(first, 'SIGKILL');
    await until(() => !isAlive(first), 5_000, 'the service to die');
    const before = heartbeats(id!);
    const r = await f.run(['event', 'progress', '--job', id!, '--detail', 'still working']);
    assert.equal(r.exitCode, 0, r.stderr);
    const [second] = heartbeatServices(f.workspace);
    assert.ok(second && second !== first, 'a new service');
    await until(() => heartbeats(id!) >= before + 2, 10_000, 'heartbeats again');
  });
});
