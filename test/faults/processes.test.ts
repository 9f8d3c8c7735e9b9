/**
 * Processes that know when to stop: monitors of a workspace that is deleted exit (instead of
 * recreating its .mam/ for ever), and an agent's `mam event` against a frozen broker gives up
 * quickly and leaves the event in the outbox.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { execa } from 'execa';
import { MemoryLogger } from '../../src/core/base/log';
import { ControlPlane } from '../../src/core/store/controlPlane';
import { JobOutbox } from '../../src/core/messaging/outbox';
import { CLI, jobRecord, mam, tempWorkspace, until } from '../support/helpers';

describe('faults: processes that know when to stop', function () {
  this.timeout(60_000);

  for (const args of [['session', 'monitor', '--json', '--interval', '0.2'], ['monitor', '--interval', '0.2']]) {
    it(`mam ${args[0] === 'session' ? 'session monitor' : 'monitor'} exits once its workspace is deleted, and does not bring .mam/ back`, async () => {
      const ws = tempWorkspace();
      fs.mkdirSync(path.join(ws, '.mam'));
      const monitor = execa(process.execPath, [CLI, ...args], { cwd: ws, reject: false, env: { MAM_TMUX_SERVER: `mam-gone-${process.pid}` } });
      try {
        // Running: for `mam monitor`, connected to its broker (the broker's own job warden is the other client).
        const stats = path.join(ws, '.mam', 'broker-stats.json');
        if (args[0] === 'monitor') await until(() => fs.existsSync(stats) && (JSON.parse(fs.readFileSync(stats, 'utf8')) as { clients: number }).clients >= 2, 20_000, 'the monitor to connect');
        // `session monitor --json` prints a report per pass: after the first, it is in its loop.
        else await new Promise<void>((resolve) => monitor.stdout!.once('data', () => resolve()));
        fs.rmSync(ws, { recursive: true, force: true });
        const ended = await Promise.race([monitor, new Promise((r) => setTimeout(r, 20_000, 'still running'))]);
        assert.notEqual(ended, 'still running', 'the monitor exited');
        const { exitCode, stdout } = await monitor;
        assert.equal(exitCode, 0, `${stdout}${(await monitor).stderr}`);
        assert.match(stdout, /\.mam is gone; the monitor stops\.$/m);
        assert.equal(fs.existsSync(path.join(ws, '.mam')), false, 'nothing was recreated');
      } finally {
        monitor.kill('SIGKILL');
      }
    });
  }

  it('mam event against a frozen broker (it accepts, then never answers) falls back to the outbox: exit 0, one warning', async () => {
    const frozen = net.createServer(() => undefined); // takes the connection, says nothing
    await new Promise<void>((resolve) => frozen.listen(0, '127.0.0.1', resolve));
    const sockets: net.Socket[] = [];
    frozen.on('connection', (s) => sockets.push(s));
    try {
      const ws = tempWorkspace();
      const cp = new ControlPlane(ws, { logger: new MemoryLogger() });
      const job = await cp.jobs.create(jobRecord({ state: 'started' }));
      const env = { MQTT_BROKER: '127.0.0.1', MQTT_PORT: String((frozen.address() as net.AddressInfo).port) };
      const r = await mam(['event', 'progress', '--job', job.id, '--detail', 'still here'], { cwd: ws, env: { ...process.env, ...env } });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stderr.trim(), /^mam: warning: .*; event progress \(seq 1\) is safe in the job's outbox and will be delivered later$/);
      assert.deepEqual(new JobOutbox(cp.paths.jobDir(job.id)).events().map((e) => [e.event, e.detail]), [['progress', 'still here']]);
    } finally {
      for (const s of sockets) s.destroy();
      frozen.close();
    }
  });
});
