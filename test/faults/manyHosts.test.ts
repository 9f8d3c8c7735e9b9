/**
 * Many hosts: three runner hosts and a submitter host, each in its own network namespace on one
 * switch (test/support/netns.ts, HostNet), sharing one Mosquitto with per-user ACLs — the ACL
 * docs/scaling.md gives, so that example is known to let MAM work and to keep runners apart.
 *
 *   hub 10.213.1.1   Mosquitto, the submitter's workspace, its judge (`mam monitor`), the jobs
 *   r1..r3 .2–.4     a workspace each with sessions S1..S3 (the scripted agent, as claude) and
 *                    `mam remote run --name Rk`
 *
 * 50 jobs are spread over them (`remote:Rk/Sj`, submitted --no-wait from one process). Mid-run
 * r1's link goes down for a few events' time (shorter than the keepalive: nothing may fail), and a
 * runner host's user tries to make R1 look lost (the ACL refuses). Three of r3's jobs never end;
 * once they have started and r1's and r2's jobs are done, r3 goes down whole (every process on it
 * killed, as at a power cut): its open jobs must fail at once (`runner_lost`; every timer is 300 s
 * or more). Then r3 comes back: `mam session resume --all` brings its sessions back in their
 * conversations, its runner starts again, and three more jobs complete there.
 *
 * Asserted at the end, as bench/scale.ts's checkAudit does: every event in every job's outbox (on
 * the runner host that ran it) is in the submitter's audit log exactly once, and in the runner
 * host's own; no audit event that no outbox holds; no seq gap left.
 *
 * No sleeps: each step waits, bounded, on a record, a log line or a process.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { JobOutbox } from '../../src/core/messaging/outbox';
import { topics, workspaceIdOf } from '../../src/core/messaging/protocol';
import { RunnerPresence } from '../../src/core/remote/presence';
import { isTerminal, type JobRecord } from '../../src/core/store/jobSchema';
import type { BrokerEndpoint } from '../../src/core/messaging/brokerRecord';
import { CLI, FAKE_AGENT, readAgentLog, tempDir, until, type WatchedProcess } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';
import { mosquittoMissing } from '../support/mosquitto';
import { HostNet, netnsMissing, startMosquittoOn, type Host, type NsMosquitto } from '../support/netns';
import { itNeeds } from '../support/needs';
import { aclFor } from '../support/scalingAcl';

const SECRET = randomBytes(24).toString('hex');
const RUNNERS = ['R1', 'R2', 'R3'] as const;
const SESSIONS = ['S1', 'S2', 'S3'] as const;
const JOBS = 50;
const FAR = { idleTimeoutS: 300, startTimeoutS: 300, timeoutS: 600 };
const SUBMIT_MANY = path.join(__dirname, '../support/submitMany.ts');
const PUBLISH_AND_WATCH = path.join(__dirname, '../support/publishAndWatch.ts');

describe('faults: three runner hosts on one Mosquitto, 50 jobs (network namespaces)', function () {
  this.timeout(240_000);
  let net: HostNet | undefined;
  let broker: NsMosquitto | undefined;
  let fixtures: JobFixture[] = [];
  let procs: Array<{ name: string; p: WatchedProcess }> = [];

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      for (const { name, p } of procs) console.error(`--- ${name} (pid ${p.pid}, exit ${p.code}):\n${p.stdout.slice(-4000)}\n${p.stderr.slice(-4000)}`);
      if (broker) console.error(`--- mosquitto.log:\n${broker.log().split('\n').filter((l) => !/mam-event-|mam-dispatch-|New connection from|disconnected\.$/.test(l)).slice(-40).join('\n')}`);
    }
    for (const { p } of procs) await p.stop(2_000);
    for (const f of fixtures) await f.dispose();
    await broker?.stop();
    await net?.dispose();
    net = broker = undefined;
    fixtures = [];
    procs = [];
  });

  itNeeds(netnsMissing() ?? mosquittoMissing(), '50 jobs over R1..R3: every event once; a blip fails nothing; a forged presence is refused; r3 killed → its open jobs fail runner_lost at once; r3 back → its sessions resume and take jobs', async () => {
    net = HostNet.create(4);
    const [hub, ...runnerHosts] = net.hosts as [Host, Host, Host, Host];
    const sw = jobFixture();
    const rws = RUNNERS.map(() => jobFixture());
    fixtures = [sw, ...rws];
    const swId = workspaceIdOf(sw.workspace);
    broker = await startMosquittoOn(net, hub, tempDir('mosquitto'), sw.env, { acl: { users: aclFor(swId, RUNNERS.map((name, k) => ({ name, workspace: workspaceIdOf(rws[k]!.workspace) }))) } });
    const user = (name: string): BrokerEndpoint => broker!.users[name]!;
    writeEnv(sw, user('submitter'));
    RUNNERS.forEach((name, k) => writeEnv(rws[k]!, user(`runner-${name}`)));

    const mam = (host: Host, f: JobFixture, args: string[]) => net!.run(host, [process.execPath, CLI, ...args], { cwd: f.workspace, env: f.env }, 90_000);
    const spawnOn = (host: Host, f: JobFixture, name: string, argv: string[], env: Record<string, string> = {}) => {
      const p = net!.spawn(host, argv, { cwd: f.workspace, env: { ...f.env, ...env } });
      procs.push({ name, p });
      return p;
    };
    const startRunner = async (k: number) => {
      const p = spawnOn(runnerHosts[k]!, rws[k]!, `runner ${RUNNERS[k]}`, [process.execPath, CLI, 'remote', 'run', '--name', RUNNERS[k]!]);
      await p.waitFor(new RegExp(`runner ${RUNNERS[k]} listening on mam/remote/${RUNNERS[k]}/dispatch/\\+ at 10\\.213\\.1\\.1:1883`), 30_000);
      return p;
    };

    // Each runner host: three sessions of the scripted agent (as claude), made on that host, so its
    // tmux server, its agents and every `mam event` they run are there.
    const agent = (f: JobFixture) => [process.execPath, FAKE_AGENT, '--as', 'claude', '--log', f.log, '--mode', 'instant'].map((w) => JSON.stringify(w)).join(' ');
    await Promise.all(RUNNERS.flatMap((_, k) => SESSIONS.map(async (s) => {
      const r = await mam(runnerHosts[k]!, rws[k]!, ['session', 'create', '--agent', 'claude', '--name', s, '--command', agent(rws[k]!)]);
      assert.equal(r.exitCode, 0, r.stderr);
    })));
    const conversations = await Promise.all(rws.map(async (f) => Promise.all(SESSIONS.map(async (s) => (await f.controlPlane.sessions.get(s))!.conversation_id))));
    const runners = await Promise.all(RUNNERS.map((_, k) => startRunner(k)));

    // The judge of jobs nobody waits on (what a --no-wait submit starts on a broker of your own).
    // MAM_DEBUG: its log says what it heard of each runner.
    const judge = spawnOn(hub, sw, 'mam monitor (the judge)', [process.execPath, CLI, 'monitor'], { MAM_DEBUG: '1' });
    await until(() => /runner R3 is online/.test(judge.stderr) || judge.code !== undefined, 30_000, 'the judge to hear the runners online');
    assert.equal(judge.code, undefined, judge.stderr);

    // 50 jobs, spread round-robin over R1..R3 and their sessions; one job per session of R3 never ends.
    const specs = Array.from({ length: JOBS }, (_, i) => {
      const k = i % 3;
      const s = Math.floor(i / 3) % 3;
      const holds = k === 2 && i < 9; // R3's first job for each of S1..S3
      return { session: `remote:${RUNNERS[k]}/${SESSIONS[s]}`, prompt: `[fake-agent mode: ${holds ? 'heartbeats' : 'instant'}] job ${i}`, heartbeatS: holds ? 1 : 30, ...FAR };
    });
    const submitted = await submitMany(hub, sw, specs);
    assert.equal(submitted.length, JOBS);
    assert.ok(submitted.every((j) => j.state === 'dispatched'), JSON.stringify(submitted.filter((j) => j.state !== 'dispatched')));
    const ids = submitted.map((j) => j.id);
    const runnerOf = (id: string) => ids.indexOf(id) % 3;
    const jobsOf = (k: number) => ids.filter((_, i) => i % 3 === k);
    const holders = ids.filter((_, i) => i % 3 === 2 && i < 9);
    const job = (id: string): JobRecord => sw.controlPlane.jobs.require(id);

    // A blip: r1's link goes down while its agents publish three more events, then comes back.
    // Far shorter than the keepalive: no connection drops, nothing fails.
    const r1Outboxes = () => jobsOf(0).reduce((n, id) => n + new JobOutbox(rws[0]!.controlPlane.paths.jobDir(id)).allocatedSeq(), 0);
    await until(() => jobsOf(0).some((id) => job(id).state === 'started'), 30_000, "one of R1's jobs to start");
    const beforeCut = r1Outboxes();
    net.cut(runnerHosts[0]!);
    await until(() => r1Outboxes() >= beforeCut + 3, 30_000, "r1's agents to publish three more events while its link is down");
    net.restore(runnerHosts[0]!);

    // A runner host's user, which holds the dispatch secret, says R1 is offline: the ACL refuses it
    // (R2's user may write only under mam/remote/R2/). The admin's subscription shows what passed.
    const marker = 'mam/remote/R2/marker';
    const forged = await script(runnerHosts[1]!, rws[1]!, PUBLISH_AND_WATCH, {
      watcher: broker.endpoint, filters: ['mam/remote/+/presence', marker], publisher: user('runner-R2'),
      messages: [{ topic: topics.presence('R1'), payload: new RunnerPresence('R1', SECRET).message('offline') }, { topic: marker, payload: 'after the forgery' }], until: marker,
    }) as Array<{ topic: string }>;
    assert.deepEqual(forged.map((m) => m.topic), [marker], "R1's presence was not written by R2's user; the marker was");

    // R1 and R2 finish their jobs; R3's three holders start and never end.
    await until(() => [0, 1].every((k) => jobsOf(k).every((id) => isTerminal(job(id).state))) && holders.every((id) => job(id).state === 'started'), 120_000, "R1's and R2's jobs to end and R3's three holders to start", 100);
    for (const k of [0, 1]) for (const id of jobsOf(k)) assert.deepEqual([job(id).state, job(id).reason], ['completed', null], `job ${id} on ${RUNNERS[k]}`);

    // r3 goes down whole. Its open jobs fail at once: runner_lost, long before any timer.
    const openOnR3 = jobsOf(2).filter((id) => !isTerminal(job(id).state));
    const doneOnR3 = jobsOf(2).filter((id) => job(id).state === 'completed');
    assert.equal(openOnR3.length + doneOnR3.length, jobsOf(2).length);
    await net.killAll(runnerHosts[2]!);
    await until(() => openOnR3.every((id) => isTerminal(job(id).state)), 20_000, "R3's open jobs to end", 50);
    for (const id of openOnR3) assert.deepEqual([job(id).state, job(id).reason], ['failed', 'runner_lost'], `job ${id} (${job(id).why})`);
    for (const id of doneOnR3) assert.equal(job(id).state, 'completed');
    assert.ok(openOnR3.length >= 3, `R3 had its three holders open at least: ${openOnR3.length}`);
    assert.ok(!/runner R1 is offline|runner R2 is offline/.test(judge.stderr), 'R1 and R2 were never lost (the blip dropped no connection)');

    // r3 comes back: its sessions, then its runner; three more jobs complete there.
    const resumed = await mam(runnerHosts[2]!, rws[2]!, ['session', 'resume', '--all', '--json']);
    assert.equal(resumed.exitCode, 0, resumed.stderr);
    for (const [j, s] of SESSIONS.entries()) {
      const row = (await rws[2]!.controlPlane.sessions.get(s))!;
      assert.deepEqual([row.status, row.conversation_id], ['running', conversations[2]![j]], `${s} on r3 runs again in its conversation`);
    }
    assert.equal(readAgentLog(rws[2]!.log).filter((e) => e.event === 'start' && e.resumed).length, 3, "r3's three agents started with their conversations");
    runners[2] = await startRunner(2);
    const more = await submitMany(hub, sw, SESSIONS.map((s) => ({ session: `remote:R3/${s}`, prompt: `[fake-agent mode: instant] back on R3, ${s}`, heartbeatS: 30, ...FAR })));
    await until(() => more.every((j) => isTerminal(job(j.id).state)), 60_000, 'the jobs sent to R3 after it came back to end', 100);
    for (const j of more) assert.deepEqual([job(j.id).state, job(j.id).reason], ['completed', null], `job ${j.id}`);
    for (const id of openOnR3) assert.equal(job(id).reason, 'runner_lost', 'what R3 relays of a lost job once back is late: the outcome stands');

    // Every event once: each outbox (the runner host's record of what the agent published) against
    // the submitter's audit log and the runner host's own, as bench/scale.ts checks.
    const all = [...ids, ...more.map((j) => j.id)];
    const where = (id: string) => rws[ids.includes(id) ? runnerOf(id) : 2]!;
    const check = () => auditCheck(all.map((id) => ({ id, outbox: new JobOutbox(where(id).controlPlane.paths.jobDir(id)).events().map((p) => p.seq), submitter: eventSeqs(sw, id), runner: eventSeqs(where(id), id) })));
    // Bounded; then whatever is still wrong is named below.
    await until(() => check().missing === 0, 30_000, 'every outbox event to reach the audit logs', 100).catch(() => undefined);
    const result = check();
    assert.deepEqual({ missing: result.missing, duplicated: result.duplicated, unknown: result.unknown }, { missing: 0, duplicated: 0, unknown: 0 }, JSON.stringify(result.problems.slice(0, 10)));
    // Not vacuous: at least `started` and `completed` of every completed job, `started` of every other that started.
    const least = all.reduce((n, id) => n + (job(id).state === 'completed' ? 2 : job(id).started_at ? 1 : 0), 0);
    assert.ok(least >= 2 * (JOBS - openOnR3.length) && result.events >= least, `the outboxes hold the jobs' events: ${result.events} (at least ${least})`);
    for (const id of all) assert.deepEqual(job(id).missing ?? [], [], `no gap left in ${id}`);
    assert.deepEqual(runners.map((r) => r.code), [undefined, undefined, undefined], 'the runners run on');
  });

  /** Runs test/support/submitMany.ts on `host` for `f`'s workspace. */
  function submitMany(host: Host, f: JobFixture, specs: unknown[]): Promise<Array<{ id: string; session: string; state: string; exitCode: number }>> {
    return script(host, f, SUBMIT_MANY, f.workspace, JSON.stringify(specs)) as Promise<Array<{ id: string; session: string; state: string; exitCode: number }>>;
  }

  /** Runs a TypeScript script of test/support on `host` (the test's own process is on no host's network); its last line of output, as JSON. */
  async function script(host: Host, f: JobFixture, file: string, ...args: unknown[]): Promise<unknown> {
    const argv = args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)));
    const r = await net!.run(host, [process.execPath, '-r', require.resolve('esbuild-register'), file, ...argv], { cwd: f.workspace, env: { ...f.env, MAM_NO_WARDEN: '1' } }, 120_000);
    assert.equal(r.exitCode, 0, `${path.basename(file)}: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  }
});

function writeEnv(f: JobFixture, e: BrokerEndpoint): void {
  fs.writeFileSync(path.join(f.workspace, '.mam.env'), [`MQTT_BROKER=${e.host}`, `MQTT_PORT=${e.port}`, `MQTT_USERNAME=${e.username}`, `MQTT_PASSWORD=${e.password}`, `MAM_DISPATCH_SECRET=${SECRET}`, ''].join('\n'), { mode: 0o600 });
}

function eventSeqs(f: JobFixture, id: string): number[] {
  return f.controlPlane.audit.readEntries(id).entries.flatMap((e) => (e.type === 'event' ? [e.seq] : []));
}

/** bench/scale.ts's checkAudit, across hosts: each outbox seq in each audit log once, and nothing else. */
function auditCheck(jobs: Array<{ id: string; outbox: number[]; submitter: number[]; runner: number[] }>): { events: number; missing: number; duplicated: number; unknown: number; problems: string[] } {
  const r = { events: 0, missing: 0, duplicated: 0, unknown: 0, problems: [] as string[] };
  for (const j of jobs) {
    r.events += j.outbox.length;
    for (const [side, logged] of [['submitter', j.submitter], ['runner host', j.runner]] as const) {
      const counts = new Map<number, number>();
      for (const seq of logged) counts.set(seq, (counts.get(seq) ?? 0) + 1);
      for (const seq of j.outbox) {
        const n = counts.get(seq) ?? 0;
        if (n === 0) (r.missing++, r.problems.push(`${j.id} seq ${seq} missing from the ${side}'s log`));
        if (n > 1) (r.duplicated++, r.problems.push(`${j.id} seq ${seq} ${n} times in the ${side}'s log`));
      }
      for (const seq of counts.keys()) if (!j.outbox.includes(seq)) (r.unknown++, r.problems.push(`${j.id} seq ${seq} in the ${side}'s log, in no outbox`));
    }
  }
  return r;
}
