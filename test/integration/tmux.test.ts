import { strict as assert } from 'node:assert';
import { TmuxBackend } from '../../src/core/mux/tmux';
import * as fs from 'node:fs';
import { groupAlive } from '../../src/core/base/process';
import { tempDir, until } from '../support/helpers';
import { muxContract } from './muxContract';

let n = 0;
muxContract('tmux', async () => {
  const mux = new TmuxBackend({ server: `mam-test-${process.pid}-${n++}` });
  return { mux, dispose: () => mux.killServer() };
});

/** Alive and not a zombie (tmux reaps a closed pane's program a moment later). */
function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('tmux backend', () => {
  it('kill ends the pane\'s program and its children even when they ignore the hangup (as gemini\'s launcher does)', async function () {
    this.timeout(20_000);
    const mux = new TmuxBackend({ server: `mam-test-${process.pid}-${n++}` });
    try {
      // A launcher that ignores SIGHUP and a child that ignores it too, as `gemini` runs.
      const child = `process.on('SIGHUP', () => {}); setInterval(() => {}, 1000)`;
      const launcher = `process.on('SIGHUP', () => {}); const c = require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(child)}], { stdio: 'inherit' }); console.log('CHILD ' + c.pid); setInterval(() => {}, 1000)`;
      const pane = await mux.spawn({ label: 'hup', argv: [process.execPath, '-e', launcher], cwd: tempDir('hup'), env: {} });
      let childPid = 0;
      await until(async () => {
        childPid = Number(/CHILD (\d+)/.exec(await mux.capture(pane.id))?.[1] ?? 0);
        return childPid > 0;
      }, 10_000, 'the launcher to start its child');
      await mux.kill(pane.id);
      assert.equal(running(pane.pid!), false, 'the launcher is gone');
      assert.equal(running(childPid), false, 'its child is gone');
      assert.equal(groupAlive(pane.pid!), false);
    } finally {
      await mux.killServer();
    }
  });

  it('a pane started while the server closes its last one starts on a new server (no "server exited unexpectedly")', async function () {
    this.timeout(60_000);
    const mux = new TmuxBackend({ server: `mam-test-${process.pid}-${n++}` });
    const cwd = tempDir('race');
    try {
      // A plan stops its finished tasks' sessions while it starts the next task's: the server,
      // left empty, exits while the next client reaches it (1 in ~12 rounds failed before).
      for (let i = 0; i < 40; i++) {
        const last = await mux.spawn({ label: `last-${i}`, argv: ['sleep', '100'], cwd, env: {} });
        const closing = mux.kill(last.id);
        await new Promise((resolve) => setTimeout(resolve, i % 10));
        const next = await mux.spawn({ label: `next-${i}`, argv: ['sleep', '100'], cwd, env: {} });
        await closing;
        await mux.kill(next.id);
      }
    } finally {
      await mux.killServer();
    }
  });
});
