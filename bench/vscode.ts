/** Runs the views benchmark (test/vscode/suite/views.bench.ts) in a real VS Code and reads its lines. */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { percentile, type Row } from './stats';

const ROOT = path.resolve(__dirname, '..');

export function benchVscode(root: string): Row[] {
  const install = spawnSync(process.execPath, [path.join(ROOT, 'scripts/vscode/install.mjs')], { stdio: 'inherit' });
  const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts/vscode/build-tests.mjs')], { stdio: 'inherit' });
  if (install.status !== 0 || build.status !== 0) return [{ name: 'VS Code benchmark: harness not available', p50: NaN }];
  const envFile = path.join(root, 'vscode-bench-env.json');
  fs.writeFileSync(envFile, JSON.stringify({ MAM_VSCODE_BENCH: '1' }));
  const rows: Row[] = [];
  for (let run = 0; run < 5; run++) {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/vscode/run.mjs'), 'test', '--tests', path.join(ROOT, 'out/test/vscode/suite/index.js'), '--env-file', envFile], { encoding: 'utf8' });
    for (const line of r.stdout.split('\n')) {
      const m = /\[mam-bench\] (\{.*\})/.exec(line);
      if (!m) continue;
      const { name, ms, rendered } = JSON.parse(m[1]!) as { name: string; ms: number; rendered?: number };
      // A figure for fewer rows than asked would flatter: refuse it.
      if (rendered !== undefined && rendered !== 1000) throw new Error(`${name}: rendered ${rendered} jobs, not 1,000`);
      const row = rows.find((x) => x.name === name);
      if (row) (row as Row & { samples: number[] }).samples.push(ms);
      else rows.push({ name, p50: 0, samples: [ms] } as Row & { samples: number[] });
    }
  }
  const windows = '5 VS Code windows';
  for (const row of rows as Array<Row & { samples: number[] }>) {
    row.p50 = percentile(row.samples, 50);
    row.p99 = percentile(row.samples, 99);
    if (row.name.startsWith('activation')) Object.assign(row, { goal: '< 50 ms', reference: windows });
    else if (row.name.startsWith('1,000')) Object.assign(row, { goal: '< 1 s', reference: windows });
  }
  // A job event reaching its row, beside the event path alone in the same windows.
  const alone = rows.find((r) => r.name.startsWith('VS Code: event path alone'));
  for (const row of rows as Array<Row & { samples: number[] }>) {
    if (!alone || !row.name.startsWith('VS Code: ')) continue;
    if (row === alone) row.reference = `${row.samples.length} events in ${windows}`;
    else if (row.name.startsWith('VS Code: what the tree adds')) row.goal = '≤ 10 ms';
    else {
      const d = row.p50 - alone.p50;
      Object.assign(row, { reference: 'event path alone', ratio: `${d < 0 ? '−' : '+'}${Math.abs(d).toFixed(1)} ms` });
    }
  }
  return rows;
}
