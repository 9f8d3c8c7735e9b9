import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { claudeSlug } from '../../src/core/agents/claude';
import { LoopStore, type LoopState } from '../../src/core/loop/loopState';
import { loopUsage } from '../../src/core/loop/reports';
import type { JobRecord } from '../../src/core/store/jobSchema';
import type { MeasuredUsage } from '../../src/core/store/jobUsageSchema';
import { controlPlane, mam, tempWorkspace } from '../support/helpers';
import { jobRecord, sessionRow } from '../support/rows';

/**
 * `mam job status`, `mam job list --json` and `mam loop status` on jobs whose session's claude
 * conversation is the real one recorded in test/fixtures/usage/: the usage is read from the store
 * under HOME, recorded through the ledger, and shown per job, per round and in total.
 */
const FIXTURES = path.join(__dirname, '../fixtures/usage');
const CONVERSATION = '27187bbd-39d8-429b-abc1-669834226439';
const RECORDED = (JSON.parse(fs.readFileSync(path.join(FIXTURES, 'jobs.json'), 'utf8')) as Array<{ id: string; session: string; delivered_at: string; finished_at: string }>).filter((j) => j.session === 'claude');
/**
 * The recording, moved to end an hour ago: a job that ended more than a day ago and was never
 * measured is an old record MAM no longer reads (jobUsage.ts), so the recorded dates would make
 * this test depend on the day it runs.
 */
const SHIFT_MS = Date.now() - 3600_000 - Date.parse(RECORDED.at(-1)!.finished_at);
const shifted = (iso: string): string => new Date(Date.parse(iso) + SHIFT_MS).toISOString();
const JOBS = RECORDED.map((j) => ({ ...j, delivered_at: shifted(j.delivered_at), finished_at: shifted(j.finished_at) }));

