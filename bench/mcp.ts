/**
 * `mam mcp`, each beside its reference, in one run:
 * - a cold `mam mcp` to its answer to `initialize`, beside a cold `mam --version`;
 * - `job_status` through MCP (the SDK's client over stdio, the server warm), beside the same work
 *   in this process (the record, its usage settled, its audit log counted);
 * - `job_submit` → `started` through MCP, beside `mam job submit --no-wait` (a cold process each
 *   time, as an agent's shell runs it), with the same agent acknowledging at once.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { waitForEvent } from '../src/core/base/emitter';
import { settleUsage } from '../src/core/jobs/jobUsage';
import { stopEmbeddedBroker } from '../src/core/messaging/embeddedBroker';
import { TmuxBackend } from '../src/core/mux/tmux';
import { connectMcp } from '../test/support/mcpClient';
import { benchEngine } from './engine';
import { percentile, type Row } from './stats';

const FAKE_AGENT = path.resolve(__dirname, '../test/fixtures/fake-agent.js');

export async function benchMcp(root: string, cli: string, runs: number): Promise<Row[]> {
  const ws = path.join(root, 'ws-mcp');
  fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
  fs.mkdirSync(path.join(ws, '.mam'), { recursive: true });
  const server = `mam-bench-mcp-${process.pid}`;
  const env = { ...process.env, HOME: path.join(root, 'home'), TMUX_TMPDIR: path.join(root, 'tmux'), MAM_TMUX_SERVER: server, MAM_NO_WARDEN: '1' };
  fs.mkdirSync(env.TMUX_TMPDIR, { recursive: true });
  const { controlPlane, sessions, engine } = benchEngine(ws, env, cli);
  const rows: Row[] = [];
  try {
    await engine.connect();
    await sessions.create({ name: 'instant', agent: 'claude', command: [process.execPath, FAKE_AGENT, '--as', 'claude', '--mode', 'instant'], baseDir: ws });

    // Cold start: a new `mam mcp` until it has answered `initialize` (the SDK client's connect).
    const version: number[] = [];
    const cold: number[] = [];
    for (let i = 0; i <= runs; i++) {
      let t = performance.now();
      await run(process.execPath, [cli, '--version'], ws, env);
      if (i > 0) version.push(performance.now() - t);
      t = performance.now();
      const c = await connectMcp({ cwd: ws, env });
      if (i > 0) cold.push(performance.now() - t);
      await c.close();
    }
    const versionP50 = percentile(version, 50);
    rows.push({ name: '`mam mcp`: a cold server to its answer to `initialize`', p50: percentile(cold, 50), p99: percentile(cold, 99), reference: `\`mam --version\` (${versionP50.toFixed(1)} ms)`, ratio: `${(percentile(cold, 50) / versionP50).toFixed(2)}×` });

    const mcp = await connectMcp({ cwd: ws, env });
    try {
      // Submit → started: the same agent, the same observer (this engine, which hears the job's state).
      const startedAfter = async (submit: () => Promise<unknown>): Promise<number> => {
        const t = performance.now();
        const started = waitForEvent(engine.ledger.onDidChangeJob, (c) => c.job.state === 'started' && c.previous !== 'started' && c.job.session === 'instant', 30_000);
        const [{ job }] = await Promise.all([started, submit()]);
        const took = performance.now() - t;
        await waitForEvent(engine.ledger.onDidChangeJob, (c) => c.job.id === job.id && c.job.state === 'completed', 30_000).catch(() => undefined);
        return took;
      };
      const viaMcp: number[] = [];
      const viaCli: number[] = [];
      const dispatches = Math.min(runs, 12);
      for (let i = 0; i <= dispatches; i++) {
        const m = await startedAfter(() => mcp.call('job_submit', { session: 'instant', prompt: `task ${i} through MCP` }));
        const c = await startedAfter(() => run(process.execPath, [cli, 'job', 'submit', '--session', 'instant', '--prompt', `task ${i} from the CLI`, '--no-wait'], ws, env));
        if (i > 0) {
          viaMcp.push(m);
          viaCli.push(c);
        }
      }
      const cliP50 = percentile(viaCli, 50);
      rows.push({ name: 'dispatch from the CLI: `mam job submit --no-wait` (cold process) → started (reference)', p50: cliP50, p99: percentile(viaCli, 99) });
      rows.push({ name: 'dispatch through MCP: `job_submit` → started (warm server)', p50: percentile(viaMcp, 50), p99: percentile(viaMcp, 99), reference: 'the CLI', ratio: `${(percentile(viaMcp, 50) / cliP50).toFixed(2)}×`, goal: '≤ 1.1×' });

      // job_status: a tool call's whole round trip, beside the engine doing the same work here.
      const id = controlPlane.jobs.list().jobs[0]!.id;
      const direct: number[] = [];
      const viaTool: number[] = [];
      for (let i = 0; i < 200 + 20; i++) {
        let t = performance.now();
        const [job] = await settleUsage(engine, [controlPlane.jobs.require(id)]);
        void JSON.stringify({ job, events: controlPlane.audit.readEntries(id).entries.filter((e) => e.type === 'event').length });
        if (i >= 20) direct.push(performance.now() - t);
        t = performance.now();
        const answer = await mcp.call('job_status', { job: id });
        if (answer.isError) throw new Error(answer.text);
        if (i >= 20) viaTool.push(performance.now() - t);
      }
      const directP50 = percentile(direct, 50);
      rows.push({ name: "a job's status: the engine's call in-process (reference)", p50: directP50, p99: percentile(direct, 99) });
      rows.push({ name: 'a job\'s status through MCP: `job_status` (SDK client ↔ `mam mcp` over stdio)', p50: percentile(viaTool, 50), p99: percentile(viaTool, 99), reference: 'the engine call', ratio: `${(percentile(viaTool, 50) / directP50).toFixed(1)}×` });
    } finally {
      await mcp.close();
    }
  } finally {
    engine.dispose();
    await new TmuxBackend({ server, env }).killServer();
    await stopEmbeddedBroker(controlPlane.paths);
  }
  return rows;
}

/** Runs a command to its end without blocking this process's event loop (its engine must hear the job). */
function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env, stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} exited ${code}`))));
  });
}
