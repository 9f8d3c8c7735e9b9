/**
 * An untrusted workspace is inert: whatever its files say — a `.git/config` naming a program, a
 * `.mam.env` naming a broker, a job record pointing at a remote runner — MAM starts nothing there,
 * contacts no host, and hands out no secret. Everything the VS Code views and commands can ask
 * for goes through the WorkspaceEngine, which this drives the way the extension host does.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { MemoryLogger } from '../../src/core/base/log';
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
  const engines: WorkspaceEngine[] = [];
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

  it('the doctor, the views\' reads and every action start no program and contact no host', async () => {
    const e = engine(false, { brokerSecret: { host: '127.0.0.1', port, password: 'the user\'s secret' } });
    assert.equal(e.config.values.brokerPassword, '', 'no secret in an untrusted workspace');
    const checks = await e.doctor();
    assert.ok(checks.some((c) => c.name === 'trust' && /not trusted/.test(c.detail)));
    assert.ok(!checks.some((c) => c.name === 'tmux' || c.name === 'git' || c.name === '.gitignore'), checks.map((c) => c.name).join(', '));
    await e.start();
    for (const [what, attempt] of [
      ['cancel', () => e.cancelJob('j-20261201T000000Z-0000beef')],
      ['stop', () => e.stopSession('anyone')],
      ['attach', () => e.attachArgv('anyone')],
      ['status', () => e.sessionStates()],
      ['diff', () => e.changedFiles({ base: 'HEAD', head: 'HEAD', tree: 'HEAD' }, ws)],
      ['file', () => e.fileAt(ws, 'HEAD', 'x')],
      ['ignores', () => e.missingIgnores()],
    ] as const) {
      await assert.rejects((attempt as () => Promise<unknown>)(), /this workspace is not trusted: MAM does not .* here; trust the workspace to use it/, what);
    }
    assert.equal(new ControlPlane(ws, { logger: new MemoryLogger() }).jobs.get('j-20261201T000000Z-0000beef')!.state, 'dispatched', 'nothing changed');
    assert.equal(connections, 0, 'no connection to the host .mam.env names');
    assert.deepEqual(fs.readdirSync(marks), [], 'no program the repository names ran');
    assert.equal(fs.existsSync(path.join(ws, '.mam', 'broker.json')), false, 'no broker');
  });

  it('trusted, the saved password goes only to the broker it was saved for', () => {
    const secret = { host: 'mqtts://broker.example.invalid', port: 0, password: 'the user\'s secret' };
    assert.equal(engine(true, { brokerSecret: secret }).config.values.brokerPassword, '', '.mam.env names 127.0.0.1, not the saved broker');
    fs.writeFileSync(path.join(ws, '.mam.env'), 'MQTT_USERNAME=me\n');
    const here = engine(true, { brokerSecret: secret, settings: { 'broker.host': 'mqtts://BROKER.example.invalid:8883' } });
    assert.equal(here.config.values.brokerPassword, 'the user\'s secret', 'the same broker (host case and default port aside)');
    assert.equal(engine(true, { brokerSecret: secret, settings: { 'broker.host': 'mqtts://broker.example.invalid:9999' } }).config.values.brokerPassword, '', 'another port');
    assert.equal(engine(true, { brokerSecret: secret, settings: { 'broker.host': 'mqtts://evil.example.invalid' } }).config.values.brokerPassword, '', 'another host');
  });
});