describe('usage in mam job status, job list --json and loop status', function () {
  this.timeout(60_000);
  let workspace: string;
  let env: Record<string, string | undefined>;

  beforeEach(async () => {
    workspace = tempWorkspace();
    const home = path.join(workspace, 'home');
    const cwd = path.join(workspace, 'checkout');
    const store = path.join(home, '.claude', 'projects', claudeSlug(cwd));
    fs.mkdirSync(store, { recursive: true });
    const recorded = fs.readFileSync(path.join(FIXTURES, 'claude-2.1.197.jsonl'), 'utf8');
    fs.writeFileSync(path.join(store, `${CONVERSATION}.jsonl`), recorded.replace(/"timestamp":"([^"]+)"/g, (_, t: string) => `"timestamp":"${shifted(t)}"`));
    env = { ...process.env, HOME: home };
    const cp = controlPlane(workspace);
    cp.paths.ensureDir();
    await cp.sessions.mutate((tx) => tx.insert(sessionRow('rev', { agent: 'claude', cwd, conversation_id: CONVERSATION, status: 'stopped' })));
    for (const j of JOBS) {
      await cp.jobs.create(jobRecord({ id: j.id, session: 'rev', state: 'completed', target: { kind: 'local', name: 'rev' }, delivered_at: j.delivered_at, finished_at: j.finished_at }));
    }
    const state: LoopState = {
      id: 'l-1', task: 'Write add()', creator: 'rev', planner: null, plan_talk: 0, reviewers: ['rev'], max_loop: 3, max_rebut: 2, review_only: false, checkout: cwd, base: 'b',
      created_at: JOBS[0]!.delivered_at, updated_at: JOBS[1]!.finished_at, status: 'passed', reason: null, exit_code: 0, owner: null, plan: null, rebuts_used: 0,
      steps: [
        { key: 'implement', kind: 'implement', session: 'rev', job_id: JOBS[0]!.id, round: null, status: 'done' },
        { key: 'r1:review:rev', kind: 'review', session: 'rev', job_id: JOBS[1]!.id, round: 1, status: 'done' },
      ],
      rounds: [{ n: 1, identity: { base: 'b', head: 'h', tree: 't' }, status: 'passed', reviews: [{ reviewer: 'rev', step: 'r1:review:rev', job_id: JOBS[1]!.id, verdict: 'PASS' }], started_at: JOBS[1]!.delivered_at }],
    };
    new LoopStore(cp.paths).save(state);
  });

  it('job status shows the tokens line with an estimate; job list --json holds the usage as stored', async () => {
    const status = await mam(['job', 'status', JOBS[0]!.id], { cwd: workspace, env });
    assert.equal(status.exitCode, 0, status.stderr);
    // claude-opus-4-8 is priced by the built-in table's claude-opus-4* entry.
    assert.match(status.stdout, /^tokens {6}[\d,]+ in \([\d,]+ cached\) · [\d,]+ out · ≈ \$\d+\.\d\d \(estimate\)$/m);
    const list = await mam(['job', 'list', '--json'], { cwd: workspace, env });
    const jobs = JSON.parse(list.stdout) as JobRecord[];
    const onDisk = (id: string) => JSON.parse(fs.readFileSync(path.join(workspace, '.mam', 'jobs', `${id}.json`), 'utf8')) as JobRecord;
    for (const j of JOBS) {
      const usage = jobs.find((x) => x.id === j.id)!.usage as MeasuredUsage;
      assert.deepEqual([usage.agent, usage.conversation_id, usage.final], ['claude', CONVERSATION, true]);
      assert.ok(usage.requests >= 4 && usage.input_tokens > usage.cached_input_tokens);
      assert.deepEqual(onDisk(j.id).usage, usage, 'as stored in the record');
    }
  });

  it('a malformed .mam/prices.json is named in one line and the built-in prices are used', async () => {
    fs.writeFileSync(path.join(workspace, '.mam', 'prices.json'), '{"claude-opus-4*": {"input": 5}}');
    const status = await mam(['job', 'status', JOBS[0]!.id], { cwd: workspace, env });
    assert.equal(status.exitCode, 0);
    assert.equal(status.stderr.trim().split('\n').length, 1, status.stderr);
    assert.match(status.stderr, /prices\.json: 'claude-opus-4\*' needs output .*; using the built-in prices/);
    fs.writeFileSync(path.join(workspace, '.mam', 'prices.json'), '{"claude-opus-4*": {"input": 0, "output": 0}}');
    assert.match((await mam(['job', 'status', JOBS[0]!.id], { cwd: workspace, env })).stdout, /≈ \$0\.00 \(estimate\)/);
  });

  it('loop status shows the tokens of each round and in total', async () => {
    const r = await mam(['loop', 'status', 'l-1'], { cwd: workspace, env });
    assert.equal(r.exitCode, 0, r.stderr);
    const cp = controlPlane(workspace);
    const usage = loopUsage(new LoopStore(cp.paths).get('l-1')!, (id) => cp.jobs.get(id));
    const [a, b] = JOBS.map((j) => cp.jobs.get(j.id)!.usage as MeasuredUsage);
    assert.equal(usage.rounds.length, 1);
    assert.equal(usage.rounds[0]!.usage.input_tokens, a!.input_tokens + b!.input_tokens, 'round 1: the implementation and its review');
    assert.equal(usage.total.output_tokens, a!.output_tokens + b!.output_tokens);
    assert.deepEqual([usage.total.jobs, usage.total.measured, usage.total.final], [2, 2, true]);
    const n = (v: number) => v.toLocaleString('en-US');
    assert.match(r.stdout, new RegExp(`^round 1 \\(passed\\)[^\\n]*\\n(  .*\\n)*  tokens: ${n(usage.rounds[0]!.usage.input_tokens)} in `, 'm'));
    assert.match(r.stdout, new RegExp(`^tokens in total: ${n(usage.total.input_tokens)} in \\(${n(usage.total.cached_input_tokens)} cached\\) · ${n(usage.total.output_tokens)} out · ≈ \\$`, 'm'));
    const json = JSON.parse((await mam(['loop', 'status', 'l-1', '--json'], { cwd: workspace, env })).stdout) as { usage: typeof usage };
    assert.deepEqual(json.usage, usage);
  });
});
