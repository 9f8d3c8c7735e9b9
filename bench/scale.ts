/**
 * One workspace at scale, on the embedded broker started the normal way (a JobEngine's connect()),
 * with the broker daemon's job warden on, as users run it:
 *
 * - the durable floor: a raw mqtt.js QoS 1 round trip plus two fsync'd 200-byte appends — what any
 *   "write it down, send it, write it down" event path costs at least — measured back to back and
 *   paced as the phase's events come (one every 1000/N ms); the goal (≤ 3×) is against the paced one,
 *   the same work under the same pacing (docs/benchmarks.md, "Which floor");
 * - load: 50 signed jobs, started by the real `mam event started --heartbeat 30` (so the host's one
 *   heartbeat service publishes for all 50 every 30 s, the default N), each then sent `progress` at 1/s:
 *   (b) through the publisher API (publishJobEvent) from two publisher processes of 25 jobs each,
 *   for 60 s; then (a) as agents do it, one cold `mam event progress` process per event, for 30 s
 *   (MAM_SCALE_API_S, MAM_SCALE_COLD_S, MAM_SCALE_IDLE_S change the durations; MAM_BENCH_PROF=DIR writes the publisher processes' CPU profiles there). Each job publishes
 *   its next event once its previous one returned (an agent runs one command at a time), so the
 *   achieved rate shows when the machine cannot keep up. The heartbeat service watches this process
 *   (`mam event` finds no tmux pane above it), and end with their jobs' `completed`;
 * - idle: 50 live sessions, no jobs, the broker daemon (with its warden) and a `mam monitor`
 *   (default interval) — their CPU over 30 s, once both run for a minute at least (they are set
 *   up first, in a workspace of their own, and idle through the load phases).
 *
 * "Applied" is when the measuring engine (this process) has the event applied: its own ledger
 * applied it (onDidChangeJob before onDidApplyEvent), or the warden applied it first and this
 * engine found it on disk (its copy is a duplicate; onDidChangeJob from ledger.observe). CPU comes
 * from /proc/<pid>/stat over the window. Every event in the outboxes must be in the audit logs
 * exactly once.
 *
 * This file is also the publisher process: `fork(__filename, ['--scale-worker'])`.
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { MemoryLogger } from '../src/core/base/log';
import { newJobId } from '../src/core/base/ids';
import type { BrokerEndpoint } from '../src/core/messaging/brokerRecord';
import { readBrokerRecord } from '../src/core/messaging/brokerRecord';
import { startEmbeddedBroker, stopEmbeddedBroker } from '../src/core/messaging/embeddedBroker';
import { JobOutbox } from '../src/core/messaging/outbox';
import { publishJobEvent } from '../src/core/messaging/publisher';
import { QuickConnection } from '../src/core/messaging/quickPublish';
import { TmuxBackend } from '../src/core/mux/tmux';
import { HeartbeatRegistry } from '../src/core/messaging/heartbeatRegistry';
import { ControlPlanePaths } from '../src/core/store/paths';
import { jobRecord } from '../test/support/rows';
import { benchRawRoundTrip } from './mqtt';
import { benchEngine } from './engine';
import { isAlive } from '../src/core/base/process';
import { machineCpu, procCpu, sumCpu, sumRssMb } from './procstat';
import { percentile, type Row } from './stats';

export interface ScaleOptions {
  jobs?: number;
  /** Seconds of load through the publisher API (b). */
  apiSeconds?: number;
  /** Seconds of load through cold `mam event` processes (a); 0 skips it. */
  coldSeconds?: number;
  /** Seconds of the idle measurement; 0 skips it. */
  idleSeconds?: number;
  /** The heartbeat period N given to `mam event started --heartbeat N`. */
  heartbeatS?: number;
  /** The broker daemon's job warden (default on, as users run it). */
  warden?: boolean;
  /** Publisher processes for (b). */
  publishers?: number;
  /** Extra environment for the broker daemon only (e.g. NODE_OPTIONS=--require <a profiler hook>; Node refuses --cpu-prof there). */
  daemonEnv?: NodeJS.ProcessEnv;
  /** Extra environment for the `mam monitor` only. */
  monitorEnv?: NodeJS.ProcessEnv;
  /**
   * A fault to inject, to see the benchmark survive it (default: MAM_BENCH_FAULT):
   * 'worker-exit' makes the first publisher process of each load phase exit halfway through it.
   */
  fault?: 'worker-exit';
  /** Receives the raw figures behind the rows (for analysis); with `rawSamples`, every publish too. */
  details?: (d: Record<string, unknown>) => void;
  rawSamples?: boolean;
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes. */
const wallNow = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// The publisher process

interface WorkerTask {
  mode: 'api' | 'cold';
  ws: string;
  cli: string;
  env: NodeJS.ProcessEnv;
  endpoint: BrokerEndpoint;
  jobs: Array<{ id: string; offsetMs: number }>;
  startAt: number;
  durationMs: number;
  /** The fault MAM_BENCH_FAULT=worker-exit: this process exits (status 7) this long into the window. */
  exitAfterMs?: number;
}

