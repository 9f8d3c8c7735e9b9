/**
 * The real agent CLIs (codex, claude, gemini, opencode, copilot, qwen) on a trivial job, against the project's model server (which
 * answers at once, so what is measured is MAM and the CLI, not a model): submit → `started` and
 * submit → `completed` through MAM, beside the floor — the same CLI in the same pane, typed into
 * with raw `tmux send-keys` (the line, 0.3 s, Enter: the least that works, NOTES.md) and timed to the
 * same events. MAM's runs and the floor's alternate on one session, so both see the same history.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { waitForEvent } from '../src/core/base/emitter';
import { newJobId } from '../src/core/base/ids';
import { injectedLine, writeBrief } from '../src/core/jobs/brief';
import type { JobRecord } from '../src/core/store/jobSchema';
import { submitJob } from '../src/core/jobs/submit';
import { stopEmbeddedBroker } from '../src/core/messaging/embeddedBroker';
import { TmuxBackend } from '../src/core/mux/tmux';
import { sleep } from '../src/core/base/process';
import { jobRecord } from '../test/support/rows';
import { agentEnv, agentHome, agentMissing, REAL_AGENTS, startModelServer, type RealAgent } from '../test/support/realAgents';
import { benchEngine } from './engine';
import { percentile, type Row } from './stats';

const TASK = 'Note this job in jobs-done.txt.';

export async function benchRealAgents(root: string, cli: string, runs: number, agents: readonly RealAgent[] = REAL_AGENTS): Promise<Row[]> {
  const ready = agents.filter((agent) => {
    const missing = agentMissing(agent);
    if (missing) console.error(`bench: real ${agent} skipped: ${missing}`);
    return !missing;
  });
  if (ready.length === 0) return [];
  process.env.MAM_TEST_ROOT ??= root; // the test helpers make their temp folders here
  const server = await startModelServer({ steps: { job: { run: ['printf "%s\\n" "{job}" >> jobs-done.txt'] } } });
  const rows: Row[] = [];
  try {
    for (const agent of ready) rows.push(...(await benchOne(agent, root, cli, runs, server)));
  } finally {
    await server.stop();
  }
  return rows;
}

async function benchOne(agent: RealAgent, root: string, cli: string, runs: number, server: { url: string }): Promise<Row[]> {
  const ws = fs.mkdtempSync(path.join(root, `ws-${agent}-`));
  execFileSync('git', ['init', '-q'], { cwd: ws });
  const home = agentHome({ server, projects: [ws] });
  const tmuxServer = `mam-bench-${agent}-${process.pid}`;
  const env = { ...agentEnv(home, server), TMUX_TMPDIR: path.join(root, 'tmux'), MAM_TMUX_SERVER: tmuxServer };
  fs.mkdirSync(env.TMUX_TMPDIR, { recursive: true });
  const { controlPlane, sessions, engine } = benchEngine(ws, env, cli);
  const tmux = new TmuxBackend({ server: tmuxServer, env });
  const samples = { mam: { started: [] as number[], completed: [] as number[] }, floor: { started: [] as number[], completed: [] as number[] } };
  try {
    await engine.connect();
    const row = await sessions.create({ name: `${agent}-1`, agent, baseDir: ws });
    const until = (id: string, state: JobRecord['state']) => waitForEvent(engine.ledger.onDidChangeJob, (c) => c.job.id === id && c.job.state === state, 60_000);

    for (let i = 0; i < Math.max(3, Math.min(runs, 8)); i++) {
      // MAM: the whole submit (claim, ready check, typing, landing check, Enter, confirmation).
      const id = newJobId();
      const t = performance.now();
      const started = until(id, 'started').then(() => performance.now() - t);
      const completed = until(id, 'completed').then(() => performance.now() - t);
      await submitJob(engine, { session: row.name, prompt: TASK, wait: true, baseDir: ws, jobId: id });
      samples.mam.started.push(await started);
      samples.mam.completed.push(await completed);
      await idle(tmux, row.target!);

      // The floor: the job registered and briefed as MAM would, then typed with nothing but send-keys.
      const floorId = newJobId();
      const brief = path.join(controlPlane.paths.jobDir(floorId), 'brief.md');
      const job = await engine.ledger.register({ ...jobRecord({ id: floorId, session: row.name, role: 'worker' }), signed: true, brief, dispatched_at: new Date().toISOString(), timers: { start_timeout_s: 600, heartbeat_s: 30, idle_timeout_s: 600, timeout_s: 600 } }, `bench-${floorId}`);
      writeBrief({ job, task: TASK, cliPath: cli, workspace: ws, heartbeatS: 30 }, brief);
      await engine.ledger.transition(floorId, 'dispatched', null);
      const f = performance.now();
      const floorStarted = until(floorId, 'started').then(() => performance.now() - f);
      const floorCompleted = until(floorId, 'completed').then(() => performance.now() - f);
      execFileSync('tmux', ['-L', tmuxServer, 'send-keys', '-t', row.target!, '-l', injectedLine(floorId, brief)], { env });
      await sleep(300);
      execFileSync('tmux', ['-L', tmuxServer, 'send-keys', '-t', row.target!, 'Enter'], { env });
      samples.floor.started.push(await floorStarted);
      samples.floor.completed.push(await floorCompleted);
      await idle(tmux, row.target!);
    }
  } finally {
    engine.dispose();
    // Pane by pane: closing one ends its program's process group (gemini outlives a killed server).
    for (const pane of await tmux.listPanes().catch(() => [])) await tmux.kill(pane.id);
    await tmux.killServer();
    await stopEmbeddedBroker(controlPlane.paths);
  }
  const rows: Row[] = [];
  for (const what of ['started', 'completed'] as const) {
    const floor = percentile(samples.floor[what], 50);
    const mam = percentile(samples.mam[what], 50);
    // One row per step: the floor (the same pane typed into by raw send-keys) is its reference.
    const floorP99 = percentile(samples.floor[what], 99);
    rows.push({ name: `real ${agent}: \`mam job submit\` → \`${what}\``, p50: mam, p99: percentile(samples.mam[what], 99), reference: `raw send-keys (text, 0.3 s, Enter): ${floor.toFixed(1)} ms (p99 ${floorP99.toFixed(1)})`, ratio: `${(mam / floor).toFixed(2)}×`, goal: '≤ 1.3×' });
  }
  return rows;
}

/** Waits until the agent has finished its turn (its ready sign is back), so the next job starts from the same place. */
async function idle(tmux: TmuxBackend, pane: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = '';
  let stillSince = Date.now();
  while (Date.now() < deadline) {
    const screen = await tmux.capture(pane);
    if (screen !== last) {
      last = screen;
      stillSince = Date.now();
    } else if (Date.now() - stillSince > 500) {
      return;
    }
    await sleep(50);
  }
}
