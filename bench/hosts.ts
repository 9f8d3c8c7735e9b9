/**
 * Three runner hosts on one broker, as test/faults/manyHosts.test.ts sets them up: four network
 * namespaces on one switch, Mosquitto on the hub with the per-user ACL of docs/scaling.md, three
 * sessions of the scripted agent on each runner host and `mam remote run` there, the submitter's
 * workspace and its judge (`mam monitor`) on the hub. 45 jobs (started, progress, completed; the
 * agent works 200 ms) go round-robin to `remote:Rk/Sj` at once. Read from the records afterwards:
 * events applied per second by the submitter; each event from the agent's `mam event` (its `ts`)
 * to applied on its own host (the mirror job's audit log) and to applied by the submitter (after
 * the runner relayed it); a job from submit to completed; and, with three jobs held open on R3, the
 * time from SIGKILL of R3's runner to each job failed `runner_lost`.
 * Run alone: `node -r esbuild-register bench/hosts.ts` (after `npm run build`; needs root and Mosquitto).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { MemoryLogger } from '../src/core/base/log';
import type { BrokerEndpoint } from '../src/core/messaging/brokerRecord';
import { JobOutbox } from '../src/core/messaging/outbox';
import { workspaceIdOf } from '../src/core/messaging/protocol';
import { ControlPlane } from '../src/core/store/controlPlane';
import { isTerminal } from '../src/core/store/jobSchema';
import { until, type WatchedProcess } from '../test/support/helpers';
import { mosquittoMissing } from '../test/support/mosquitto';
import { HostNet, netnsMissing, startMosquittoOn, type Host } from '../test/support/netns';
import { aclFor } from '../test/support/scalingAcl';
import { percentile, renderTable, type Row } from './stats';

const FAKE_AGENT = path.resolve(__dirname, '../test/fixtures/fake-agent.js');
const SUBMIT_MANY = path.resolve(__dirname, '../test/support/submitMany.ts');
const RUNNERS = ['R1', 'R2', 'R3'] as const;
const SESSIONS = ['S1', 'S2', 'S3'] as const;
const JOBS = 45;
const FAR = { idleTimeoutS: 300, startTimeoutS: 300, timeoutS: 600 };
const LABEL = 'three runner hosts (network namespaces, one Mosquitto, per-user ACLs)';

interface Place {
  host: Host;
  ws: string;
  env: NodeJS.ProcessEnv;
  cp: ControlPlane;
}

export async function benchHosts(root: string, cli: string): Promise<Row[]> {
  const missing = netnsMissing() ?? mosquittoMissing();
  if (missing) return [{ name: `${LABEL}: not measured: ${missing}`, p50: Number.NaN }];
  const net = HostNet.create(4);
  const procs: WatchedProcess[] = [];
  let stopBroker = async (): Promise<void> => undefined;
  try {
    const secret = randomBytes(24).toString('hex');
    const base = path.join(root, 'hosts');
    const place = (host: Host, name: string): Place => {
      const ws = path.join(base, name);
      fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
      const env = { ...process.env, HOME: path.join(root, 'home'), TMUX_TMPDIR: path.join(root, 'tmux'), MAM_TMUX_SERVER: `mam-bench-hosts-${process.pid}-${name}` };
      fs.mkdirSync(env.TMUX_TMPDIR, { recursive: true });
      return { host, ws, env, cp: new ControlPlane(ws, { logger: new MemoryLogger() }) };
    };
    const [hubHost, ...runnerHosts] = net.hosts as [Host, Host, Host, Host];
    const hub = place(hubHost, 'hub');
    const runners = RUNNERS.map((name, k) => place(runnerHosts[k]!, name));
    const acl = aclFor(workspaceIdOf(hub.ws), RUNNERS.map((name, k) => ({ name, workspace: workspaceIdOf(runners[k]!.ws) })));
    fs.mkdirSync(path.join(base, 'mosquitto'), { recursive: true });
    const broker = await startMosquittoOn(net, hubHost, path.join(base, 'mosquitto'), hub.env, { acl: { users: acl } });
    stopBroker = broker.stop;
    writeEnv(hub.ws, broker.users.submitter!, secret);
    RUNNERS.forEach((name, k) => writeEnv(runners[k]!.ws, broker.users[`runner-${name}`]!, secret));

    const mam = async (p: Place, args: string[]) => {
      const r = await net.run(p.host, [process.execPath, cli, ...args], { cwd: p.ws, env: p.env }, 120_000);
      if (r.exitCode !== 0) throw new Error(`mam ${args.slice(0, 2).join(' ')} on ${p.host.ns} exited ${r.exitCode}: ${r.stderr.trim()}`);
      return r.stdout;
    };
    const spawnOn = (p: Place, argv: string[], env: NodeJS.ProcessEnv = {}) => {
      const child = net.spawn(p.host, argv, { cwd: p.ws, env: { ...p.env, ...env } });
      procs.push(child);
      return child;
    };
    const submit = async (specs: unknown[]): Promise<string[]> => {
      const r = await net.run(hubHost, [process.execPath, '-r', require.resolve('esbuild-register'), SUBMIT_MANY, hub.ws, JSON.stringify(specs)], { cwd: hub.ws, env: { ...hub.env, MAM_NO_WARDEN: '1' } }, 120_000);
      if (r.exitCode !== 0) throw new Error(`submitMany: ${r.stderr.trim()}`);
      return (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Array<{ id: string }>).map((j) => j.id);
    };

    const agent = [process.execPath, FAKE_AGENT, '--as', 'claude', '--mode', 'work', '--work-ms', '200'].map((w) => JSON.stringify(w)).join(' ');
    await Promise.all(runners.flatMap((p) => SESSIONS.map((s) => mam(p, ['session', 'create', '--agent', 'claude', '--name', s, '--command', agent]))));
    const runnerProcs = await Promise.all(runners.map(async (p, k) => {
      const r = spawnOn(p, [process.execPath, cli, 'remote', 'run', '--name', RUNNERS[k]!]);
      await r.waitFor(/listening on/, 60_000);
      return r;
    }));
    const judge = spawnOn(hub, [process.execPath, cli, 'monitor'], { MAM_DEBUG: '1' });
    await until(() => RUNNERS.every((r) => judge.stderr.includes(`runner ${r} is online`)), 60_000, 'the judge to hear every runner online', 50);

    // The load: 45 jobs at once.
    const specs = Array.from({ length: JOBS }, (_, i) => ({ session: `remote:${RUNNERS[i % 3]}/${SESSIONS[Math.floor(i / 3) % 3]}`, prompt: `job ${i}`, heartbeatS: 30, ...FAR }));
    const ids = await submit(specs);
    await until(() => ids.every((id) => isTerminal(hub.cp.jobs.require(id).state)), 180_000, 'the jobs to end', 200);
    const jobs = ids.map((id) => hub.cp.jobs.require(id));
    const completed = jobs.filter((j) => j.state === 'completed').length;

    // Every event: from its ts to applied on its host, and to applied by the submitter.
    const local: number[] = [];
    const total: number[] = [];
    const relay: number[] = [];
    let outboxEvents = 0;
    let submitterEvents = 0;
    let first = Infinity;
    let last = 0;
    ids.forEach((id, i) => {
      const runner = runners[i % 3]!;
      const appliedThere = new Map<number, number>();
      for (const e of runner.cp.audit.readEntries(id).entries) if (e.type === 'event') appliedThere.set(e.seq, Date.parse(e.at));
      outboxEvents += new JobOutbox(runner.cp.paths.jobDir(id)).events().length;
      for (const e of hub.cp.audit.readEntries(id).entries) {
        if (e.type !== 'event') continue;
        submitterEvents++;
        const ts = Date.parse(e.ts ?? e.at);
        const at = Date.parse(e.at);
        first = Math.min(first, ts);
        last = Math.max(last, at);
        total.push(at - ts);
        const there = appliedThere.get(e.seq);
        if (there !== undefined) {
          local.push(there - ts);
          relay.push(at - there);
        }
      }
    });
    const jobMs = jobs.map((j) => Date.parse(j.finished_at!) - Date.parse(j.created_at));

    // A runner killed: three jobs held open on R3, then SIGKILL of its runner.
    const held = await submit(SESSIONS.map((s) => ({ session: `remote:R3/${s}`, prompt: '[fake-agent mode: heartbeats] hold', heartbeatS: 1, ...FAR })));
    await until(() => held.every((id) => hub.cp.jobs.require(id).state === 'started'), 60_000, "R3's held jobs to start", 50);
    const killedAt = Date.now();
    process.kill(runnerProcs[2]!.pid, 'SIGKILL');
    await until(() => held.every((id) => isTerminal(hub.cp.jobs.require(id).state)), 60_000, "R3's held jobs to end", 20);
    const lost = held.map((id) => hub.cp.jobs.require(id));
    const lostMs = lost.map((j) => Date.parse(j.finished_at!) - killedAt);
    const lostNote = lost.every((j) => j.reason === 'runner_lost') ? 'each failed runner_lost' : `ended ${lost.map((j) => `${j.state} (${j.reason})`).join(', ')}`;

    const seconds = (last - first) / 1000;
    const once = outboxEvents === submitterEvents ? `outboxes ${outboxEvents} = submitter's audit logs ${submitterEvents}` : `AUDIT MISMATCH: outboxes ${outboxEvents}, submitter's audit logs ${submitterEvents}`;
    const head = `${LABEL}: ${JOBS} jobs of the scripted agent (3 events each) at once over 9 sessions, ${completed} completed: ${(submitterEvents / seconds).toFixed(1)} events/s applied by the submitter over ${seconds.toFixed(1)} s; ${once}`;
    return [
      {
        name: `${head}; an event: the agent's \`mam event\` → applied by the submitter (relayed by its runner; of which on the agent's host, to its mirror job: ${ms(local)}; the relay: ${ms(relay)})`,
        p50: percentile(total, 50),
        p99: percentile(total, 99),
      },
      { name: `${LABEL}: a job, submitted → completed (dispatch, typing, the agent's three events)`, p50: percentile(jobMs, 50), p99: percentile(jobMs, 99) },
      { name: `${LABEL}: a runner killed (SIGKILL) with 3 jobs open → each failed by the submitter's judge (${lostNote}; the jobs' timers: 300 s)`, p50: percentile(lostMs, 50), p99: percentile(lostMs, 99), goal: 'at once, not at a timer' },
    ];
  } finally {
    for (const p of procs) await p.stop(2_000);
    await stopBroker();
    await net.dispose();
  }
}

function writeEnv(ws: string, e: BrokerEndpoint, secret: string): void {
  fs.writeFileSync(path.join(ws, '.mam.env'), [`MQTT_BROKER=${e.host}`, `MQTT_PORT=${e.port}`, `MQTT_USERNAME=${e.username}`, `MQTT_PASSWORD=${e.password}`, `MAM_DISPATCH_SECRET=${secret}`, ''].join('\n'), { mode: 0o600 });
}

if (require.main === module) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-bench-hosts-'));
  void benchHosts(root, path.resolve(__dirname, '../dist/cli.js'))
    .then((rows) => console.log(renderTable(rows)))
    .finally(() => fs.rmSync(root, { recursive: true, force: true, maxRetries: 5 }));
}

/** p50 / p99 of a sample, in ms, for a row's name. */
function ms(xs: number[]): string {
  return `${percentile(xs, 50).toFixed(0)} / ${percentile(xs, 99).toFixed(0)} ms p50 / p99`;
}
