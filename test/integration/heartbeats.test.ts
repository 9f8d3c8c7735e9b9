import { strict as assert } from 'node:assert';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { newJobId } from '../../src/core/base/ids';
import { isAlive } from '../../src/core/base/process';
import { HeartbeatRegistry } from '../../src/core/messaging/heartbeatRegistry';
import { JobOutbox } from '../../src/core/messaging/outbox';
import { appendJobEvent } from '../../src/core/messaging/publisher';
import { stopEmbeddedBroker } from '../../src/core/messaging/embeddedBroker';
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

  /**
   * An agent process that reports `started` (asking for heartbeats every 0.4 s, or `everyS`) and
   * then stays. The relay's tests ask for 600 s: a heartbeat publishes the job's backlog too, and
   * would hide a relay that did nothing.
   */
  async function agent(id: string, everyS = '0.4'): Promise<ChildProcess> {
    const script = `const r = require('node:child_process').spawnSync(process.execPath, [${JSON.stringify(CLI)}, 'event', 'started', '--job', ${JSON.stringify(id)}, '--heartbeat', ${JSON.stringify(everyS)}], { stdio: 'inherit' }); process.send(r.status); setInterval(() => {}, 1e9);`;
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

  const acked = (id: string): number => Number(fs.readFileSync(`${f!.controlPlane.paths.jobDir(id)}/acked`, 'utf8'));
  const seqOf = (stdout: string): number => Number(/\(seq (\d+)\)/.exec(stdout)?.[1]);

  /** A workspace, its engine connected, one open job, and the host's heartbeat registry (no service yet). */
  async function oneJob(): Promise<{ fx: JobFixture; engine: JobEngine; id: string; registry: HeartbeatRegistry }> {
    const fx = (f = jobFixture());
    const engine = fx.engine();
    await engine.connect();
    const [id] = await openJobs(engine, 1);
    return { fx, engine, id: id!, registry: new HeartbeatRegistry(fx.controlPlane.paths) };
  }

  /** `oneJob`, whose agent asked for 600 s heartbeats, and the host's relay open. */
  async function relayed(): Promise<{ fx: JobFixture; engine: JobEngine; id: string; registry: HeartbeatRegistry }> {
    const job = await oneJob();
    await agent(job.id, '600');
    await until(() => fs.existsSync(job.registry.relayFile), 10_000, 'the service to open its relay');
    return job;
  }

  it("the service is the host's event relay: `mam event` appends and hands over, the service publishes, the engine applies; lines that are not job IDs change nothing", async () => {
    const { fx, engine, id, registry } = await relayed();
    assert.ok(fs.lstatSync(registry.relayFile).isFIFO(), 'the relay is a FIFO');
    assert.equal(fs.lstatSync(registry.relayFile).mode & 0o777, 0o600);
    // Noise first: whatever else is written to the relay is read and dropped.
    fs.writeFileSync(registry.relayFile, `../../etc/passwd\n${'x'.repeat(5000)}\n\u001b[31m\nj-unknown-job\n`);
    for (let i = 0; i < 3; i++) {
      const r = await fx.run(['event', 'progress', '--job', id, '--detail', `step ${i}`]);
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, /^event progress \(seq \d+\) handed to this host's relay$/);
      assert.equal(r.stderr, '');
      const seq = seqOf(r.stdout);
      // Only a publisher marks an event acknowledged (a subscriber's drain applies from disk and marks nothing).
      await until(() => acked(id) >= seq, 10_000, `the relay to publish seq ${seq}`);
      await until(() => (engine.deps.controlPlane.jobs.get(id)?.seq ?? 0) >= seq, 10_000, `seq ${seq} applied`);
      assert.equal(engine.deps.controlPlane.jobs.get(id)?.detail, `step ${i}`);
    }
    assert.equal(heartbeatServices(fx.workspace).length, 1, 'the relay is still up');
    // What it saves: a process that hands its event over loads neither node:net nor node:crypto.
    const list = path.join(fx.workspace, 'modules.json');
    const r = await fx.run(['event', 'progress', '--job', id], { NODE_OPTIONS: `--require ${path.resolve(__dirname, '../fixtures/module-list.js')}`, MAM_TEST_MODULE_LIST: list });
    assert.match(r.stdout, /handed to this host's relay/);
    const loaded = JSON.parse(fs.readFileSync(list, 'utf8')) as string[];
    assert.ok(loaded.includes('NativeModule fs'), 'the list is read');
    assert.deepEqual(loaded.filter((m) => /^NativeModule (net|crypto|tls|stream)$/.test(m)), []);
  });

  it('a relay whose service is gone, or anything else in its place, is passed by: `mam event` publishes for itself and writes nothing there', async () => {
    const { fx, id, registry } = await oneJob();
    // A regular file and a symlink where the relay would be (a repository can hold either).
    fs.mkdirSync(registry.dir, { recursive: true });
    const target = `${fx.workspace}/elsewhere.txt`;
    for (const plant of [() => fs.writeFileSync(registry.relayFile, ''), () => (fs.writeFileSync(target, ''), fs.symlinkSync(target, registry.relayFile))]) {
      fs.rmSync(registry.relayFile, { force: true });
      plant();
      const r = await fx.run(['event', 'progress', '--job', id]);
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, /^event progress \(seq \d+\) delivered$/);
      assert.equal(fs.readFileSync(registry.relayFile, 'utf8'), '', 'nothing written to what is not a relay');
    }
    fs.rmSync(registry.relayFile, { force: true });
    // A relay left by a killed service: nobody reads it.
    await agent(id, '600');
    await until(() => fs.existsSync(registry.relayFile), 10_000, 'the service to open its relay');
    const [service] = heartbeatServices(fx.workspace);
    process.kill(service!, 'SIGKILL');
    await until(() => !isAlive(service!), 5_000, 'the service to die');
    assert.ok(fs.lstatSync(registry.relayFile).isFIFO(), 'its FIFO is left behind');
    const r = await fx.run(['event', 'progress', '--job', id]);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /^event progress \(seq \d+\) delivered$/);
    assert.equal(acked(id), seqOf(r.stdout));
  });

  it('a relay that takes nothing (its pipe full) leaves the event, appended once, to `mam event`, which publishes it itself', async () => {
    const { fx, engine, id, registry } = await oneJob();
    // A reader that never reads: opening the relay succeeds, writing the job's ID to it fails (EAGAIN).
    fs.mkdirSync(registry.dir, { recursive: true });
    execFileSync('mkfifo', ['-m', '600', '--', registry.relayFile]);
    const reader = fs.openSync(registry.relayFile, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
    try {
      for (const size of [4096, 1]) {
        for (;;) {
          try {
            fs.writeSync(reader, Buffer.alloc(size, 0x78));
          } catch {
            break; // EAGAIN: no room for this size
          }
        }
      }
      const outbox = new JobOutbox(fx.controlPlane.paths.jobDir(id));
      const before = outbox.events().length;
      const r = await fx.run(['event', 'progress', '--job', id, '--detail', 'past a full relay']);
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, /^event progress \(seq \d+\) delivered$/);
      const seq = seqOf(r.stdout);
      assert.deepEqual(outbox.events().slice(before).map((e) => e.seq), [seq], 'appended once, not again by the publishing bundle');
      assert.equal(acked(id), seq);
      await until(() => (engine.deps.controlPlane.jobs.get(id)?.seq ?? 0) >= seq, 10_000, `seq ${seq} applied`);
      assert.equal(engine.deps.controlPlane.jobs.get(id)?.detail, 'past a full relay');
    } finally {
      fs.closeSync(reader);
    }
  });

  it('events waiting in the outbox of a job the service served go out when the next service starts', async () => {
    f = jobFixture();
    const engine = f.engine();
    await engine.connect();
    const [a, b] = await openJobs(engine, 2);
    await agent(a!, '600');
    const [first] = heartbeatServices(f.workspace);
    process.kill(first!, 'SIGKILL');
    await until(() => !isAlive(first!), 5_000, 'the service to die');
    // Handed to a relay that died before it sent it: in the outbox, not acknowledged.
    const waiting = await appendJobEvent({ workspace: f.workspace, jobId: a!, event: 'progress', detail: 'left waiting', sender: 'test' });
    assert.ok(acked(a!) < waiting.seq);
    // Another job's agent starts the next service, which serves job a too (its registration stayed).
    await agent(b!, '600');
    await until(() => acked(a!) >= waiting.seq, 10_000, 'the waiting event published by the new service');
    await until(() => engine.deps.controlPlane.jobs.get(a!)?.detail === 'left waiting', 10_000, 'and applied');
  });

  it('with the broker down the relay takes the event all the same: exit 0, and the engine applies it from the outbox', async () => {
    const { fx, engine, id } = await relayed();
    await stopEmbeddedBroker(fx.controlPlane.paths);
    const r = await fx.run(['event', 'progress', '--job', id, '--detail', 'broker down']);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /handed to this host's relay/);
    const seq = seqOf(r.stdout);
    await until(() => engine.deps.controlPlane.jobs.get(id)?.detail === 'broker down', 15_000, 'the engine to apply it from the outbox');
    assert.ok(acked(id) < seq, 'not published: no broker took it');
  });
});
