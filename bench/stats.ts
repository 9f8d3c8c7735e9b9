/** Small helpers shared by the benchmarks: timing, percentiles, a markdown table. */
import { spawnSync } from 'node:child_process';

export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Wall time of `file args` over `runs` runs (after one warm-up), in ms. */
export function timeCommand(file: string, args: readonly string[], runs: number, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): number[] {
  const once = (): number => {
    const t = process.hrtime.bigint();
    const r = spawnSync(file, args, { cwd: options.cwd, env: options.env, stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.status}`);
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  once();
  return Array.from({ length: runs }, once);
}

export interface Row {
  name: string;
  /** NaN when the measurement failed (the name says how). */
  p50: number;
  p99?: number;
  reference?: string;
  ratio?: string;
  goal?: string;
}

export function renderTable(rows: readonly Row[]): string {
  const lines = ['| measurement | p50 | p99 | reference | ratio | goal |', '|---|--:|--:|---|--:|---|'];
  for (const r of rows) {
    lines.push(`| ${r.name} | ${Number.isNaN(r.p50) ? '—' : `${r.p50.toFixed(1)} ms`} | ${r.p99 === undefined ? '' : `${r.p99.toFixed(1)} ms`} | ${r.reference ?? ''} | ${r.ratio ?? ''} | ${r.goal ?? ''} |`);
  }
  return lines.join('\n');
}
