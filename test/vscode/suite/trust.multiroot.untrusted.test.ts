import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { TmuxBackend } from '../../../src/core/mux/tmux';
import type { SessionsNode } from '../../../src/views/sessions/sessionsTree';
import { waitFor } from '../waitFor';
import { Prompts } from './prompts';
import { fakeAgentCommand, mamApi } from './support';

/**
 * The multi-root window of multiRoot.multiroot.test.ts (api and web holding .mam/, docs without),
 * opened untrusted (restricted mode): neither folder starts a broker, a monitor, a tmux server or
 * an agent, nothing is offered, and the views still show, per folder, what is on disk.
 */
describe('an untrusted multi-root window: both folders stay inert', function () {
  this.timeout(60_000);
  const prompts = new Prompts();
  before(() => prompts.install());
  after(() => prompts.restore());
  afterEach(() => {
    assert.deepEqual(prompts.errors.splice(0), [], 'no command reported an error');
    assert.deepEqual(prompts.answers.splice(0), [], 'every prepared answer was asked for');
  });

  it('is untrusted: no broker, monitor or tmux server in api or web, nothing made in docs, no offer to initialize', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    const api = await mamApi();
    assert.deepEqual(api.host.mamFolders.map((fe) => fe.folder.name), ['api', 'web']);
    for (const { folder, engine } of api.host.current) {
      assert.deepEqual([folder.name, engine.trusted, engine.started, engine.core.monitor.running], [folder.name, false, false, false]);
      assert.equal(fs.existsSync(path.join(engine.core.controlPlane.paths.dir, 'broker.json')), false, `no broker in ${folder.name}`);
      assert.equal(await new TmuxBackend({ server: engine.core.sessions.defaultServer('tmux'), env: process.env }).isRunning(), false, `no tmux server for ${folder.name}`);
    }
    assert.equal(fs.existsSync(path.join(api.host.current[2]!.folder.uri.fsPath, '.mam')), false);
    await api.init.check();
    assert.deepEqual(api.init.offered, [], 'nothing is offered in restricted mode');
    assert.deepEqual(await api.mcp.provideMcpServerDefinitions(), [], 'no MCP server is offered to agent mode: it would refuse to act');
  });

  it('refuses to spawn in either folder: sessions, jobs, resume; Start Monitor and Start Broker start nothing in any folder', async () => {
    const api = await mamApi();
    for (const { engine } of api.host.mamFolders) {
      await assert.rejects(engine.core.sessions.create({ name: 'nope', agent: 'claude', baseDir: engine.workspace, command: fakeAgentCommand('work') }), /not trusted: MAM does not start an agent here/);
      await assert.rejects(engine.core.jobService.submit({ session: 'nope', prompt: 'x' }), /not trusted: MAM does not delegate a job here/);
      await assert.rejects(engine.core.sessions.resume('nope', { baseDir: engine.workspace }), /not trusted/);
    }
    prompts.answers.push('All folders');
    await vscode.commands.executeCommand('mam.startMonitor');
    const infos = prompts.infos.length;
    await vscode.commands.executeCommand('mam.startBroker');
    assert.deepEqual(prompts.infos.slice(infos), ['MAM: this workspace is not trusted; MAM runs no broker here.']);
    for (const { folder, engine } of api.host.current) {
      assert.deepEqual([folder.name, engine.core.monitor.running, fs.existsSync(path.join(engine.core.controlPlane.paths.dir, 'broker.json'))], [folder.name, false, false]);
    }
  });

  it('the views show what each folder holds on disk, grouped by folder, read-only', async () => {
    const api = await mamApi();
    const web = api.host.mamFolders[1]!;
    const now = new Date().toISOString();
    // What an earlier, trusted run (or the CLI) left in web's registry.
    await web.engine.core.controlPlane.sessions.mutate((tx) =>
      tx.insert({
        name: 'old-dev', agent: 'claude', role: 'worker', mux: 'tmux', server: 'mam-old', target: null, cwd: web.folder.uri.fsPath, status: 'stopped',
        resumable: true, conversation_id: null, pid: null, created_at: now, updated_at: now, current_job: null, command: null,
      }),
    );
    const root = await waitFor('the folder rows', async () => {
      const nodes = (await api.sessions.getChildren()) as SessionsNode[];
      return nodes.length === 2 ? nodes : undefined;
    });
    assert.deepEqual(await Promise.all(root.map(async (n) => (await api.sessions.getTreeItem(n)).label)), ['api', 'web']);
    const sessions = await waitFor('web’s session', async () => ((await api.sessions.getChildren(root[1])) as SessionsNode[]).find((n) => n.kind === 'session' && n.name === 'old-dev'));
    assert.equal((await api.sessions.getTreeItem(sessions)).description, 'claude · worker · stopped');
    assert.deepEqual(await api.sessions.getChildren(root[0]), []);
    assert.match(String((await api.sessions.getTreeItem(root[0]!)).tooltip && ((await api.sessions.getTreeItem(root[0]!)).tooltip as vscode.MarkdownString).value), /broker: none \(untrusted\)/);
  });
});
