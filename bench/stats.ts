/** Small helpers shared by the benchmarks: timing, percentiles, a markdown table. */
import { spawnSync } from 'node:child_process';

/** The p-th percentile; NaN when there are no samples (a row then shows '—'). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Wall time of one run of `file args`, in ms; throws when it does not exit 0. */
export function timeOnce(file: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(file, args, { cwd: options.cwd, env: options.env, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/** Wall time of `file args` over `runs` runs (after one warm-up), in ms. */
export function timeCommand(file: string, args: readonly string[], runs: number, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): number[] {
  const once = (): number => timeOnce(file, args, options);
  once();
  return Array.from({ length: runs }, once);
}

/**
 * The environment for timing cold Node processes against `node -e 0`: without NODE_EXTRA_CA_CERTS,
 * which makes every Node process read and parse that bundle of certificates as it starts (~55 ms of
 * CPU here, where the machine sets it for its own tools); a user's machine rarely sets it, and it
 * would hide what a `mam` process itself adds behind a start three times as long.
 */
export function coldEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _, ...rest } = env;
  return rest;
}

/**
 * `runs` samples of each of two commands, each run of one right after one of the other (after one
 * warm-up of each): whatever else loads the machine falls on both alike.
 */
export function alternate(runs: number, reference: () => number, measured: () => number): { reference: number[]; measured: number[] } {
  const out = { reference: [] as number[], measured: [] as number[] };
  for (let i = 0; i <= runs; i++) {
    const r = reference();
    const m = measured();
    if (i === 0) continue;
    out.reference.push(r);
    out.measured.push(m);
  }
  return out;
}

export interface Row {
  name: string;
  /** NaN when the measurement failed (the name says how). */
  p50: number;
  p99?: number;
  reference?: string;
  ratio?: string;
  goal?: string;
  /** What p50 and p99 count (default ms). */
  unit?: 'ms' | 'MB';
}

export function renderTable(rows: readonly Row[]): string {
  const lines = ['| measurement | p50 | p99 | reference | ratio | goal |', '|---|--:|--:|---|--:|---|'];
  for (const r of rows) {
    const unit = r.unit ?? 'ms';
    const digits = unit === 'MB' ? 2 : 1;
    lines.push(`| ${r.name} | ${Number.isNaN(r.p50) ? '—' : `${r.p50.toFixed(digits)} ${unit}`} | ${r.p99 === undefined ? '' : Number.isNaN(r.p99) ? '—' : `${r.p99.toFixed(digits)} ${unit}`} | ${r.reference ?? ''} | ${r.ratio ?? ''} | ${r.goal ?? ''} |`);
  }
  return lines.join('\n');
}
