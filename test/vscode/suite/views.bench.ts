/**
 * `npm run bench`, in a real VS Code: how long activation takes, and how long the views take to
 * rebuild and render 1,000 open jobs after a reload. Prints `[mam-bench] {json}` lines that
 * bench/vscode.ts turns into rows of the README's table; asserts nothing about time.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JobsNode } from '../../../src/views/jobsTree';
import type { SessionsNode } from '../../../src/views/sessionsTree';
import { mamApi } from './support';

const report = (name: string, ms: number, extra: Record<string, unknown> = {}) => console.log(`[mam-vscode] [mam-bench] ${JSON.stringify({ name, ms, ...extra })}`);

describe('views benchmark', function () {
  this.timeout(120_000);

  it('activation', async () => {
    const api = await mamApi();
    report('activation: activate() itself', api.activationMs);
    report('activation: evaluating dist/extension.js', api.loadMs);
    report('activation: evaluating dist/extension.js + activate()', api.loadMs + api.activationMs);
  });

  it('1,000 open jobs: rebuild after a reload and render both trees', async () => {
    const api = await mamApi();
    const workspace = api.host.current[0]!.folder.uri.fsPath;
    const jobsDir = path.join(workspace, '.mam', 'jobs');
    fs.mkdirSync(jobsDir, { recursive: true });
    const now = Date.now();
    for (let i = 0; i < 1000; i++) {
      const at = new Date(now - i * 1000).toISOString();
      const id = `j-bench-${String(i).padStart(4, '0')}`;
      const job = { id, session: `agent-${i % 20}`, type: 'direct', role: 'worker', state: 'started', reason: null, created_at: at, updated_at: at, seq: 3, parent_job: null, detail: `step ${i}`, title: `Benchmark task number ${i}`, target: { kind: 'local', name: `agent-${i % 20}` }, dispatched_at: at, last_event: 'progress' };
      fs.writeFileSync(path.join(jobsDir, `${id}.json`), JSON.stringify(job));
    }
    const started = performance.now();
    // What a window reload does: new engines read the control plane from disk; then both trees render.
    await api.host.rebuild();
    const groups = (await api.jobs.getChildren()) as JobsNode[];
    let rendered = 0;
    for (const g of groups) {
      api.jobs.getTreeItem(g);
      for (const node of (await api.jobs.getChildren(g)) as JobsNode[]) {
        api.jobs.getTreeItem(node);
        rendered++;
      }
    }
    for (const node of (await api.sessions.getChildren()) as SessionsNode[]) await api.sessions.getTreeItem(node);
    report('1,000 open jobs: reload, rebuild and render', performance.now() - started, { rendered });
    for (const f of fs.readdirSync(jobsDir)) if (f.startsWith('j-bench-')) fs.rmSync(path.join(jobsDir, f));
  });
});
