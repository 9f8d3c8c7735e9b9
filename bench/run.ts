/**
 * `npm run bench`: every benchmark, side by side with its reference, in one run. Prints a markdown
 * table for the README. Nothing here is asserted; speed is reported, not tested.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryLogger } from '../src/core/base/log';
import { ControlPlane } from '../src/core/store/controlPlane';
import { sessionRow } from '../test/support/rows';
import { benchSessionStatus } from './sessions';
import { benchJobs } from './jobs';
import { benchMcp } from './mcp';
import { benchScale } from './scale';
import { benchHosts } from './hosts';
import { benchMqtt } from './mqtt';
import { benchVscode } from './vscode';
import { benchRealAgents } from './realAgents';
import { benchOverlap } from './overlap';
import { benchPlan } from './plan';
import { percentile, renderTable, timeCommand, type Row } from './stats';

const CLI = path.resolve(__dirname, '../dist/cli.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 30);

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-bench-'));
  const env = { ...process.env, HOME: path.join(root, 'home') };
  try {
    const ws = path.join(root, 'ws');
    fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
    const cp = new ControlPlane(ws, { logger: new MemoryLogger() });
    await cp.sessions.mutate((tx) => {
      for (let i = 0; i < 50; i++) tx.insert(sessionRow(`agent-${i}`, { cwd: ws }));
    });

    const rows: Row[] = [];
    const writes: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await cp.sessions.mutate((tx) => tx.update(`agent-${i % 50}`, { current_job: `j-${i}` }));
      writes.push(performance.now() - t);
    }
    rows.push({ name: 'registry write (lock, load, validate, DB + YAML fsync), 50 sessions', p50: percentile(writes, 50), p99: percentile(writes, 99) });

    const bare = timeCommand(process.execPath, ['-e', '0'], RUNS, { env });
    const version = timeCommand(process.execPath, [CLI, '--version'], RUNS, { cwd: ws, env });
    const list = timeCommand(process.execPath, [CLI, 'session', 'list', '--json'], RUNS, { cwd: ws, env });
    const nodeP50 = percentile(bare, 50);
    rows.push({ name: '`node -e 0` (reference)', p50: nodeP50, p99: percentile(bare, 99) });
    for (const [name, samples] of [['`mam --version` (cold process)', version], ['`mam session list --json`, 50 sessions (cold process)', list]] as const) {
      const p50 = percentile(samples, 50);
      rows.push({ name, p50, p99: percentile(samples, 99), reference: '`node -e 0`', ratio: `${(p50 / nodeP50).toFixed(2)}×` });
    }
    rows.push(...(await phase('session status', () => benchSessionStatus(root, CLI, RUNS))));
    rows.push(...(await phase('mqtt', () => benchMqtt(root, CLI))));
    rows.push(...(await phase('jobs', () => benchJobs(root, CLI, RUNS))));
    rows.push(...(await phase('mcp', () => benchMcp(root, CLI, RUNS))));
    rows.push(...(await phase('scale', () => benchScale(root, CLI))));
    rows.push(...(await phase('three hosts', () => benchHosts(root, CLI))));
    rows.push(...(await phase('real agents', () => benchRealAgents(root, CLI, RUNS))));
    rows.push(...(await phase('overlap', () => benchOverlap(root, Math.min(RUNS, 15)))));
    rows.push(...(await phase('plan', () => benchPlan(root, CLI))));
    rows.push(...(await phase('vscode', () => benchVscode(root))));
    console.log(`Node ${process.versions.node}, ${os.cpus().length} cores, ${RUNS} runs per command\n`);
    console.log(renderTable(rows));
  } finally {
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** One phase of the run: its rows, or one row saying it failed (the stack on stderr); the phases after it still run. */
async function phase(name: string, run: () => Promise<Row[]> | Row[]): Promise<Row[]> {
  try {
    return await run();
  } catch (err) {
    console.error(`bench: ${name} failed: ${err instanceof Error ? err.stack : String(err)}`);
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200).replace(/\|/g, '/');
    return [{ name: `${name}: FAILED: ${message}`, p50: Number.NaN }];
  }
}

void main();
