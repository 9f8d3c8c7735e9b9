/** `mam session status` over 50 live sessions, beside one raw `tmux list-panes -a` on the same server. */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryLogger } from '../src/core/base/log';
import { resolveConfig } from '../src/core/config/settings';
import { ControlPlane } from '../src/core/store/controlPlane';
import { realMuxFactory } from '../src/core/mux';
import { TmuxBackend } from '../src/core/mux/tmux';
import { SessionService } from '../src/core/sessions/sessionService';
import { sessionStatus } from '../src/core/sessions/sessionStatus';
import { percentile, timeCommand, type Row } from './stats';

export async function benchSessionStatus(root: string, cli: string, runs: number): Promise<Row[]> {
  const ws = path.join(root, 'ws-sessions');
  fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
  const server = `mam-bench-${process.pid}`;
  const env = { ...process.env, HOME: path.join(root, 'home'), TMUX_TMPDIR: path.join(root, 'tmux'), MAM_TMUX_SERVER: server };
  fs.mkdirSync(env.TMUX_TMPDIR, { recursive: true });
  const controlPlane = new ControlPlane(ws, { logger: new MemoryLogger() });
  const service = new SessionService({ controlPlane, config: resolveConfig({ workspace: ws, env }), logger: new MemoryLogger(), env, muxFactory: realMuxFactory(env) });
  const tmux = new TmuxBackend({ server, env });
  try {
    for (let i = 0; i < 50; i++) {
      await service.create({ name: `agent-${i}`, agent: 'shell', command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], baseDir: ws });
    }
    const format = '#{pane_id} #{pane_pid} #{pane_dead} #{pane_current_command} #{pane_current_path}';
    const rawArgs = ['-L', server, '-f', '/dev/null', 'list-panes', '-a', '-F', format];
    const rawOnce = (): number => {
      const t = performance.now();
      const r = spawnSync('tmux', rawArgs, { env, stdio: 'ignore' });
      if (r.status !== 0) throw new Error(`tmux list-panes exited ${r.status}`);
      return performance.now() - t;
    };
    const statusOnce = async (): Promise<number> => {
      const t = performance.now();
      const states = await sessionStatus(service, await controlPlane.sessions.list());
      if (states.length !== 50) throw new Error(`expected 50 sessions, saw ${states.length}`);
      return performance.now() - t;
    };
    // The reference and the engine call take turns, so that the load other work puts on the
    // machine falls on both alike; so does the same right after another writer changed the
    // registry (read from the DB again, not from memory). The first round warms up.
    const writer = new ControlPlane(ws, { logger: new MemoryLogger() });
    const raw: number[] = [];
    const inProcess: number[] = [];
    const afterWrite: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      const r = rawOnce();
      const st = await statusOnce();
      await writer.sessions.mutate((tx) => tx.update(`agent-${i % 50}`, { current_job: `j-${i}` }));
      const w = await statusOnce();
      if (i === 0) continue;
      raw.push(r);
      inProcess.push(st);
      afterWrite.push(w);
    }
    const cold = timeCommand(process.execPath, [cli, 'session', 'status', '--json'], runs, { cwd: ws, env });
    const rawP50 = percentile(raw, 50);
    const row = (name: string, samples: number[]): Row => ({
      name,
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      reference: 'raw `tmux list-panes -a`',
      ratio: `${(percentile(samples, 50) / rawP50).toFixed(2)}×`,
    });
    return [
      { name: 'raw `tmux list-panes -a`, 50 panes (reference)', p50: rawP50, p99: percentile(raw, 99) },
      { ...row('session status, 50 live sessions (engine: registry read, unchanged since its last read, + one batched tmux query)', inProcess), goal: '≤ 2×' },
      row('session status, 50 live sessions, each right after another process changed the registry (engine: registry read from the DB + one batched tmux query; for comparison)', afterWrite),
      row('`mam session status --json`, 50 live sessions (cold process)', cold),
    ];
  } finally {
    await tmux.killServer();
  }
}
