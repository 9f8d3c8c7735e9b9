import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { execa } from 'execa';
import type { MqttClient } from 'mqtt';
import { MemoryLogger } from '../../src/core/base/log';
import { resolveConfig } from '../../src/core/config/settings';
import { readEmbeddedEndpoint, resolveBroker } from '../../src/core/messaging/brokerEndpoint';
import { BrokerUnusableError, brokerFiles, isBrokerDaemon } from '../../src/core/messaging/brokerRecord';
import { embeddedBrokerStatus, startEmbeddedBroker, stopEmbeddedBroker } from '../../src/core/messaging/embeddedBroker';
import { connectClient, uniqueClientId } from '../../src/core/messaging/mqttClient';
import { probeBroker } from '../../src/core/messaging/mqttProbe';
import { workspaceIdOf } from '../../src/core/messaging/protocol';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { CLI, REPO_ROOT, mam, tempWorkspace, until } from '../support/helpers';
import { itNeeds } from '../support/needs';
import { busContract, nextMessages } from './busContract';

/** Every daemon of `workspace` in the process table (normally zero or one). */
function daemonsOf(workspace: string): number[] {
  return fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number).filter((pid) => isBrokerDaemon(pid, workspace));
}

let started: ControlPlanePaths[] = [];
const startIn = async (ws: string) => {
  const paths = new ControlPlanePaths(ws);
  started.push(paths);
  return { paths, handle: await startEmbeddedBroker(paths, new MemoryLogger(), { cliPath: CLI }) };
};
const stopAll = async (): Promise<void> => {
  await Promise.all(started.map((p) => stopEmbeddedBroker(p)));
  for (const p of started) assert.deepEqual(daemonsOf(p.workspace), [], `no daemon left for ${p.workspace}`);
  started = [];
};

busContract('embedded (aedes daemon)', async () => {
  const { paths, handle } = await startIn(tempWorkspace());
  return {
    endpoint: handle.endpoint,
    stop: async () => {
      await stopEmbeddedBroker(paths);
    },
    start: async () => {
      const again = await startEmbeddedBroker(paths, new MemoryLogger(), { cliPath: CLI });
      assert.equal(again.endpoint.port, handle.endpoint.port, 'restarted on the same port');
    },
  };
});

