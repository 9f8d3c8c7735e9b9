import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { reconcile, sessionStatus, type SessionState } from '../../src/core/sessions/sessionStatus';
import { snapshotTree, tempDir, until } from '../support/helpers';
import { idleCommand, sessionFixture, type SessionFixture } from '../support/sessions';

describe('session status and monitor', function () {
  this.timeout(60_000);
  let f: SessionFixture;
  beforeEach(() => {
    f = sessionFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  const byName = (states: SessionState[], name: string) => states.find((s) => (s.session?.name ?? s.pane?.label) === name)!;

  it('detects every kind of drift without changing anything, and monitor repairs it', async () => {
    const elsewhere = fs.realpathSync(tempDir('moved'));
    for (const name of ['gone', 'stopped', 'pid', 'healthy']) {
      await f.service.create({ name, agent: 'shell', command: idleCommand(), baseDir: f.workspace });
    }
    await f.service.create({ name: 'moved', agent: 'shell', command: idleCommand(elsewhere), baseDir: f.workspace });
    const gone = (await f.controlPlane.sessions.get('gone'))!;
    await f.tmux.kill(gone.target!);
    await f.controlPlane.sessions.mutate((tx) => {
      tx.update('stopped', { status: 'stopped' });
      tx.update('pid', { pid: 999_999 });
    });
    const stray = await f.tmux.spawn({ label: 'stray', argv: idleCommand(), cwd: f.workspace, env: {} });
    await until(async () => (await f.tmux.listPanes()).find((p) => p.label === 'moved')?.cwd === elsewhere, 10_000, 'the moved pane to change folder');

    const before = snapshotTree(f.controlPlane.paths.dir);
    const states = await sessionStatus(f.service, await f.controlPlane.sessions.list());
    assert.deepEqual(byName(states, 'gone').drift, ['pane_gone']);
    assert.deepEqual(byName(states, 'stopped').drift, ['stopped_but_alive']);
    assert.deepEqual(byName(states, 'pid').drift, ['pid_changed']);
    assert.deepEqual(byName(states, 'moved').drift, ['cwd_changed']);
    assert.deepEqual(byName(states, 'healthy').drift, []);
    const strayState = byName(states, 'stray');
    assert.equal(strayState.session, null);
    assert.deepEqual(strayState.drift, ['unregistered_pane']);
    assert.equal(strayState.pane?.id, stray.id);
    assert.equal(byName(states, 'healthy').pane?.command, 'node');
    assert.deepEqual(snapshotTree(f.controlPlane.paths.dir), before, 'status is read-only');

    const report = await reconcile(f.service, f.controlPlane.sessions);
    assert.deepEqual(report, { terminated: ['gone'], registered: ['stray'], revived: ['stopped'], pidUpdated: ['pid'], repaired: [] });
    const after = await sessionStatus(f.service, await f.controlPlane.sessions.list());
    assert.deepEqual(after.filter((s) => s.drift.length > 0).map((s) => [s.session?.name, s.drift]), [['moved', ['cwd_changed']]]);
    const adopted = (await f.controlPlane.sessions.get('stray'))!;
    assert.deepEqual([adopted.status, adopted.target, adopted.agent], ['running', stray.id, 'shell']);
    assert.equal((await f.controlPlane.sessions.get('gone'))?.status, 'terminated');
    assert.deepEqual(await reconcile(f.service, f.controlPlane.sessions), { terminated: [], registered: [], revived: [], pidUpdated: [], repaired: [] }, 'a second pass has nothing to do');
  });

  it('status never starts a server', async () => {
    await f.service.create({ name: 'x', agent: 'shell', command: idleCommand(), baseDir: f.workspace });
    await f.tmux.killServer();
    assert.equal(await f.tmux.isRunning(), false);
    const states = await sessionStatus(f.service, await f.controlPlane.sessions.list());
    assert.deepEqual(states.map((s) => [s.session?.name, s.drift]), [['x', ['pane_gone']]]);
    assert.equal(await f.tmux.isRunning(), false);
  });

  it("two workspaces sharing one tmux server: each sees only its own panes, and adopts none of the other's", async () => {
    const other = sessionFixture({ MAM_TMUX_SERVER: f.server });
    try {
      await f.service.create({ name: 'mine', agent: 'shell', command: idleCommand(), baseDir: f.workspace });
      await other.service.create({ name: 'theirs', agent: 'shell', command: idleCommand(), baseDir: other.workspace });
      const panes = await f.tmux.listPanes();
      assert.deepEqual(panes.map((p) => [p.label, p.owner]).sort(), [['mine', f.workspace], ['theirs', other.workspace]], 'each pane names the workspace that placed it');
      const states = await sessionStatus(f.service, await f.controlPlane.sessions.list());
      assert.deepEqual(states.map((s) => [s.session?.name ?? null, s.drift]), [['mine', []]], "the other workspace's pane is not drift here");
      const report = await reconcile(f.service, f.controlPlane.sessions);
      assert.deepEqual(report.registered, []);
      assert.deepEqual((await f.controlPlane.sessions.list()).map((r) => r.name), ['mine']);
    } finally {
      await other.dispose();
    }
  });
});
