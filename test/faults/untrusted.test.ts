/**
 * An untrusted workspace is inert: whatever its files say — a `.git/config` naming a program, a
 * `.mam.env` naming a broker, a job record pointing at a remote runner — MAM starts nothing there,
 * contacts no host, and hands out no secret. The views and commands use the core's services
 * directly (engine.core.sessions, .jobService, .loops, .mergeQueue, .monitor), so each service
 * refuses by itself: this drives them the way the extension host does, and through a core built
 * without any WorkspaceEngine.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { MemoryLogger } from '../../src/core/base/log';
import { trustOf, UntrustedWorkspaceError } from '../../src/core/base/trust';
import { buildCore, type Core } from '../../src/core/core';
import { ControlPlane } from '../../src/core/store/controlPlane';
import { WorkspaceEngine } from '../../src/core/workspaceEngine';
import { CLI, jobRecord, tempDir } from '../support/helpers';

describe('faults: an untrusted workspace is inert', function () {
  this.timeout(30_000);
  let ws: string;
  let marks: string;
  let listener: net.Server;
  let connections = 0;
  let port = 0;
  const engines: Array<WorkspaceEngine | Core> = [];
  const engine = (trusted: boolean, extra: Partial<ConstructorParameters<typeof WorkspaceEngine>[0]> = {}) => {
    const e = new WorkspaceEngine({ workspace: ws, env: { ...process.env, MAM_TMUX_SERVER: `mam-untrusted-${process.pid}` }, settings: {}, logger: new MemoryLogger(), cliPath: CLI, trusted, ...extra });
    engines.push(e);
    return e;
  };

  beforeEach(async () => {
    ws = tempDir('untrusted');
    marks = tempDir('marks');
    connections = 0;
    listener = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as net.AddressInfo).port;
    execFileSync('git', ['init', '-q'], { cwd: ws });
    fs.appendFileSync(path.join(ws, '.git', 'config'), `[core]\n\tfsmonitor = "touch ${marks}/fsmonitor; false"\n`);
    // The repository's own settings point MAM at a broker of the stranger's choosing.
    fs.writeFileSync(path.join(ws, '.mam.env'), `MQTT_BROKER=127.0.0.1\nMQTT_PORT=${port}\nMQTT_USERNAME=victim\n`);
    const cp = new ControlPlane(ws, { logger: new MemoryLogger() });
    await cp.jobs.create(jobRecord({ id: 'j-20261201T000000Z-0000beef', session: 'remote:R', state: 'dispatched', target: { kind: 'remote', name: 'R' } }));
  });
  afterEach(async () => {
    for (const e of engines.splice(0)) e.dispose();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  });

  /** Every action a view or command can take, each through the service that does it. */
  const actions = (core: Core, e?: WorkspaceEngine): Array<[string, () => Promise<unknown>]> => {
    const job = 'j-20261201T000000Z-0000beef';
    const mark = (name: string) => ['touch', path.join(marks, name)];
    return [
      ['create', () => core.sessions.create({ name: 'anyone', agent: 'shell', baseDir: ws, command: mark('create') })],
      ['stop', () => core.sessions.stop('anyone')],
      ['resume', () => core.sessions.resume('anyone', { baseDir: ws })],
      ['send', () => core.sessions.send('anyone', 'hello')],
      ['attach', () => core.sessions.attachArgv('anyone')],
      ['delegate', () => core.jobService.submit({ session: 'remote:R', prompt: 'anything' })],
      ['cancel', () => core.jobService.cancel(job)],
      ['verify', () => core.jobService.verify(job, mark('verify').join(' '))],
      ['act as a person', () => core.jobService.actAsPerson(job, { event: 'started' })],
      ['onboard', () => core.jobService.onboard('anyone')],
      ['run a loop', () => core.loops.run({ task: 'anything', creator: 'anyone' })],
      ['resume a loop', () => core.loops.resume('l-20261201T000000Z-0a0b0c')],
      ['cancel a loop', () => core.loops.cancel('l-20261201T000000Z-0a0b0c')],
      ['merge', () => core.mergeQueue.run()],
      ['monitor', () => core.monitor.pass()],
      ...(e
        ? ([
            ['status', () => e.sessionStates()],
            ['diff', () => e.changedFiles({ base: 'HEAD', head: 'HEAD', tree: 'HEAD' }, ws)],
            ['file', () => e.fileAt(ws, 'HEAD', 'x')],
            ['ignores', () => e.missingIgnores()],
            ['broker', () => e.startBroker()],
          ] as Array<[string, () => Promise<unknown>]>)
        : []),
    ];
  };

  const refusedAll = async (list: Array<[string, () => Promise<unknown>]>): Promise<void> => {
    for (const [what, attempt] of list) {
      await assert.rejects(attempt(), (err: unknown) => {
        assert.ok(err instanceof UntrustedWorkspaceError, `${what}: ${String(err)}`);
        assert.match(err.message, /^this workspace is not trusted: MAM does not .* here; trust the workspace to use it$/, what);
        return true;
      });
    }
  };

  const nothingHappened = (): void => {
    assert.equal(new ControlPlane(ws, { logger: new MemoryLogger() }).jobs.get('j-20261201T000000Z-0000beef')!.state, 'dispatched', 'nothing changed');
    assert.deepEqual(new ControlPlane(ws, { logger: new MemoryLogger() }).jobs.list().jobs.map((j) => j.id), ['j-20261201T000000Z-0000beef'], 'no job was made');
    assert.equal(connections, 0, 'no connection to the host .mam.env names');
    assert.deepEqual(fs.readdirSync(marks), [], 'no program the repository names ran');
    assert.equal(fs.existsSync(path.join(ws, '.mam', 'broker.json')), false, 'no broker');
  };

  it('the doctor, the views\' reads and every action start no program and contact no host', async () => {
    const e = engine(false, { brokerSecret: { host: '127.0.0.1', port, password: 'the user\'s secret' } });
    assert.equal(e.core.config.values.brokerPassword, '', 'no secret in an untrusted workspace');
    const checks = await e.doctor();
    assert.ok(checks.some((c) => c.name === 'trust' && /not trusted/.test(c.detail)));
    assert.ok(!checks.some((c) => c.name === 'tmux' || c.name === 'git' || c.name === '.gitignore'), checks.map((c) => c.name).join(', '));
    await e.start();
    assert.equal(e.core.monitor.running, false, 'no monitor');
    await refusedAll(actions(e.core, e));
    assert.deepEqual(await e.core.controlPlane.sessions.list(), [], 'no session was registered');
    nothingHappened();
  });

  it('each service refuses by itself: a core built without a WorkspaceEngine, untrusted, does nothing either', async () => {
    const core = buildCore(ws, { env: { ...process.env, MAM_TMUX_SERVER: `mam-untrusted-${process.pid}` }, logger: new MemoryLogger(), cliPath: CLI, trust: trustOf(false) });
    engines.push(core);
    core.monitor.start(10);
    assert.equal(core.monitor.running, false, 'no monitor');
    await refusedAll(actions(core));
    nothingHappened();
  });

  it('trusted, the saved password goes only to the broker it was saved for', () => {
    const secret = { host: 'mqtts://broker.example.invalid', port: 0, password: 'the user\'s secret' };
    assert.equal(engine(true, { brokerSecret: secret }).core.config.values.brokerPassword, '', '.mam.env names 127.0.0.1, not the saved broker');
    fs.writeFileSync(path.join(ws, '.mam.env'), 'MQTT_USERNAME=me\n');
    const here = engine(true, { brokerSecret: secret, settings: { 'broker.host': 'mqtts://BROKER.example.invalid:8883' } });
    assert.equal(here.core.config.values.brokerPassword, 'the user\'s secret', 'the same broker (host case and default port aside)');
    assert.equal(engine(true, { brokerSecret: secret, settings: { 'broker.host': 'mqtts://broker.example.invalid:9999' } }).core.config.values.brokerPassword, '', 'another port');
    assert.equal(engine(true, { brokerSecret: secret, settings: { 'broker.host': 'mqtts://evil.example.invalid' } }).core.config.values.brokerPassword, '', 'another host');
  });
});
