/**
 * `npm run bench`: every benchmark, side by side with its reference, in one run. Prints a markdown
 * table for the README. Nothing here is asserted; speed is reported, not tested.
 *
 * `MAM_BENCH_PHASES=cli,jobs npm run bench` runs only the phases named (the names below); the
 * table then holds only their rows.
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
import { alternate, coldEnv, percentile, renderTable, timeOnce, type Row } from './stats';

const CLI = path.resolve(__dirname, '../dist/cli.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 30);

const PHASES: Record<string, (root: string) => Promise<Row[]> | Row[]> = {
  cli: (root) => benchCli(root),
  'session status': (root) => benchSessionStatus(root, CLI, RUNS),
  mqtt: (root) => benchMqtt(root, CLI),
  jobs: (root) => benchJobs(root, CLI, RUNS),
  mcp: (root) => benchMcp(root, CLI, RUNS),
  scale: (root) => benchScale(root, CLI),
  'three hosts': (root) => benchHosts(root, CLI),
  'real agents': (root) => benchRealAgents(root, CLI, RUNS),
  overlap: (root) => benchOverlap(root, Math.min(RUNS, 15)),
  plan: (root) => benchPlan(root, CLI),
  vscode: (root) => benchVscode(root),
};

async function main(): Promise<void> {
  const chosen = selectedPhases(process.env.MAM_BENCH_PHASES);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-bench-'));
  try {
    const rows: Row[] = [];
    for (const name of chosen) rows.push(...(await phase(name, () => PHASES[name]!(root))));
    console.log(`Node ${process.versions.node}, ${os.cpus().length} cores, ${RUNS} runs per command\n`);
    console.log(renderTable(rows));
  } finally {
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** The phases MAM_BENCH_PHASES names (comma-separated), in the table's order; all when unset. */
function selectedPhases(spec: string | undefined): string[] {
  if (!spec?.trim()) return Object.keys(PHASES);
  const asked = spec.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = asked.filter((s) => !(s in PHASES));
  if (unknown.length > 0) {
    console.error(`bench: unknown phase ${unknown.map((s) => `'${s}'`).join(', ')}; the phases are: ${Object.keys(PHASES).join(', ')}`);
    process.exit(64);
  }
  return Object.keys(PHASES).filter((name) => asked.includes(name));
}

/** The registry write, and cold `mam` processes beside a bare `node -e 0`. */
async function benchCli(root: string): Promise<Row[]> {
  const env = coldEnv({ ...process.env, HOME: path.join(root, 'home') });
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

  // Each command in turn with a bare node, so that other load falls on both alike.
  const node = (): number => timeOnce(process.execPath, ['-e', '0'], { env });
  const version = alternate(RUNS, node, () => timeOnce(process.execPath, [CLI, '--version'], { cwd: ws, env }));
  const list = alternate(RUNS, node, () => timeOnce(process.execPath, [CLI, 'session', 'list', '--json'], { cwd: ws, env }));
  const bare = [...version.reference, ...list.reference];
  rows.push({ name: '`node -e 0` (reference)', p50: percentile(bare, 50), p99: percentile(bare, 99) });
  for (const [name, { reference: ref, measured: samples }] of [['`mam --version` (cold process)', version], ['`mam session list --json`, 50 sessions (cold process)', list]] as const) {
    const p50 = percentile(samples, 50);
    rows.push({ name, p50, p99: percentile(samples, 99), reference: '`node -e 0`', ratio: `${(p50 / percentile(ref, 50)).toFixed(2)}×` });
  }
  return rows;
}

/**
 * One phase of the run: its rows, or one row saying it failed (the stack on stderr); the phases
 * after it still run. An error thrown where nothing awaits it (a timer, an event handler, a
 * promise the phase left behind) is caught too, and named in a row of the phase it happened in.
 */
async function phase(name: string, run: () => Promise<Row[]> | Row[]): Promise<Row[]> {
  const strays: string[] = [];
  const stray = (err: unknown): void => {
    console.error(`bench: ${name}: an error nothing awaited: ${err instanceof Error ? err.stack : String(err)}`);
    strays.push(firstLine(err));
  };
  process.on('unhandledRejection', stray);
  process.on('uncaughtException', stray);
  try {
    const rows = await run();
    return [...rows, ...strays.map((m) => ({ name: `${name}: an error nothing awaited (its rows above may lack a figure): ${m}`, p50: Number.NaN }))];
  } catch (err) {
    console.error(`bench: ${name} failed: ${err instanceof Error ? err.stack : String(err)}`);
    return [{ name: `${name}: FAILED: ${firstLine(err)}`, p50: Number.NaN }, ...strays.map((m) => ({ name: `${name}: an error nothing awaited: ${m}`, p50: Number.NaN }))];
  } finally {
    process.off('unhandledRejection', stray);
    process.off('uncaughtException', stray);
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200).replace(/\|/g, '/');
}

void main();
