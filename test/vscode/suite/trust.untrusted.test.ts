import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { TmuxBackend } from '../../../src/core/mux/tmux';
import { fakeAgentCommand, mamApi } from './support';

describe('an untrusted workspace (restricted mode)', function () {
  this.timeout(60_000);

  it('is untrusted, and MAM knows it', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    const api = await mamApi();
    assert.equal(api.host.trusted, false);
    assert.equal(api.host.current[0]!.engine.trusted, false);
  });

  it('refuses to spawn anything: sessions, jobs, messages, the monitor, the broker', async () => {
    const api = await mamApi();
    const engine = api.host.current[0]!.engine;
    await assert.rejects(engine.core.sessions.create({ name: 'nope', agent: 'claude', baseDir: engine.workspace, command: fakeAgentCommand('work') }), /not trusted: MAM does not start an agent here/);
    await assert.rejects(engine.core.jobService.submit({ session: 'nope', prompt: 'x' }), /not trusted: MAM does not delegate a job here/);
    await assert.rejects(engine.core.sessions.resume('nope', { baseDir: engine.workspace }), /not trusted/);
    await vscode.commands.executeCommand('mam.startMonitor');
    await engine.start();
    assert.equal(engine.core.monitor.running, false);
    assert.equal(fs.existsSync(path.join(engine.workspace, '.mam', 'broker.json')), false, 'no broker was started');
    assert.deepEqual(await engine.core.controlPlane.sessions.list(), []);
    assert.equal(await new TmuxBackend({ server: engine.core.sessions.defaultServer('tmux'), env: process.env }).isRunning(), false, 'no tmux server was started');
  });
});
