/**
 * The job event path and dispatch, each beside its reference, in one run:
 * - publisher API → subscriber's applied event, beside raw mqtt.js QoS 1 round trips;
 * - a cold `mam event` process, beside `node -e 0` and `mosquitto_pub -q 1`;
 * - submit → `started` with an agent that acknowledges at once.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { waitForEvent } from '../src/core/base/emitter';
import { newJobId } from '../src/core/base/ids';
import { submitJob } from '../src/core/jobs/submit';
import { stopEmbeddedBroker } from '../src/core/messaging/embeddedBroker';
import { publishJobEvent } from '../src/core/messaging/publisher';
import { HeartbeatRegistry } from '../src/core/messaging/heartbeatRegistry';
import { topics } from '../src/core/messaging/protocol';
import { TmuxBackend } from '../src/core/mux/tmux';
import { jobRecord } from '../test/support/rows';
import { benchRawRoundTrip } from './mqtt';
import { benchEngine } from './engine';
import { until } from '../test/support/helpers';
import { alternate, coldEnv, percentile, timeCommand, timeOnce, type Row } from './stats';

const FAKE_AGENT = path.resolve(__dirname, '../test/fixtures/fake-agent.js');

export async function benchJobs(root: string, cli: string, runs: number): Promise<Row[]> {
  const ws = path.join(root, 'ws-jobs');
  fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
  const server = `mam-bench-jobs-${process.pid}`;
  // The subscriber measured is this engine's: the broker daemon's job warden would race it to every event.
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: path.join(root, 'home'), TMUX_TMPDIR: path.join(root, 'tmux'), MAM_TMUX_SERVER: server, MAM_NO_WARDEN: '1' };
  fs.mkdirSync(env.TMUX_TMPDIR!, { recursive: true });
  const { controlPlane, sessions, engine } = benchEngine(ws, env, cli);
  const rows: Row[] = [];
  try {
    await engine.connect();
    const endpoint = engine.endpoint!;
    const id = newJobId();
    await engine.ledger.register({ ...jobRecord({ id }), signed: true }, 'bench-token');
    await engine.ledger.transition(id, 'dispatched', null, { fields: { dispatched_at: new Date().toISOString() } });

    // Publisher API → applied by the subscriber (outbox append, signed QoS 1, ledger apply with fsync).
    const applied: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      const seen = waitForEvent(engine.ledger.onDidApplyEvent, (e) => e.job.id === id, 5000);
      await publishJobEvent({ workspace: ws, jobId: id, event: 'progress', detail: `step ${i}`, sender: 'bench', endpoint });
      await seen;
      if (i >= 20) applied.push(performance.now() - t);
    }
    const raw = await benchRawRoundTrip(endpoint, 500);
    const rawP50 = percentile(raw, 50);
    const appliedP50 = percentile(applied, 50);
    rows.push({ name: 'raw mqtt.js QoS 1 round trip, embedded broker (reference)', p50: rawP50, p99: percentile(raw, 99) });
    rows.push({ name: 'event path: publisher API → subscriber applied it (outbox, signature, audit log, record)', p50: appliedP50, p99: percentile(applied, 99), reference: 'raw QoS 1 round trip', ratio: `${(appliedP50 / rawP50).toFixed(1)}×`, goal: '≤ 1.5×' });

    // A cold `mam event` process, beside a bare node and mosquitto_pub on the same broker: each run
    // of the one right after the other, so the machine's other load falls on both alike. Timed
    // without NODE_EXTRA_CA_CERTS (coldEnv), as on most machines, and, when this machine sets it, also
    // with it, where every node start reads that bundle of certificates first. The goal is judged
    // without it: a start slowed for every process alike makes any ratio look smaller.
    // First with no heartbeat service on the host (the process publishes for itself), then as an
    // agent's job runs: after `mam event started` the host's service runs and is its relay.
    const eventArgs = [cli, 'event', 'progress', '--job', id, '--detail', 'cold'];
    const coldRows = (label: string, what: string, runEnv: NodeJS.ProcessEnv, goal: boolean): Row[] => {
      const { reference: bare, measured: event } = alternate(runs, () => timeOnce(process.execPath, ['-e', '0'], { env: runEnv }), () => timeOnce(process.execPath, eventArgs, { cwd: ws, env: runEnv }));
      const bareP50 = percentile(bare, 50);
      return [
        { name: `\`node -e 0\`${label} (reference)`, p50: bareP50, p99: percentile(bare, 99) },
        { name: `\`mam event progress\`${label} (cold process: ${what}; the bundle's code cache written by an earlier run)`, p50: percentile(event, 50), p99: percentile(event, 99), reference: '`node -e 0`', ratio: `${(percentile(event, 50) / bareP50).toFixed(2)}×`, ...(goal ? { goal: '≤ 1.3×' } : {}) },
      ];
    };
    const registry = new HeartbeatRegistry(controlPlane.paths);
    rows.push(...coldRows(', no heartbeat service on the host', 'outbox, sign, publish, PUBACK', coldEnv(env), false));
    const started = spawnSync(process.execPath, [cli, 'event', 'started', '--job', id, '--heartbeat', '600'], { cwd: ws, env: coldEnv(env), encoding: 'utf8' });
    if (started.status !== 0) throw new Error(`mam event started: ${started.stderr}`);
    await until(() => fs.existsSync(registry.relayFile), 10_000, "the host's heartbeat service to open its relay");
    const relayed = spawnSync(process.execPath, eventArgs, { cwd: ws, env: coldEnv(env), encoding: 'utf8' });
    if (!relayed.stdout.includes('relay')) throw new Error(`mam event progress was not handed to the relay: ${relayed.stdout}${relayed.stderr}`);
    rows.push(...coldRows('', "outbox, sign, handed to the host's relay — an agent's job after `mam event started`", coldEnv(env), true));
    // The first run after a build or an install pays for writing the cache (at its exit).
    const caches = (): string[] => fs.readdirSync(path.dirname(cli)).filter((f) => f.startsWith('cli-event.js.') && f.endsWith('.v8cache')).map((f) => path.join(path.dirname(cli), f));
    const first = alternate(Math.min(runs, 15), () => timeOnce(process.execPath, ['-e', '0'], { env: coldEnv(env) }), () => {
      for (const f of caches()) fs.rmSync(f, { force: true });
      return timeOnce(process.execPath, eventArgs, { cwd: ws, env: coldEnv(env) });
    });
    rows.push({ name: '`mam event progress`, the first run after a build (no code cache yet: it compiles the bundle and writes the cache at exit)', p50: percentile(first.measured, 50), p99: percentile(first.measured, 99), reference: '`node -e 0`', ratio: `${(percentile(first.measured, 50) / percentile(first.reference, 50)).toFixed(2)}×` });
    if (env.NODE_EXTRA_CA_CERTS) rows.push(...coldRows(" with this machine's NODE_EXTRA_CA_CERTS", "outbox, sign, handed to the host's relay", env, false));
    const service = registry.servicePid();
    if (service !== undefined) process.kill(service, 'SIGTERM');
    if (spawnSync('mosquitto_pub', ['--help']).error === undefined) {
      const pub = timeCommand('mosquitto_pub', ['-q', '1', '-h', endpoint.host, '-p', String(endpoint.port), '-u', endpoint.username ?? '', '-P', endpoint.password ?? '', '-t', topics.events('bench', 'x'), '-m', 'x'], runs, { env });
      rows.push({ name: '`mosquitto_pub -q 1` (reference: a C client)', p50: percentile(pub, 50), p99: percentile(pub, 99) });
    }

    // Dispatch: submit → started, with an agent that acknowledges as soon as it reads the brief.
    await sessions.create({ name: 'instant', agent: 'claude', command: [process.execPath, FAKE_AGENT, '--as', 'claude', '--mode', 'instant'], baseDir: ws });
    const dispatch: number[] = [];
    for (let i = 0; i < 8; i++) {
      const t = performance.now();
      const started = waitForEvent(engine.ledger.onDidChangeJob, (c) => c.job.state === 'started' && c.job.session === 'instant', 30_000);
      const done = submitJob(engine, { session: 'instant', prompt: `task ${i}`, wait: true, baseDir: ws });
      await started;
      dispatch.push(performance.now() - t);
      await done;
    }
    rows.push({ name: 'dispatch: submit → started (ready check, typing, Enter, the agent runs `mam event started`)', p50: percentile(dispatch, 50), p99: percentile(dispatch, 99) });
  } finally {
    engine.dispose();
    await new TmuxBackend({ server, env }).killServer();
    await stopEmbeddedBroker(controlPlane.paths);
  }
  return rows;
}