describe('embedded broker', function () {
  this.timeout(60_000);
  let clients: MqttClient[] = [];
  const connect = async (endpoint: Parameters<typeof connectClient>[0]): Promise<MqttClient> => {
    const c = await connectClient(endpoint, { clientId: uniqueClientId('test'), reconnectPeriodMs: 0 });
    clients.push(c);
    return c;
  };
  afterEach(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    clients = [];
    await stopAll();
  });

  it('the probe tells accepted, refused credentials and nobody listening apart', async () => {
    const { handle } = await startIn(tempWorkspace());
    assert.deepEqual(await probeBroker(handle.endpoint, 5_000), { ok: true });
    assert.deepEqual(await probeBroker({ ...handle.endpoint, password: 'wrong' }, 5_000), { ok: false, reason: 'credentials', detail: 'bad user name or password' });
    const closed = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const nobody = await probeBroker({ ...handle.endpoint, port: closed }, 5_000);
    assert.deepEqual([nobody.ok, !nobody.ok && nobody.reason], [false, 'unreachable']);
  });

  it('writes .mam/broker.json (0600) with endpoint, credentials and pid; a second start reuses the daemon', async () => {
    const { paths, handle } = await startIn(tempWorkspace());
    assert.equal(handle.started, true);
    assert.equal(fs.statSync(paths.brokerFile).mode & 0o777, 0o600);
    const record = JSON.parse(fs.readFileSync(paths.brokerFile, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(record).sort(), ['host', 'password', 'pid', 'port', 'started_at', 'username', 'version']);
    assert.equal(record.host, '127.0.0.1');
    assert.equal(record.port, handle.endpoint.port);
    assert.equal(record.pid, handle.pid);
    assert.equal(record.version, 1);
    assert.ok(typeof record.password === 'string' && record.password.length >= 24);
    assert.ok(!Number.isNaN(Date.parse(String(record.started_at))));
    assert.deepEqual(handle.endpoint, { host: '127.0.0.1', port: record.port, tls: false, username: record.username, password: record.password, embedded: true });
    assert.deepEqual(readEmbeddedEndpoint(paths), handle.endpoint);

    const again = await startEmbeddedBroker(paths, new MemoryLogger(), { cliPath: CLI });
    assert.deepEqual([again.started, again.pid, again.endpoint], [false, handle.pid, handle.endpoint]);
    assert.deepEqual(daemonsOf(paths.workspace), [handle.pid]);

    // The daemon's own job warden is its first client; ours the second.
    await until(() => embeddedBrokerStatus(paths).clients === 1, 10_000, 'the job warden to connect');
    await connect(handle.endpoint);
    await until(() => embeddedBrokerStatus(paths).clients === 2, 10_000, 'the daemon to report two clients');
    assert.deepEqual({ ...embeddedBrokerStatus(paths), started_at: null }, { running: true, pid: handle.pid, port: handle.endpoint.port, started_at: null, clients: 2 });
  });

  const outside = Object.values(os.networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal);
  itNeeds(outside ? undefined : 'this machine has no non-loopback IPv4 address to try', 'listens on 127.0.0.1 only', async () => {
    const { handle } = await startIn(tempWorkspace());
    const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      const socket = net.createConnection({ host: outside!.address, port: handle.endpoint.port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once('error', (err) => resolve(err));
    });
    assert.equal(error?.code, 'ECONNREFUSED', `a connection to ${outside!.address}:${handle.endpoint.port} must be refused`);
  });

  it('restarts on the same port with the same credentials, and keeps retained messages (cleared ones stay cleared)', async () => {
    const { paths, handle } = await startIn(tempWorkspace());
    const before = JSON.parse(fs.readFileSync(paths.brokerFile, 'utf8')) as Record<string, unknown>;
    const pub = await connect(handle.endpoint);
    const binary = Buffer.from([0, 1, 2, 255, 0x7b, 0x22]);
    await pub.publishAsync('mam/ws/jobs/j-1/state', '{"state":"started"}', { qos: 1, retain: true });
    await pub.publishAsync('mam/ws/jobs/j-2/state', binary, { qos: 1, retain: true });
    await pub.publishAsync('mam/ws/jobs/j-3/state', 'gone soon', { qos: 1, retain: true });
    await pub.publishAsync('mam/ws/jobs/j-3/state', '', { qos: 1, retain: true });
    await pub.endAsync(true);

    const stopped = await stopEmbeddedBroker(paths);
    assert.deepEqual(stopped, { stopped: true, pid: handle.pid });
    const after = JSON.parse(fs.readFileSync(paths.brokerFile, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(after, { ...before, pid: null, started_at: null }, 'credentials and port kept, pid cleared');
    assert.equal(readEmbeddedEndpoint(paths), undefined);
    assert.equal(embeddedBrokerStatus(paths).running, false);
    assert.match(fs.readFileSync(brokerFiles(paths).log, 'utf8'), /stopping: received SIGTERM[\s\S]*stopped/);
    const saved = JSON.parse(fs.readFileSync(brokerFiles(paths).retained, 'utf8')) as { retained: Array<{ topic: string }> };
    assert.deepEqual(saved.retained.map((m) => m.topic).sort(), ['mam/ws/jobs/j-1/state', 'mam/ws/jobs/j-2/state'], 'the cleared topic is not saved');

    const again = await startEmbeddedBroker(paths, new MemoryLogger(), { cliPath: CLI });
    assert.equal(again.started, true);
    assert.notEqual(again.pid, handle.pid);
    assert.deepEqual(again.endpoint, handle.endpoint);
    const late = await connect(again.endpoint);
    const got = nextMessages(late, 2);
    await late.subscribeAsync('mam/ws/jobs/+/state', { qos: 1 });
    const byTopic = new Map((await got).map((m) => [m.topic, m.packet.payload as Buffer]));
    assert.equal(byTopic.get('mam/ws/jobs/j-1/state')?.toString(), '{"state":"started"}');
    assert.deepEqual(byTopic.get('mam/ws/jobs/j-2/state'), binary);
    assert.equal(fs.statSync(brokerFiles(paths).retained).mode & 0o777, 0o600);
  });

  it('takes a new port when another program holds its old one, and says so in its log', async () => {
    const { paths, handle } = await startIn(tempWorkspace());
    await stopEmbeddedBroker(paths);
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(handle.endpoint.port, '127.0.0.1', resolve));
    try {
      const again = await startEmbeddedBroker(paths, new MemoryLogger(), { cliPath: CLI });
      assert.notEqual(again.endpoint.port, handle.endpoint.port);
      assert.equal(again.endpoint.password, handle.endpoint.password);
      assert.match(fs.readFileSync(brokerFiles(paths).log, 'utf8'), new RegExp(`port ${handle.endpoint.port} is taken by another program; listening on ${again.endpoint.port}`));
      await connect(again.endpoint);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('starts exactly one daemon when 8 processes start it at once', async () => {
    const ws = tempWorkspace();
    started.push(new ControlPlanePaths(ws));
    const starter = path.join(REPO_ROOT, 'test/fixtures/brokerStarter.ts');
    const runs = await Promise.all(Array.from({ length: 8 }, () => execa(process.execPath, ['-r', 'esbuild-register', starter, ws, CLI], { reject: false, timeout: 60_000 })));
    for (const r of runs) assert.equal(r.exitCode, 0, String(r.stderr));
    const handles = runs.map((r) => JSON.parse(String(r.stdout)) as { pid: number; port: number; started: boolean });
    assert.equal(new Set(handles.map((h) => h.pid)).size, 1, 'one pid for all');
    assert.equal(new Set(handles.map((h) => h.port)).size, 1, 'one port for all');
    assert.equal(handles.filter((h) => h.started).length, 1, 'exactly one of them started it');
    assert.deepEqual(daemonsOf(ws), [handles[0]!.pid]);
  });

  it('mam broker start | status | stop', async () => {
    const ws = tempWorkspace();
    started.push(new ControlPlanePaths(ws));
    const never = await mam(['broker', 'status'], { cwd: ws });
    assert.deepEqual([never.exitCode, never.stdout.trim()], [0, "embedded broker: never started in this workspace; start it with 'mam broker start'"]);
    const first = await mam(['broker', 'start'], { cwd: ws });
    assert.equal(first.exitCode, 0, first.stderr);
    const port = Number(/^Started the embedded broker on 127\.0\.0\.1:(\d+) \(pid (\d+)\)/.exec(first.stdout)?.[1]);
    assert.ok(port > 0, first.stdout);
    const second = await mam(['broker', 'start', '--json'], { cwd: ws });
    assert.equal(second.exitCode, 0, second.stderr);
    assert.deepEqual({ ...JSON.parse(second.stdout), username: 'u', pid: 1 }, { kind: 'embedded', host: '127.0.0.1', port, username: 'u', pid: 1, started: false });
    const status = JSON.parse((await mam(['broker', 'status', '--json'], { cwd: ws })).stdout) as Record<string, unknown>;
    assert.deepEqual([status.kind, status.running, status.accepting, status.port], ['embedded', true, true, port]);
    assert.match((await mam(['broker', 'status'], { cwd: ws })).stdout, new RegExp(`^embedded broker: running on 127\\.0\\.0\\.1:${port}, pid \\d+, up`));

    const stop = await mam(['broker', 'stop'], { cwd: ws });
    assert.deepEqual([stop.exitCode, stop.stdout], [0, `Stopped the embedded broker (pid ${status.pid}).`]);
    const stoppedStatus = JSON.parse((await mam(['broker', 'status', '--json'], { cwd: ws })).stdout) as Record<string, unknown>;
    assert.deepEqual([stoppedStatus.running, stoppedStatus.accepting, stoppedStatus.port], [false, false, port]);
    assert.equal((await mam(['broker', 'stop'], { cwd: ws })).stdout, 'The embedded broker was not running.');

    const help = await mam(['broker', '--help'], { cwd: ws });
    assert.match(help.stdout, /^\s+start\s/m);
    assert.doesNotMatch(help.stdout, /serve/, 'the daemon entry is hidden');
    const external = await mam(['broker', 'start'], { cwd: ws, env: { MQTT_BROKER: 'mqtt://broker.example:1884' } });
    assert.deepEqual([external.exitCode, external.stdout.trim()], [0, 'MQTT_BROKER is set: MAM uses broker.example:1884; the embedded broker is not started.']);
    // A shared broker's ACL names each workspace's topics: status says which (docs/scaling.md).
    const id = workspaceIdOf(ws);
    const shared = { MQTT_BROKER: 'mqtt://127.0.0.1:1' }; // nobody listens there: the topics are said anyway
    const sharedStatus = JSON.parse((await mam(['broker', 'status', '--json'], { cwd: ws, env: shared })).stdout) as Record<string, unknown>;
    assert.deepEqual([sharedStatus.kind, sharedStatus.accepting, sharedStatus.workspace_id, sharedStatus.topics], ['external', false, id, `mam/${id}/#`]);
    assert.match((await mam(['broker', 'status'], { cwd: ws, env: shared })).stdout, new RegExp(`^this workspace's topics: mam/${id}/# \\(workspace ID ${id}\\)$`, 'm'));
  });

  it('exits by itself when the workspace’s .mam/ folder is removed', async () => {
    const ws = tempWorkspace();
    const { handle, paths } = await startIn(ws);
    fs.rmSync(paths.dir, { recursive: true, force: true });
    await until(() => !isBrokerDaemon(handle.pid, ws), 15_000, 'the daemon to exit', 50);
    started = started.filter((p) => p !== paths);
  });

  it('stop never signals a process that is not its daemon', async () => {
    const ws = tempWorkspace();
    const { paths } = await startIn(ws);
    await stopEmbeddedBroker(paths);
    const stranger = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const record = JSON.parse(fs.readFileSync(paths.brokerFile, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(paths.brokerFile, JSON.stringify({ ...record, pid: stranger.pid }), { mode: 0o600 });
      assert.equal(readEmbeddedEndpoint(paths), undefined, 'a pid that is not our daemon is not a running broker');
      assert.deepEqual(await stopEmbeddedBroker(paths), { stopped: false, pid: stranger.pid });
      assert.equal(stranger.exitCode, null);
      assert.equal(stranger.signalCode, null);
      assert.equal((JSON.parse(fs.readFileSync(paths.brokerFile, 'utf8')) as { pid: unknown }).pid, null);
    } finally {
      stranger.kill('SIGKILL');
    }
  });

  it('resolveBroker: a stopped embedded broker is exit 3 without start, and is started with it', async () => {
    const ws = tempWorkspace();
    const paths = new ControlPlanePaths(ws);
    started.push(paths);
    const config = resolveConfig({ workspace: ws, env: {} });
    const input = { workspace: ws, config, env: process.env, logger: new MemoryLogger(), cliPath: CLI };
    await assert.rejects(resolveBroker({ ...input, start: false }), (err: unknown) => {
      assert.ok(err instanceof BrokerUnusableError);
      assert.equal(err.exitCode, 3);
      assert.match(err.message, /not running; start it with 'mam broker start'/);
      return true;
    });
    const endpoint = await resolveBroker({ ...input, start: true });
    assert.equal(endpoint.embedded, true);
    assert.deepEqual(await resolveBroker({ ...input, start: false }), endpoint);
    await connect(endpoint);
  });

  it('replaces a corrupt broker.json with new credentials, keeping the bad one aside', async () => {
    const ws = tempWorkspace();
    const paths = new ControlPlanePaths(ws);
    fs.mkdirSync(paths.dir, { recursive: true });
    fs.writeFileSync(paths.brokerFile, '{"host": "127.0.0.1", "port": "x"');
    const logger = new MemoryLogger();
    started.push(paths);
    const handle = await startEmbeddedBroker(paths, logger, { cliPath: CLI });
    assert.equal(handle.started, true);
    assert.match(logger.messages('warn').join('\n'), /broker\.json is not valid JSON; moved it to .*broker\.json\.corrupt-/);
    assert.equal(fs.readdirSync(paths.dir).filter((f) => f.startsWith('broker.json.corrupt-')).length, 1);
    await connect(handle.endpoint);
  });
});
