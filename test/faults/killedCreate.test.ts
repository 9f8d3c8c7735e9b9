/**
 * `mam session create` killed midway — after it reserved the name, before its session ran — must
 * leave nothing that blocks the name: creating it again works at once, and the monitor clears
 * what is left.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { execa } from 'execa';
import { CLI, FAKE_AGENT, REPO_ROOT, until } from '../support/helpers';
import { sessionFixture, type SessionFixture } from '../support/sessions';

describe('faults: a create killed midway blocks nothing', function () {
  this.timeout(60_000);
  let f: SessionFixture;
  beforeEach(() => {
    f = sessionFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  /** Starts `mam session create NAME` and kills it while it waits to place its pane (another process holds the placement lock). */
  async function killedCreate(name: string): Promise<void> {
    const lock = f.controlPlane.paths.lock(`place-tmux-${f.server}`);
    const holder = execa(process.execPath, ['-r', 'esbuild-register', path.join(REPO_ROOT, 'test/fixtures/lockHolder.ts'), lock], { cwd: REPO_ROOT, reject: false });
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    const create = execa(process.execPath, [CLI, 'session', 'create', '--agent', 'shell', '--name', name, '--command', `${process.execPath} ${FAKE_AGENT}`], { cwd: f.workspace, env: f.env, reject: false });
    try {
      await until(async () => (await f.controlPlane.sessions.get(name))?.status === 'starting', 20_000, 'the name to be reserved');
    } finally {
      create.kill('SIGKILL');
      await create;
      holder.kill('SIGKILL');
      await holder;
    }
  }

  it('creating the same name again works at once', async () => {
    await killedCreate('w1');
    const again = await execa(process.execPath, [CLI, 'session', 'create', '--agent', 'shell', '--name', 'w1', '--command', `${process.execPath} ${FAKE_AGENT}`], { cwd: f.workspace, env: f.env, reject: false });
    assert.equal(again.exitCode, 0, again.stderr);
    assert.equal((await f.controlPlane.sessions.get('w1'))!.status, 'running');
    assert.equal((await f.controlPlane.sessions.list()).length, 1);
  });

  it('the monitor clears the row it left, and adopts no pane as pane-N', async () => {
    await killedCreate('w2');
    const r = await execa(process.execPath, [CLI, 'session', 'monitor', '--once'], { cwd: f.workspace, env: f.env, reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /^repaired w2: its create or resume had been killed midway$/m);
    assert.deepEqual((await f.controlPlane.sessions.list()).map((s) => s.name), []);
  });
});