interface Sample {
  job: string;
  seq: number;
  /** Before publishJobEvent was called / before the process was spawned (wall ms). */
  t0: number;
  /** When publishJobEvent resolved (PUBACK) / the process exited. */
  t1: number;
  delivered: boolean;
}

interface WorkerResult {
  samples: Sample[];
  failures: string[];
  /** The first few `mam event` warnings (an event left in its outbox). */
  warnings?: string[];
  /**
   * This process's CPU over the window (and its reaped children's: the cold `mam event`
   * processes), in ms, read by itself: the parent cannot read it once the process has exited.
   */
  cpuMs?: number;
}

/** What became of a publisher process: its result, or why it has none. */
type WorkerOutcome = { result: WorkerResult } | { ended: string };

/** Exit status of the fault MAM_BENCH_FAULT=worker-exit. */
const FAULT_EXIT = 7;

async function runWorker(task: WorkerTask): Promise<WorkerResult> {
  const samples: Sample[] = [];
  const failures: string[] = [];
  const warnings: string[] = [];
  const end = task.startAt + task.durationMs;
  // A long-lived publisher keeps one connection (as the heartbeat service and runners do).
  const connection = task.mode === 'api' ? new QuickConnection(task.endpoint, `bench-scale-${process.pid}`) : undefined;
  const ownCpu = (): number => {
    const c = procCpu(process.pid);
    return c ? c.self + c.children : Number.NaN;
  };
  let cpu0 = Number.NaN;
  let cpu1 = Number.NaN;
  const atStart = setTimeout(() => (cpu0 = ownCpu()), Math.max(0, task.startAt - wallNow()));
  const atEnd = setTimeout(() => (cpu1 = ownCpu()), Math.max(0, end - wallNow()));
  if (task.exitAfterMs !== undefined) setTimeout(() => process.exit(FAULT_EXIT), Math.max(0, task.startAt + task.exitAfterMs - wallNow()));
  const once = async (job: string, i: number): Promise<void> => {
    const t0 = wallNow();
    if (connection) {
      const r = await publishJobEvent({ workspace: task.ws, jobId: job, event: 'progress', detail: `step ${i}`, sender: 'bench-scale', endpoint: task.endpoint, connection });
      samples.push({ job, seq: r.payload.seq, t0, t1: wallNow(), delivered: r.delivered });
      return;
    }
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [task.cli, 'event', 'progress', '--job', job, '--detail', `step ${i}`, '--json'], { cwd: task.ws, env: task.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    const t1 = wallNow();
    if (out.code !== 0 || !out.stdout.trim()) return void failures.push(`exit ${out.code} after ${(t1 - t0).toFixed(0)} ms, stdout '${out.stdout.trim()}', stderr '${out.stderr.trim()}'`);
    const payload = JSON.parse(out.stdout) as { seq: number };
    const delivered = !out.stderr.includes('warning');
    if (!delivered && warnings.length < 5) warnings.push(out.stderr.trim());
    samples.push({ job, seq: payload.seq, t0, t1, delivered });
  };
  await Promise.all(
    task.jobs.map(async ({ id, offsetMs }) => {
      // One event at a time per job (an agent runs one command at a time), at 1/s when it can.
      let next = task.startAt + offsetMs;
      for (let i = 0; ; i++) {
        const wait = next - wallNow();
        if (wait > 0) await sleep(wait);
        if (wallNow() >= end) return;
        try {
          await once(id, i);
        } catch (err) {
          failures.push((err as Error).message);
        }
        next = Math.max(next + 1000, wallNow());
      }
    }),
  );
  connection?.close();
  // The last event of a job may end just before the window does.
  while (Number.isNaN(cpu1) && wallNow() < end + 1000) await sleep(Math.max(1, end - wallNow()));
  clearTimeout(atStart);
  clearTimeout(atEnd);
  return { samples, failures, warnings, cpuMs: cpu1 - cpu0 };
}

if (require.main === module && process.argv[2] === '--scale-worker') {
  process.send!('ready');
  process.once('message', (task: WorkerTask) => {
    void runWorker(task).then(
      (result) => process.send!(result, () => process.exit(0)),
      (err: unknown) => process.send!({ samples: [], failures: [String(err)] }, () => process.exit(1)),
    );
  });
}

/** A publisher process; `ready` resolves once it has loaded, or with why it ended before that. */
function startWorker(): { child: ChildProcess; ready: Promise<string | undefined> } {
  const child = fork(__filename, ['--scale-worker'], {
    execArgv: ['-r', require.resolve('esbuild-register'), ...(process.env.MAM_BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.MAM_BENCH_PROF}`] : [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // esbuild-register compiles the imports on load; the worker says when it has them.
  const ready = new Promise<string | undefined>((resolve) => {
    child.once('message', () => resolve(undefined));
    child.once('exit', (code, signal) => resolve(`ended while starting (${exitOf(code, signal)})`));
  });
  return { child, ready };
}

/** Runs the task on a publisher process: its result, or how it ended without one (never rejects). */
function runOnWorker(child: ChildProcess, task: WorkerTask): Promise<WorkerOutcome> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve({ result: m as WorkerResult }));
    child.once('exit', (code, signal) => resolve({ ended: `ended early (${exitOf(code, signal)})` }));
    try {
      child.send(task, (err) => err && resolve({ ended: `could not be given its task (${err.message})` }));
    } catch (err) {
      resolve({ ended: `could not be given its task (${(err as Error).message})` });
    }
  });
}

function exitOf(code: number | null, signal: NodeJS.Signals | null): string {
  return code !== null ? `exit ${code}` : `signal ${signal}`;
}

/** CPU ms of a process between two reads; NaN when it was gone at either. */
function cpuBetween(a: { self: number } | undefined, b: { self: number } | undefined): number {
  return a && b ? b.self - a.self : Number.NaN;
}

// ---------------------------------------------------------------------------------------------
// The measurement

export async function benchScale(root: string, cli: string, options: ScaleOptions = {}): Promise<Row[]> {
  const nJobs = options.jobs ?? 50;
  const apiS = options.apiSeconds ?? Number(process.env.MAM_SCALE_API_S ?? 60);
  const coldS = options.coldSeconds ?? Number(process.env.MAM_SCALE_COLD_S ?? 30);
  const idleS = options.idleSeconds ?? Number(process.env.MAM_SCALE_IDLE_S ?? 30);
  const heartbeatS = options.heartbeatS ?? 30;
  const nPublishers = options.publishers ?? 2;
  const fault = options.fault ?? (process.env.MAM_BENCH_FAULT === 'worker-exit' ? 'worker-exit' : undefined);
  const details: Record<string, unknown> = { jobs: nJobs, apiS, coldS, idleS, heartbeatS, warden: options.warden !== false };
  const rows: Row[] = [];
  const base = path.join(root, 'scale');
  const server = `mam-bench-scale-${process.pid}`;
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: path.join(root, 'home'), TMUX_TMPDIR: path.join(base, 'tmux'), MAM_TMUX_SERVER: server };
  delete env.MAM_NO_WARDEN;
  if (options.warden === false) env.MAM_NO_WARDEN = '1';
  fs.mkdirSync(env.TMUX_TMPDIR!, { recursive: true });
  fs.mkdirSync(env.HOME!, { recursive: true });
  let idle: Idle | undefined;
  // The load and the idle measurement each give their rows, or a row saying why not: one failing
  // does not take the other's rows with it.
  const part = async (name: string, run: () => Promise<Row[]>): Promise<Row[]> => {
    try {
      return await run();
    } catch (err) {
      console.error(`bench: scale ${name} failed: ${err instanceof Error ? err.stack : String(err)}`);
      return [{ name: `scale ${name}: FAILED: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200).replace(/\|/g, '/')}`, p50: Number.NaN }];
    }
  };
  try {
    let idleSetup: Row[] = [];
    if (idleS > 0) idleSetup = await part('idle setup', async () => ((idle = await startIdle()), []));
    rows.push(...(await part('load', loadPhases)));
    rows.push(...idleSetup);
    if (idle) rows.push(...(await part('idle', async () => [await measureIdle(idle!)])));
  } finally {
    if (idle) await stopIdle(idle).catch(() => undefined);
    await new TmuxBackend({ server, env }).killServer().catch(() => undefined);
    fs.rmSync(base, { recursive: true, force: true, maxRetries: 5 });
    options.details?.(details);
  }
  return rows;

  async function loadPhases(): Promise<Row[]> {
    const ws = path.join(base, 'ws-load');
    fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
    const daemonEnv = { ...env, ...options.daemonEnv };
    const { controlPlane, engine } = benchEngine(ws, daemonEnv, cli);
    const paths = controlPlane.paths;
    const workers: ChildProcess[] = [];
    const heartbeatPids: number[] = [];
    const out: Row[] = [];
    try {
      await engine.connect();
      const endpoint = engine.endpoint!;
      const brokerPid = readBrokerRecord(paths)!.pid!;
      details.brokerPid = brokerPid;

      // The durable floor, on this broker, before any load.
      const raw = await benchRawRoundTrip(endpoint, 300);
      const fsyncs = await fsyncPairs(base, 300);
      const floorP50 = percentile(raw, 50) + percentile(fsyncs, 50);
      const floorP99 = percentile(raw, 99) + percentile(fsyncs, 99);
      out.push({ name: 'scale: raw mqtt.js QoS 1 round trip, embedded broker, quiet (floor part)', p50: percentile(raw, 50), p99: percentile(raw, 99) });
      out.push({ name: "scale: two fsync'd 200-byte appends, two files (floor part)", p50: percentile(fsyncs, 50), p99: percentile(fsyncs, 99) });
      out.push({ name: 'scale: durable floor measured back to back = round trip + two fsync\'d appends (p99 = sum of p99s)', p50: floorP50, p99: floorP99 });
      // The same floor paced as the phase's events reach their subscriber (one every 1000/N ms): on
      // this machine the same work costs 2–4× after a few ms idle what it costs back to back, and the
      // path's events come paced; the goal is against this one (docs/benchmarks.md, "Which floor").
      const gapMs = 1000 / nJobs;
      const rawPaced = await benchRawRoundTrip(endpoint, 150, { gapMs });
      const fsyncsPaced = await fsyncPairs(base, 150, gapMs);
      const pacedP50 = percentile(rawPaced, 50) + percentile(fsyncsPaced, 50);
      out.push({ name: `scale: durable floor paced as the events come, one round trip and two fsync'd appends each ${gapMs} ms (the goal's reference; p99 = sum of p99s)`, p50: pacedP50, p99: percentile(rawPaced, 99) + percentile(fsyncsPaced, 99) });

      // 50 signed jobs, dispatched, owned by this process (as a waiting `mam job submit` owns its job).
      const jobs: string[] = [];
      const now = new Date().toISOString();
      for (let i = 0; i < nJobs; i++) {
        const id = newJobId();
        jobs.push(id);
        await engine.ledger.register(
          {
            ...jobRecord({ id, session: `agent-${i}` }),
            signed: true,
            timers: { start_timeout_s: 180, heartbeat_s: heartbeatS, idle_timeout_s: 4 * heartbeatS, timeout_s: 3600 },
            owner: { pid: process.pid, host: os.hostname(), token: randomBytes(8).toString('hex') },
          },
          randomBytes(16).toString('hex'),
        );
        await engine.ledger.transition(id, 'dispatched', null, { fields: { dispatched_at: now, delivered_at: now, delivery: 'typed' } });
      }

      // Measuring hooks: when this engine has each job's seq applied (by itself or found from the warden).
      const seen = new Map<string, Array<[seq: number, t: number]>>(jobs.map((j) => [j, []]));
      let appliedHereInWindow = 0;
      let window: { start: number; end: number } | undefined;
      engine.ledger.onDidChangeJob(({ job }) => {
        const list = seen.get(job.id);
        const t = wallNow();
        if (list && (list.length === 0 || list[list.length - 1]![0] < job.seq)) list.push([job.seq, t]);
      });
      engine.ledger.onDidApplyEvent(() => {
        const t = wallNow();
        if (window && t >= window.start && t <= window.end) appliedHereInWindow++;
      });

      // The real `mam event started --heartbeat N` of every job: each registers with the host's heartbeat service.
      const startedAll = performance.now();
      const started = async (id: string): Promise<void> => {
        const r = await run(process.execPath, [cli, 'event', 'started', '--job', id, '--heartbeat', String(heartbeatS), '--json'], { cwd: ws, env });
        if (r.code !== 0) throw new Error(`mam event started exited ${r.code}: ${r.stderr}`);
      };
      // The first job alone, so that the service's size with one job is known: what each further job adds is the rest.
      await started(jobs[0]!);
      const heartbeats = new HeartbeatRegistry(paths);
      const servicePid = heartbeats.servicePid();
      if (servicePid === undefined) throw new Error('no heartbeat service runs after the first `mam event started`');
      await sleep(1000);
      details.heartbeatRssOneJobMb = sumRssMb([servicePid]);
      await inBatches(jobs.slice(1), 4, started);
      details.startedAllMs = performance.now() - startedAll;
      if (heartbeats.servicePid() !== servicePid || heartbeats.list().length !== nJobs) throw new Error(`one heartbeat service should serve the ${nJobs} jobs (pid ${heartbeats.servicePid()}, ${heartbeats.list().length} registered)`);
      heartbeatPids.push(servicePid);
      await settle(jobs, 'allocated');

      const appliedAt = (job: string, seq: number): number | undefined => {
        const list = seen.get(job)!;
        let lo = 0;
        let hi = list.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (list[mid]![0] >= seq) hi = mid;
          else lo = mid + 1;
        }
        return list[lo]?.[1];
      };

      const phase = async (mode: 'api' | 'cold', seconds: number, nProcs: number): Promise<Phase> => {
        const procs = Array.from({ length: nProcs }, startWorker);
        workers.push(...procs.map((p) => p.child));
        // A publisher process that ends, at its start or midway, leaves its jobs without load and
        // its samples and CPU unknown; the phase goes on with the others and its rows say so.
        const ended: string[] = [];
        const starting = await Promise.all(procs.map((p) => p.ready));
        const startAt = wallNow() + 500;
        const durationMs = seconds * 1000;
        const perProc = Math.ceil(jobs.length / nProcs);
        const results = procs.map((p, k): Promise<WorkerOutcome> => {
          if (starting[k] !== undefined) return Promise.resolve({ ended: starting[k]! });
          return runOnWorker(p.child, {
            mode, ws, cli, env, endpoint, startAt, durationMs,
            jobs: jobs.slice(k * perProc, (k + 1) * perProc).map((id, i) => ({ id, offsetMs: ((k * perProc + i) * 1000) / jobs.length })),
            ...(fault === 'worker-exit' && k === 0 ? { exitAfterMs: durationMs / 2 } : {}),
          });
        });
        await sleep(startAt - wallNow());
        window = { start: wallNow(), end: startAt + durationMs };
        const hereBefore = appliedHereInWindow;
        const cpu0 = { broker: procCpu(brokerPid), self: process.cpuUsage(), machine: machineCpu(), hb: sumCpu(heartbeatPids) };
        await sleep(window.end - wallNow());
        const cpu1 = { broker: procCpu(brokerPid), self: process.cpuUsage(), machine: machineCpu(), hb: sumCpu(heartbeatPids) };
        details.heartbeatRssMb = sumRssMb(heartbeatPids);
        details.brokerRssMb = sumRssMb([brokerPid]);
        const windowS = (window.end - window.start) / 1000;
        const outcomes = await Promise.all(results);
        await settle(jobs, 'acknowledged');
        for (const p of procs) if (p.child.exitCode === null) p.child.kill();
        const worker: WorkerResult[] = [];
        for (const o of outcomes) {
          if ('result' in o) worker.push(o.result);
          else ended.push(o.ended);
        }
        const samples = worker.flatMap((w) => w.samples);
        const audit = checkAudit(controlPlane.audit, paths, jobs, window);
        const brokerMs = cpuBetween(cpu0.broker, cpu1.broker);
        const selfMs = (cpu1.self.user + cpu1.self.system - cpu0.self.user - cpu0.self.system) / 1000;
        const workerMs = worker.length === 0 ? Number.NaN : worker.reduce((a, w) => a + (w.cpuMs ?? Number.NaN), 0);
        const heartbeatMs = cpu1.hb - cpu0.hb;
        const machineCores = ((cpu1.machine.busy - cpu0.machine.busy) / (cpu1.machine.total - cpu0.machine.total)) * os.cpus().length;
        return {
          mode, windowS, samples, ended, publishers: nProcs,
          failures: worker.flatMap((w) => w.failures),
          warnings: worker.flatMap((w) => w.warnings ?? []),
          undelivered: samples.filter((x) => !x.delivered).length,
          appliedHere: appliedHereInWindow - hereBefore,
          audit,
          brokerMs, selfMs, workerMs, heartbeatMs, machineCores,
          // Everything this benchmark runs, in cores, beside the machine's busy cores: the rest is other load.
          oursCores: [brokerMs, selfMs, workerMs, heartbeatMs].filter((x) => !Number.isNaN(x)).reduce((a, b) => a + b, 0) / (windowS * 1000),
          latencies: [],
          unseen: 0,
        };
      };

      const phases: Array<{ label: string; r: Phase }> = [];
      if (apiS > 0) phases.push({ label: `(b) publisher API, ${nPublishers} long-lived processes`, r: await phase('api', apiS, nPublishers) });
      if (coldS > 0) phases.push({ label: "(a) cold `mam event progress` processes, handed to the host's relay", r: await phase('cold', coldS, 1) });

      // End the jobs (the heartbeat service drops them and exits); a job's completion also carries any
      // event still waiting in its outbox.
      await Promise.all(jobs.map((id) => publishJobEvent({ workspace: ws, jobId: id, event: 'completed', detail: 'done', sender: 'bench-scale', endpoint })));
      await settle(jobs, 'allocated');
      const final = checkAudit(controlPlane.audit, paths, jobs, undefined);
      details.finalAudit = { ...final, lagMs: undefined };
      const finalOk = final.missing + final.duplicated + final.unknown === 0;
      const finalNote = finalOk
        ? `after all jobs completed, outboxes ${final.outboxEvents} = audit logs ${final.auditEvents}, each exactly once`
        : `AUDIT CHECK FAILED after completion: ${final.missing} missing, ${final.duplicated} twice, ${final.unknown} in no outbox`;

      for (const { label, r } of phases) {
        for (const x of r.samples) {
          const t = appliedAt(x.job, x.seq);
          if (t === undefined) r.unseen++;
          else r.latencies.push(t - x.t0);
        }
        details[r.mode] = summarize(r);
        if (options.rawSamples) details[`${r.mode}Samples`] = r.samples;
        const lat = r.latencies;
        const a = r.audit;
        const p50 = percentile(lat, 50);
        const n = a.appliedInWindow;
        const perEvent = (ms: number): string => (Number.isNaN(ms) ? 'no figure' : `${(ms / n).toFixed(2)} ms/event`);
        const pct = (ms: number): string => (Number.isNaN(ms) ? '' : `${(ms / r.windowS / 10).toFixed(1)}% of a core`);
        const unacked = r.undelivered > 0 ? `${r.undelivered} publishes got no PUBACK within their budget and exited with "safe in the job's outbox" (applied from there)${a.missing > 0 ? `, ${a.missing} of them not yet when the phase ended` : ''}; ` : '';
        const daemon = options.warden === false ? 'aedes only, MAM_NO_WARDEN' : 'aedes + job warden';
        const appliers = options.warden === false ? 'the only subscriber' : 'the jobs\' owner; others only follow';
        const failed = r.failures.length + r.unseen > 0 ? `${r.failures.length} publishes failed, ${r.unseen} never seen applied; ` : '';
        const whose = r.mode === 'api' ? 'publisher processes' : 'spawner processes';
        const ended = r.ended.length > 0 ? `${r.ended.length} of ${r.publishers} ${whose} ${r.ended.join(', ')}: their publishes are not in the figures and their jobs got no progress after; ` : '';
        const brokerGone = Number.isNaN(r.brokerMs) ? 'the broker daemon ended during the phase; ' : '';
        out.push(
          {
            name: `scale ${label}: publish → applied, ${nJobs} jobs × progress 1/s + heartbeats every ${heartbeatS} s, ${r.windowS.toFixed(0)} s: ${(n / r.windowS).toFixed(1)} events/s applied (${(r.samples.length / r.windowS).toFixed(1)}/s progress published, ${a.heartbeatsInWindow} heartbeats; ${r.appliedHere} of ${n} applied by this engine, ${appliers}); ${ended}${brokerGone}${failed}${unacked}${finalNote}; ${Number.isNaN(p50) ? 'no figure' : `${(p50 / floorP50).toFixed(1)}×`} the floor measured back to back (${floorP50.toFixed(1)} ms), which its own work paced takes ${(pacedP50 / floorP50).toFixed(1)}× of`,
            p50,
            p99: percentile(lat, 99),
            // The goal's floor is the same work done as the events come (docs/benchmarks.md, "Which floor").
            reference: 'durable floor paced as the events come',
            ratio: Number.isNaN(p50) ? '' : `${(p50 / pacedP50).toFixed(1)}×`,
            goal: '≤ 3×',
          },
          { name: r.mode === 'api' ? `scale ${label}: one publishJobEvent call (outbox lock, append + fsync, publish, PUBACK on the publisher's connection), under this load` : `scale ${label}: one cold \`mam event progress\` process, spawn → exit, under this load`, p50: percentile(r.samples.map((x) => x.t1 - x.t0), 50), p99: percentile(r.samples.map((x) => x.t1 - x.t0), 99) },
          { name: `scale ${label}: CPU, broker daemon (${daemon}), ${perEvent(r.brokerMs)} (CPU ms per s)`, p50: r.brokerMs / r.windowS, ratio: pct(r.brokerMs) },
          { name: `scale ${label}: CPU, measuring subscriber (this process's engine), ${perEvent(r.selfMs)} (CPU ms per s)`, p50: r.selfMs / r.windowS, ratio: pct(r.selfMs) },
          { name: `scale ${label}: CPU, ${r.mode === 'api' ? `the ${nPublishers} publisher processes` : 'the cold `mam event` processes and their spawner'}${r.ended.length === r.publishers ? ' (every one ended early: no figure)' : r.ended.length > 0 ? ` (${r.ended.length} of ${r.publishers} ended early: the others only)` : ''}, ${perEvent(r.workerMs)} (CPU ms per s)`, p50: r.workerMs / r.windowS, ratio: pct(r.workerMs) },
          // The cold processes hand their events to the host's heartbeat service, which publishes them.
          ...(r.mode === 'cold' ? [{ name: `scale ${label}: CPU, the host's heartbeat service (heartbeats, and the relay that publishes the cold processes' events), ${perEvent(r.heartbeatMs)} (CPU ms per s)`, p50: r.heartbeatMs / r.windowS, ratio: pct(r.heartbeatMs) }] : []),
          // Heartbeats once, in the first phase (the longest window).
          ...(r === phases[0]!.r ? ([{
            name: `scale ${label}: heartbeats, the host's one service for ${nJobs} jobs (${(details.heartbeatRssOneJobMb as number).toFixed(0)} MB resident with one job, ${(details.heartbeatRssMb as number).toFixed(0)} MB with ${nJobs}: ${((details.heartbeatRssMb as number) / nJobs).toFixed(2)} MB per job in all; ${pct(r.heartbeatMs)}): resident MB added per running job`,
            p50: ((details.heartbeatRssMb as number) - (details.heartbeatRssOneJobMb as number)) / (nJobs - 1),
            unit: 'MB' as const,
            goal: '≤ 1 MB',
          },
          { name: `scale ${label}: heartbeats, the host's one service for ${nJobs} jobs: CPU per running job (CPU ms per s)`, p50: r.heartbeatMs / r.windowS / nJobs, ratio: `${(r.heartbeatMs / r.windowS / nJobs / 10).toFixed(3)}% of a core`, goal: '≤ 0.1% of a core' }] satisfies Row[]) : []),
          { name: `scale ${label}: machine, ${r.machineCores.toFixed(2)} of ${os.cpus().length} cores busy, ${r.oursCores.toFixed(2)} of them this benchmark's processes (the rest is other load) (busy CPU ms per s)`, p50: r.machineCores * 1000 },
        );
      }
      for (let i = 0; i < 50 && heartbeatPids.some(isAlive); i++) await sleep(100);
      details.heartbeatsLeft = heartbeatPids.filter(isAlive).length;
      return out;
    } finally {
      for (const w of workers) if (w.exitCode === null) w.kill();
      for (const pid of heartbeatPids) if (isAlive(pid)) process.kill(pid, 'SIGTERM');
      engine.dispose();
      await stopEmbeddedBroker(paths);
    }
  }

  /**
   * Waits (bounded) until every job's record holds every event the broker acknowledged, or every
   * event its outbox has ('allocated': an unacknowledged one is applied from the outbox by a
   * subscriber's periodic check, or goes out with the job's next event).
   */
  async function settle(jobs: string[], until: 'acknowledged' | 'allocated'): Promise<void> {
    const paths = new ControlPlanePaths(path.join(base, 'ws-load'));
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const behind = jobs.filter((id) => {
        const rec = JSON.parse(fs.readFileSync(paths.jobFile(id), 'utf8')) as { seq: number; missing?: number[] };
        const outbox = new JobOutbox(paths.jobDir(id));
        const acked = (): number => Number(fs.existsSync(path.join(paths.jobDir(id), 'acked')) ? fs.readFileSync(path.join(paths.jobDir(id), 'acked'), 'utf8') : 0);
        const target = until === 'allocated' ? outbox.allocatedSeq() : acked();
        return target > rec.seq || (until === 'allocated' && (rec.missing ?? []).length > 0);
      });
      if (behind.length === 0) return;
      await sleep(100);
    }
  }

  /**
   * The idle setup, made first so that the broker daemon and the monitor are minutes old when
   * measured: the first minute of a Node process holds its start-up's leftovers (lazy compiles, a
   * major GC ~45 s in: up to 90 ms at once), which are not what an idle workspace costs.
   */
  async function startIdle(): Promise<Idle> {
    const ws = path.join(base, 'ws-idle');
    fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
    const { controlPlane, sessions } = benchEngine(ws, env, cli);
    const idle: Idle = { paths: controlPlane.paths, brokerPid: 0, monitor: undefined, monitorErr: '' };
    try {
      const broker = await startEmbeddedBroker(idle.paths, new MemoryLogger(), { cliPath: cli, env: { ...env, ...options.daemonEnv } });
      idle.brokerPid = broker.pid;
      for (let i = 0; i < nJobs; i++) {
        await sessions.create({ name: `idle-${i}`, agent: 'shell', command: [process.execPath, '-e', 'setInterval(()=>{},1e9)'], baseDir: ws });
      }
      idle.monitor = spawn(process.execPath, [cli, 'monitor', '--workspace', ws], { cwd: ws, env: { ...env, ...options.monitorEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
      idle.monitor.stderr!.on('data', (d: Buffer) => (idle.monitorErr += d.toString()));
      idle.startedAt = performance.now();
      return idle;
    } catch (err) {
      await stopIdle(idle).catch(() => undefined);
      throw err;
    }
  }

  async function measureIdle(idle: Idle): Promise<Row> {
    const monitor = idle.monitor!;
    const age = (performance.now() - idle.startedAt!) / 1000;
    if (age < 60) await sleep((60 - age) * 1000);
    const tmuxPid = Number(spawnSync('tmux', ['-L', server, 'display-message', '-p', '#{pid}'], { env, encoding: 'utf8' }).stdout.trim());
    // Either process may have ended (before the window or in it): the row then says so, without its figure.
    const b0 = procCpu(idle.brokerPid);
    const m0 = monitor.exitCode === null ? procCpu(monitor.pid!) : undefined;
    const x0 = procCpu(tmuxPid);
    const machine0 = machineCpu();
    const t0 = performance.now();
    await sleep(idleS * 1000);
    const b1 = procCpu(idle.brokerPid);
    const m1 = monitor.exitCode === null ? procCpu(monitor.pid!) : undefined;
    const x1 = procCpu(tmuxPid);
    const machine1 = machineCpu();
    const seconds = (performance.now() - t0) / 1000;
    const brokerMs = cpuBetween(b0, b1);
    const monitorMs = cpuBetween(m0, m1);
    // Not in the goal, for the record: the tmux clients the monitor runs, and the tmux server answering them.
    const monitorChildrenMs = m0 && m1 ? m1.children - m0.children : Number.NaN;
    const tmuxServerMs = cpuBetween(x0, x1);
    const perS = (brokerMs + monitorMs) / seconds;
    const machineCores = ((machine1.busy - machine0.busy) / (machine1.total - machine0.total)) * os.cpus().length;
    const ageS = (t0 - idle.startedAt!) / 1000;
    details.idle = { seconds, ageS, brokerMs, monitorMs, monitorChildrenMs, tmuxServerMs, brokerPct: brokerMs / seconds / 10, monitorPct: monitorMs / seconds / 10, machineCores };
    const gone = [
      ...(Number.isNaN(brokerMs) ? ['the broker daemon'] : []),
      ...(Number.isNaN(monitorMs) ? [`\`mam monitor\` (${monitor.exitCode !== null ? `exit ${monitor.exitCode}` : `signal ${monitor.signalCode}`}${idle.monitorErr.trim() ? `: ${idle.monitorErr.trim().split('\n').at(-1)!.slice(0, 120)}` : ''})`] : []),
    ];
    return {
      name: `scale: idle, ${nJobs} live sessions, no jobs, ${seconds.toFixed(0)} s (broker and monitor ${ageS.toFixed(0)} s old): ${gone.length > 0 ? `ENDED EARLY: ${gone.join(' and ')} ended before or during the window, so no figure; ` : ''}broker daemon (with warden) ${(brokerMs / seconds / 10).toFixed(2)}% + \`mam monitor\` (interval 5 s) ${(monitorMs / seconds / 10).toFixed(2)}% of a core (CPU ms per s; besides: its tmux clients ${(monitorChildrenMs / seconds / 10).toFixed(2)}%, the tmux server ${(tmuxServerMs / seconds / 10).toFixed(2)}%; machine ${machineCores.toFixed(2)} cores busy)`,
      p50: perS,
      ratio: `${(perS / 10).toFixed(2)}%`,
      goal: '< 1% of a core',
    };
  }

  async function stopIdle(idle: Idle): Promise<void> {
    const monitor = idle.monitor;
    if (monitor && monitor.exitCode === null) {
      monitor.kill('SIGTERM');
      await new Promise<void>((r) => {
        const t = setTimeout(() => {
          monitor.kill('SIGKILL');
          r();
        }, 3000);
        monitor.once('exit', () => {
          clearTimeout(t);
          r();
        });
      });
    }
    await stopEmbeddedBroker(idle.paths);
  }
}

interface Idle {
  paths: ControlPlanePaths;
  brokerPid: number;
  monitor: ChildProcess | undefined;
  monitorErr: string;
  /** When the monitor was started (the broker a little before). */
  startedAt?: number;
}

interface Phase {
  mode: 'api' | 'cold';
  windowS: number;
  samples: Sample[];
  /** Publisher processes started, and how each that gave no result ended. */
  publishers: number;
  ended: string[];
  failures: string[];
  warnings: string[];
  undelivered: number;
  appliedHere: number;
  audit: AuditCheck;
  brokerMs: number;
  selfMs: number;
  workerMs: number;
  heartbeatMs: number;
  machineCores: number;
  oursCores: number;
  /** Filled once every event is in: publish → applied, per progress event. */
  latencies: number[];
  unseen: number;
}

function summarize(r: Phase): Record<string, unknown> {
  const q = (xs: number[]) => (xs.length ? { n: xs.length, p50: percentile(xs, 50), p90: percentile(xs, 90), p99: percentile(xs, 99), max: Math.max(...xs) } : { n: 0 });
  const { samples, latencies, audit, ...rest } = r;
  const { lagMs, ...counts } = audit;
  return { ...rest, published: samples.length, audit: counts, latency: q(latencies), call: q(samples.map((x) => x.t1 - x.t0)), auditLag: q(lagMs) };
}

/** Two fsync'd 200-byte appends to two files, as an event path's two durable writes; `gapMs` idle before each. */
async function fsyncPairs(dir: string, n: number, gapMs = 0): Promise<number[]> {
  fs.mkdirSync(dir, { recursive: true });
  const files = ['floor-a.ndjson', 'floor-b.ndjson'].map((f) => path.join(dir, f));
  const fds = files.map((f) => fs.openSync(f, 'a'));
  const line = `${'x'.repeat(199)}\n`;
  const samples: number[] = [];
  try {
    for (let i = 0; i < n + 20; i++) {
      if (gapMs > 0) await sleep(gapMs);
      const t = performance.now();
      for (const fd of fds) {
        fs.appendFileSync(fd, line);
        fs.fsyncSync(fd);
      }
      if (i >= 20) samples.push(performance.now() - t);
    }
  } finally {
    for (const fd of fds) fs.closeSync(fd);
    for (const f of files) fs.rmSync(f, { force: true });
  }
  return samples;
}

interface AuditCheck {
  outboxEvents: number;
  auditEvents: number;
  /** In an outbox, not in the audit log. */
  missing: number;
  /** In the audit log more than once. */
  duplicated: number;
  /** In the audit log, in no outbox. */
  unknown: number;
  appliedInWindow: number;
  heartbeatsInWindow: number;
  /** Audit `at` − payload `ts` of the events applied in the window (ms resolution both). */
  lagMs: number[];
}

/** Every event in the outboxes is in the audit logs exactly once, and nothing else is. */
function checkAudit(audit: { readEntries(id: string): { entries: Array<Record<string, unknown>> } }, paths: ControlPlanePaths, jobs: string[], window: { start: number; end: number } | undefined): AuditCheck {
  const r: AuditCheck = { outboxEvents: 0, auditEvents: 0, missing: 0, duplicated: 0, unknown: 0, appliedInWindow: 0, heartbeatsInWindow: 0, lagMs: [] };
  for (const id of jobs) {
    const sent = new Map(new JobOutbox(paths.jobDir(id)).events().map((p) => [p.seq, p]));
    const logged = new Map<number, number>();
    for (const e of audit.readEntries(id).entries) {
      if (e.type !== 'event') continue;
      r.auditEvents++;
      const seq = e.seq as number;
      logged.set(seq, (logged.get(seq) ?? 0) + 1);
      if (!sent.has(seq)) r.unknown++;
      const at = Date.parse(e.at as string);
      if (window && at >= window.start && at <= window.end) {
        r.appliedInWindow++;
        if (e.event === 'heartbeat') r.heartbeatsInWindow++;
        r.lagMs.push(at - Date.parse(e.ts as string));
      }
    }
    r.outboxEvents += sent.size;
    for (const seq of sent.keys()) if (!logged.has(seq)) r.missing++;
    for (const n of logged.values()) if (n > 1) r.duplicated += n - 1;
  }
  return r;
}

async function inBatches<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

function run(file: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
