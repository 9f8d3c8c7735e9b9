/**
 * `mam mcp` driven by the MCP SDK's own client over stdio, as an agent CLI drives it, against the
 * scripted agents, real tmux, real git and the embedded broker: every tool, a submit followed by
 * a wait with progress notifications, a cancelled wait (the job goes on), a loop and a plan run by
 * processes of their own, bad input of every kind (one line, nothing changed), an uninitialised
 * and an untrusted workspace (nothing done), agent text returned as data, and no secret in any
 * answer. The real claude and codex as orchestrators: mcpRealAgents.test.ts.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LoopState } from '../../src/core/loop/loopState';
import type { JobRecord } from '../../src/core/store/jobSchema';
import { FAKE_AGENT, heartbeatServices, readAgentLog, snapshotTree, tempDir, tempWorkspace, until } from '../support/helpers';
import { jobFixture, loopFixture, type JobFixture } from '../support/jobs';
import { connectMcp, type McpConnection, type ToolAnswer } from '../support/mcpClient';

const DISPATCH_SECRET = 'mcp-test-dispatch-secret-0123456789';

describe('mam mcp (the SDK client over stdio; scripted agents, real tmux, git and broker)', function () {
  this.timeout(180_000);
  let f: JobFixture | undefined;
  const connections: McpConnection[] = [];

  const open = async (args: string[] = [], cwd = f!.workspace, env: Record<string, string> = {}): Promise<McpConnection> => {
    const c = await connectMcp({ cwd, env: { ...f!.env, MAM_DISPATCH_SECRET: DISPATCH_SECRET, ...env }, args });
    connections.push(c);
    return c;
  };
  const ok = (a: ToolAnswer, what: string): ToolAnswer => {
    assert.equal(a.isError, false, `${what}: ${a.text}`);
    return a;
  };
  const job = (a: ToolAnswer): JobRecord => a.data.job as JobRecord;

  afterEach(async () => {
    const seen = connections.flatMap((c) => c.seen);
    for (const c of connections.splice(0)) await c.close();
    if (f) {
      // No answer held a secret of the workspace: job tokens, claim tokens, the broker's password, the dispatch secret.
      const secrets = workspaceSecrets(f.workspace);
      for (const answer of seen) for (const s of secrets) assert.ok(!answer.includes(s), `an answer holds a secret (${s.slice(0, 6)}…): ${answer.slice(0, 300)}`);
      await f.dispose();
      f = undefined;
    }
  });

  it('sessions: create (with a command, no shell), list, send, stop, resume', async () => {
    f = jobFixture();
    assert.equal((await f.run(['init'])).exitCode, 0);
    const mcp = await open();
    const command = [process.execPath, FAKE_AGENT, '--as', 'claude', '--log', f.log, '--mode', 'instant'];
    const created = ok(await mcp.call('session_create', { name: 'w1', agent: 'claude', role: 'worker', command }), 'session_create');
    assert.deepEqual([(created.data.session as { status: string }).status, (created.data.session as { command: string[] }).command], ['running', command]);
    const listed = ok(await mcp.call('session_list'), 'session_list');
    assert.deepEqual((listed.data.sessions as Array<{ name: string }>).map((s) => s.name), ['w1']);
    assert.match(listed.text, /^w1 \(claude, worker\): running$/);

    const line = `Hello from the orchestrator; $(touch ${path.join(f.workspace, 'pwned')}) stays text`;
    ok(await mcp.call('session_send', { session: 'w1', text: line }), 'session_send');
    await until(() => readAgentLog(f!.log).some((e) => e.text === line), 20_000, 'the line to reach the agent');
    assert.ok(!fs.existsSync(path.join(f.workspace, 'pwned')), 'nothing was run by a shell');

    const before = (listed.data.sessions as Array<{ conversation_id: string }>)[0]!.conversation_id;
    const stopped = ok(await mcp.call('session_stop', { session: 'w1' }), 'session_stop');
    assert.deepEqual([(stopped.data.session as { status: string }).status, stopped.data.already_stopped], ['stopped', false]);
    const resumed = ok(await mcp.call('session_resume', { session: 'w1' }), 'session_resume');
    assert.deepEqual([(resumed.data.session as { status: string }).status, (resumed.data.session as { conversation_id: string }).conversation_id], ['running', before]);
  });

  it('job_submit returns once the job is delivered; job_wait follows it to its end with progress notifications; wait: true does both', async () => {
    f = jobFixture();
    await f.agent('w1', 'work', ['--work-ms', '1500']);
    const mcp = await open();
    const submitted = ok(await mcp.call('job_submit', { session: 'w1', prompt: 'Fix the typo in README', title: 'Fix the typo' }), 'job_submit');
    const id = job(submitted).id;
    assert.ok(['dispatched', 'started'].includes(job(submitted).state), `open when delivered: ${job(submitted).state}`);
    assert.deepEqual([submitted.data.exit_code, job(submitted).title, job(submitted).origin], [0, 'Fix the typo', { kind: 'person', by: 'mcp' }]);
    assert.equal('token' in (job(submitted).owner ?? {}), false);

    const progress: string[] = [];
    const waited = ok(await mcp.call('job_wait', { jobs: [id] }, { onprogress: (p) => progress.push(p.message ?? '') }), 'job_wait');
    assert.deepEqual([waited.data.exit_code, waited.data.timed_out, waited.data.ended], [0, false, [id]]);
    assert.equal((waited.data.jobs as JobRecord[])[0]!.state, 'completed');
    // First the state the wait found the job in, then each change from it; found dispatched, `→ started`
    // came before the end, and is not the one that can be dropped.
    const found = new RegExp(`^job ${id}: (\\w+)$`).exec(progress[0] ?? '')?.[1];
    assert.ok(found && ['dispatched', 'started'].includes(found), `progress: ${JSON.stringify(progress)}`);
    assertTrail(progress.slice(1), id, found === 'dispatched' ? 1 : 0, found);
    assert.match(waited.text, new RegExp(`^${id} completed`));

    const status = ok(await mcp.call('job_status', { job: id }), 'job_status');
    assert.equal(job(status).state, 'completed');
    assert.ok((status.data.events as number) >= 2);
    const log = ok(await mcp.call('job_logs', { job: id, last: 3 }), 'job_logs');
    assert.equal((log.data.entries as unknown[]).length, 3);
    assert.ok((log.data.entries as Array<{ event?: string }>).some((e) => e.event === 'completed'));
    const resource = await mcp.client.readResource({ uri: `mam://job/${id}` });
    assert.equal((JSON.parse((resource.contents[0] as { text: string }).text) as JobRecord).state, 'completed');

    // wait: true, in one call; each state change is a progress notification.
    const seen: string[] = [];
    const both = ok(await mcp.call('job_submit', { session: 'w1', prompt: 'And another', wait: true }, { onprogress: (p) => seen.push(p.message ?? '') }), 'job_submit wait');
    assert.deepEqual([job(both).state, both.data.exit_code], ['completed', 0]);
    // The state the submit found the job in once delivered: dispatched, or started already (the
    // scripted agent may start it first), then each change from it.
    const submittedAs = new RegExp(`^job ${job(both).id}: (\\w+)$`).exec(seen[0] ?? '')?.[1];
    assert.ok(submittedAs && ['dispatched', 'started'].includes(submittedAs), `progress: ${JSON.stringify(seen)}`);
    assertTrail(seen.slice(1), job(both).id, submittedAs === 'dispatched' ? 1 : 0, submittedAs);
    // A wait that runs out is an answer, not an error: the job goes on.
    const cancelled = ok(await mcp.call('job_cancel', { job: id }), 'job_cancel of an ended job');
    assert.equal(cancelled.data.changed, false);
  });

  it("cancelling a job_wait stops the wait, not the job; an agent's text comes back as data, its control characters shown and secrets redacted", async () => {
    f = jobFixture();
    assert.equal((await f.run(['init'])).exitCode, 0);
    const mcp = await open([], f.workspace, { MAM_DEBUG: '1' });
    const id = job(ok(await mcp.call('job_submit', { session: 'human:alice', prompt: 'Review the release notes' }), 'submit to a person')).id;
    const stop = new AbortController();
    const found: string[] = [];
    const waiting = mcp.call('job_wait', { jobs: [id] }, { signal: stop.signal, onprogress: (p) => (p.message?.includes('→') ? stop.abort() : found.push(p.message ?? '')) }).then(
      (answer) => assert.fail(`the wait answered: ${answer.text}`),
      (err: unknown) => err,
    );
    // The wait says where the job is, then the person starts: a progress notification; the caller cancels its call on it.
    await until(() => found.length > 0, 10_000, 'the wait to say where the job is');
    assert.deepEqual(found, [`job ${id}: dispatched`]);
    assert.equal((await f.run(['event', 'started', '--job', id])).exitCode, 0);
    assert.match(String(await waiting), /abort/i);
    // The server lets go of the wait at once, while the job is still open.
    await until(() => mcp.stderr().includes('job_wait: stopped: the client cancelled the call'), 10_000, 'the server to stop waiting');
    assert.equal(f.controlPlane.jobs.require(id).state, 'started', 'the job goes on');
    assert.equal(job(ok(await mcp.call('job_status', { job: id }), 'status after the cancelled wait')).state, 'started');

    // The person completes, their detail holding escape sequences and the broker's password.
    const password = (JSON.parse(fs.readFileSync(path.join(f.workspace, '.mam', 'broker.json'), 'utf8')) as { password: string }).password;
    assert.equal((await f.run(['event', 'completed', '--job', id, '--detail', `done \u001b[31mred\u001b[0m ${password} ${DISPATCH_SECRET}`])).exitCode, 0);
    const waited = ok(await mcp.call('job_wait', { jobs: [id], timeout_s: 60 }), 'the second wait');
    const detail = (waited.data.jobs as JobRecord[])[0]!.detail!;
    assert.equal(detail, 'done \\x1b[31mred\\x1b[0m [redacted] [redacted]');
    assert.ok(!waited.text.includes('\u001b') && waited.text.includes('[redacted]'));
  });

  it('loop_start: checked and stored, run by a process of its own to PASS with progress; loop_status; merge_enqueue and merge_status; conflicts', async () => {
    f = loopFixture();
    const fx = f;
    const git = (...args: string[]) => execFileSync('git', args, { cwd: fx.workspace, encoding: 'utf8' }).trim();
    const dir = (await fx.run(['worktree', 'prepare', 'a'])).stdout.trim();
    const agent = async (name: string, mode: string, cwd: string, extra: string[] = []) => {
      const command = [process.execPath, FAKE_AGENT, '--as', 'claude', '--log', fx.log, '--mode', mode, ...extra].map((w) => JSON.stringify(w)).join(' ');
      assert.equal((await fx.run(['session', 'create', '--agent', 'claude', '--name', name, '--command', command, '--cwd', cwd])).exitCode, 0);
    };
    await agent('creator-a', 'creator', dir);
    await agent('rev-a', 'reviewer', fx.workspace, ['--verdicts', 'NOT PASS,PASS']);
    const mcp = await open();
    const server = (mcp.client.transport as { pid?: number | null } | undefined)?.pid;
    const owners = new Set<number>();
    const progress: string[] = [];
    const loopFile = (id: string) => JSON.parse(fs.readFileSync(path.join(fx.workspace, '.mam', 'loops', `${id}.json`), 'utf8')) as LoopState;
    const started = ok(await mcp.call('loop_start', { task: 'Work on a', creator: 'creator-a', reviewers: ['rev-a'], worktree: dir, wait: true }, {
      timeoutMs: 150_000,
      onprogress: (p) => {
        progress.push(p.message ?? '');
        const id = /^loop (\S+):/.exec(p.message ?? '')?.[1];
        const owner = id ? loopFile(id).owner : null;
        if (owner) owners.add(owner.pid);
      },
    }), 'loop_start');
    const loop = started.data.loop as LoopState & { log: string };
    assert.equal(loop.status, 'passed', started.text);
    assert.deepEqual(loop.rounds.map((r) => [r.n, r.status]), [[1, 'not_passed'], [2, 'passed']]);
    assert.ok(owners.size >= 1 && !owners.has(server!), `run by a process of its own (owners ${[...owners]}, server ${server})`);
    assert.ok(progress.some((m) => /r1:review:rev-a/.test(m)) && progress.some((m) => /r1:fix/.test(m)), JSON.stringify(progress));
    assert.ok(fs.existsSync(loop.log), 'its runner wrote its output to its log');
    const status = ok(await mcp.call('loop_status', { loop: loop.id }), 'loop_status');
    assert.match(status.text, new RegExp(`^loop ${loop.id} passed; round 2 passed: rev-a PASS$`));
    assert.ok((status.data.loop as { usage: unknown }).usage);

    // The branch the loop passed goes into the merge queue.
    const queued = ok(await mcp.call('merge_enqueue', { what: dir }), 'merge_enqueue');
    assert.equal((queued.data.entry as { branch: string }).branch, 'mam/a');
    const queue = ok(await mcp.call('merge_status'), 'merge_status');
    assert.deepEqual((queue.data.entries as Array<{ branch: string; state: string }>).map((e) => [e.branch, e.state]), [['mam/a', 'queued']]);
    const report = ok(await mcp.call('conflicts'), 'conflicts');
    assert.deepEqual(report.data.pairs, []);
    assert.ok((report.data.checkouts as Array<{ checkout: string }>).some((c) => c.checkout === fs.realpathSync(dir)), JSON.stringify(report.data.checkouts));
    assert.equal(git('rev-parse', '--abbrev-ref', 'HEAD') !== '', true);
    // A review a reviewer handed in is a resource.
    const review = loop.rounds[1]!.reviews[0]!;
    const text = await mcp.client.readResource({ uri: `mam://report/${review.job_id}` });
    assert.match((text.contents[0] as { text: string }).text, /\[VERDICT: PASS\]/);
  });

  it('plan_run: a bad plan is one line and stores nothing; a good one is run by a process of its own to landed; plan_status', async () => {
    const agent = (as: string, ...extra: string[]) => [process.execPath, FAKE_AGENT, '--as', as, '--log', path.join(tempDir('plan-agents'), `${as}.log`), ...extra].map((w) => JSON.stringify(w)).join(' ');
    f = loopFixture({ MAM_AGENT_COMMAND_CLAUDE: agent('claude', '--mode', 'creator', '--file', '@cwd'), MAM_AGENT_COMMAND_CODEX: agent('codex', '--mode', 'reviewer', '--verdicts', 'PASS') });
    assert.equal((await f.run(['init'])).exitCode, 0);
    execFileSync('git', ['add', '-A'], { cwd: f.workspace });
    execFileSync('git', ['commit', '-qm', 'mam init'], { cwd: f.workspace, env: { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@x.invalid', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@x.invalid' } });
    const mcp = await open();
    fs.writeFileSync(path.join(f.workspace, 'bad.yaml'), 'title: Bad\ntasks:\n  - { id: a, task: A, needs: [b], creator: claude, reviewers: [codex] }\n  - { id: b, task: B, needs: [a], creator: claude, reviewers: [codex] }\n');
    const bad = await mcp.call('plan_run', { file: 'bad.yaml' });
    assert.equal(bad.isError, true);
    assert.match(bad.text, /cycle/);
    assert.ok(!bad.text.includes('\n'));
    assert.ok(!fs.existsSync(path.join(f.workspace, '.mam', 'plans')), 'no plan stored');

    fs.writeFileSync(path.join(f.workspace, 'plan.yaml'), 'title: One change\ndefaults: { creator: claude, reviewers: [codex], max_loop: 2 }\ntasks:\n  - id: one\n    task: Add the first line\n');
    const progress: string[] = [];
    const ran = ok(await mcp.call('plan_run', { file: 'plan.yaml', wait: true }, { timeoutMs: 150_000, onprogress: (p) => progress.push(p.message ?? '') }), 'plan_run');
    const plan = ran.data.plan as { id: string; status: string; tasks: Array<{ id: string; state: string; landed_commit: string | null }> };
    assert.equal(plan.status, 'landed', ran.text);
    assert.deepEqual(plan.tasks.map((t) => [t.id, t.state]), [['one', 'landed']]);
    assert.ok(progress.some((m) => /1 running/.test(m)) && /1 landed/.test(progress.at(-1)!), JSON.stringify(progress));
    const status = ok(await mcp.call('plan_status', { plan: plan.id }), 'plan_status');
    assert.match(status.text, new RegExp(`^plan ${plan.id} landed: 1 landed$`));
    assert.deepEqual(JSON.parse(((await mcp.client.readResource({ uri: `mam://plan/${plan.id}` })).contents[0] as { text: string }).text).status, 'landed');
  });

  it('bad input of every kind: an isError answer of one line, and nothing changed', async () => {
    f = loopFixture();
    await f.agent('w1', 'instant');
    const mcp = await open();
    const ws = f.workspace;
    const before = snapshotTree(ws);
    const jobId = 'j-20260101T000000Z-00000000';
    const cases: Array<[string, Record<string, unknown>, RegExp, number?]> = [
      ['nope', {}, /^unknown tool 'nope'/],
      ['job_status', {}, /^job_status: job is required$/],
      ['job_status', { job: jobId, extra: 1 }, /^job_status: extra is not an input of this tool$/],
      ['job_status', { job: 42 }, /^job_status: job must be a non-empty string/],
      ['job_status', { job: '../../etc/passwd' }, /is not a job ID$/],
      ['job_status', { job: jobId }, /^unknown job 'j-20260101T000000Z-00000000'$/],
      ['job_wait', { jobs: [] }, /^job_wait: jobs must be a list of 1 to 100 strings$/],
      ['job_wait', { jobs: [jobId] }, /^unknown job/],
      ['job_wait', { jobs: ['w1'], timeout_s: -1 }, /^job_wait: timeout_s must be a number > 0$/],
      ['job_submit', { session: 'w1' }, /^give exactly one of prompt TEXT or brief_file FILE$/],
      ['job_submit', { session: 'w1', prompt: 'x', brief_file: 'b.md' }, /^give exactly one of/],
      ['job_submit', { session: 'w1', brief_file: 'missing.md' }, /missing\.md does not exist/],
      ['job_submit', { session: 'w1', prompt: '   ' }, /prompt is empty/],
      ['job_submit', { session: 'w1;rm -rf /', prompt: 'x' }, /w1;rm -rf \//],
      ['job_submit', { session: 'w1', prompt: 'x', timeout_s: 'soon' }, /^job_submit: timeout_s must be a number > 0$/],
      ['job_submit', { session: 'w1', prompt: 'x', role: 'not a role!' }, /role/],
      ['job_submit', { session: 'w1', prompt: 'x', wait_timeout_s: 5 }, /^wait_timeout_s goes with wait: true$/],
      ['job_submit', { session: 'w1', prompt: 'x', parent_job: jobId }, /^unknown parent job/],
      ['job_cancel', { job: jobId }, /^unknown job/],
      ['job_logs', { job: jobId, last: 0 }, /^job_logs: last must be a whole number ≥ 1/],
      ['session_create', { name: '../evil', agent: 'claude' }, /name/],
      ['session_create', { name: 'w2', agent: 'notanagent' }, /^session_create: agent must be one of claude, codex/],
      ['session_create', { name: 'w1', agent: 'claude' }, /w1/],
      ['session_create', { name: 'w2', agent: 'shell', command: [] }, /^session_create: command must be a list of 1 to 200 strings$/],
      ['session_send', { session: 'w1', text: 'two\nlines' }, /one line/],
      ['session_send', { session: 'ghost', text: 'hi' }, /ghost/],
      ['session_stop', { session: 'ghost' }, /ghost/],
      ['session_resume', { session: 'w1' }, /w1/],
      ['loop_start', { task: 'x', creator: 'ghost' }, /unknown session 'ghost'/],
      ['loop_start', { task: 'x', creator: 'w1', max_loop: 0 }, /^loop_start: max_loop must be a whole number ≥ 1/],
      ['loop_start', { task: 'x', creator: 'w1', reviewers: ['w1'], all_reviewers: true }, /^give either reviewers or all_reviewers, not both$/],
      ['loop_status', { loop: 'l-nope' }, /loop/],
      ['plan_run', { file: 'no-such-plan.yaml' }, /cannot read the plan/],
      ['plan_status', { plan: 'p-bad' }, /is not a plan ID|no plan/],
      ['merge_enqueue', { what: 'no-such-branch' }, /no-such-branch/],
    ];
    for (const [tool, args, message, exit] of cases) {
      const a = await mcp.call(tool, args);
      assert.equal(a.isError, true, `${tool} ${JSON.stringify(args)}: ${a.text}`);
      assert.ok(!a.text.includes('\n') && a.text.length > 0, `one line: ${a.text}`);
      assert.match(a.text, message, `${tool} ${JSON.stringify(args)}: ${a.text}`);
      const error = a.data.error as { message: string; exit_code: number };
      assert.deepEqual([error.message, error.exit_code], [a.text, exit ?? 64], `${tool} ${JSON.stringify(args)}`);
    }
    const after = snapshotTree(ws);
    // The embedded broker may have started for merge_enqueue's check (its own files only); nothing else changed.
    for (const name of Object.keys(after)) if (/^\.mam\/broker/.test(name)) delete after[name];
    for (const name of Object.keys(before)) if (/^\.mam\/broker/.test(name)) delete before[name];
    assert.deepEqual(after, before);
    await assert.rejects(mcp.client.readResource({ uri: 'mam://job/../../etc' }), /no such resource|not a job ID/);

    // A target that is not there: recorded and cancelled as the CLI does (exit 5), and an error for the caller.
    const lost = await mcp.call('job_submit', { session: 'nobody', prompt: 'x' });
    assert.equal(lost.isError, true);
    assert.match(lost.text, /^j-\S+ cancelled \(target_not_found\): no session 'nobody'/);
    const error = lost.data.error as { code: string; exit_code: number };
    assert.deepEqual([error.code, error.exit_code, job(lost).state], ['target_not_found', 5, 'cancelled']);
  });

  it('a workspace without .mam/, and no workspace at all, refuse every tool with one line and create nothing', async () => {
    f = jobFixture();
    const bare = tempWorkspace();
    const mcp = await open([], bare);
    const { tools } = await mcp.client.listTools();
    assert.equal(tools.length, 17);
    for (const t of tools) {
      const a = await mcp.call(t.name, {});
      assert.equal(a.isError, true, t.name);
      assert.equal(a.text, `${fs.realpathSync(bare)} is not a MAM workspace yet (it has no .mam/): run 'mam init' there first; nothing was done`);
    }
    assert.deepEqual(fs.readdirSync(bare), ['.git']);
    const nowhere = tempDir('nowhere');
    const lost = await open([], nowhere);
    const a = await lost.call('session_list');
    assert.equal(a.isError, true);
    assert.match(a.text, /^no workspace found at or above .*; nothing was done$/);
    assert.deepEqual(fs.readdirSync(nowhere), []);
  });

  it('--untrusted: reads answer; every tool that acts is refused and nothing starts', async () => {
    f = jobFixture();
    await f.agent('w1', 'instant');
    const r = await f.run(['job', 'submit', '--session', 'w1', '--prompt', 'x', '--json']);
    const id = (JSON.parse(r.stdout) as JobRecord).id;
    // The host's heartbeat service lets the ended job go (and exits) on its own time: settled first.
    await until(() => heartbeatServices(f!.workspace).length === 0, 10_000, 'the heartbeat service to let the ended job go');
    const mcp = await open(['--untrusted']);
    // The broker's count of its clients is left out: the daemon rewrites it up to half a second
    // after a client goes (the heartbeat service's exit, just above), whatever MCP does.
    const settled = (): Record<string, string> => {
      const { '.mam/broker-stats.json': _, ...rest } = snapshotTree(f!.workspace);
      return rest;
    };
    const before = settled();
    const panes = execFileSync('tmux', ['-L', f.server, 'list-panes', '-a', '-F', '#{pane_id}'], { encoding: 'utf8' });
    const acting: Array<[string, Record<string, unknown>]> = [
      ['session_create', { name: 'w2', agent: 'shell', command: ['touch', path.join(f.workspace, 'ran')] }],
      ['session_send', { session: 'w1', text: 'hi' }], ['session_stop', { session: 'w1' }], ['session_resume', { session: 'w1' }],
      ['job_submit', { session: 'w1', prompt: 'x' }], ['job_cancel', { job: id }], ['loop_start', { task: 'x', creator: 'w1' }],
      ['plan_run', { file: 'plan.yaml' }], ['conflicts', {}], ['merge_enqueue', { what: 'main' }], ['job_wait', { jobs: [id] }],
    ];
    for (const [tool, args] of acting) {
      const a = await mcp.call(tool, args);
      assert.equal(a.isError, true, tool);
      assert.equal(a.text, `this workspace is not trusted: MAM does not run ${tool} here; trust the workspace to use it`);
    }
    for (const [tool, args] of [['session_list', {}], ['job_status', { job: id }], ['job_logs', { job: id }], ['loop_status', {}], ['plan_status', {}], ['merge_status', {}]] as const) {
      const a = await mcp.call(tool, args);
      if (tool === 'loop_status' || tool === 'plan_status') assert.match(a.text, /^no (loops|plans) in this workspace$/);
      else ok(a, tool);
    }
    assert.deepEqual(settled(), before);
    assert.equal(execFileSync('tmux', ['-L', f.server, 'list-panes', '-a', '-F', '#{pane_id}'], { encoding: 'utf8' }), panes);
  });
});

/**
 * Progress notifications of a job that completed, after the one naming its state `from`: a chain
 * of its state changes, the first from `from`, each from the state the one before ended in, up to
 * `→ completed`. The last may be missing: the SDK's client runs a notification's handler a
 * microtask after reading it but takes the answer at once, and drops the progress it then finds no
 * handler for ("unknown token") when both arrive in one read — the answer carries the end state.
 */
function assertTrail(progress: string[], id: string, atLeast: number, from: string): void {
  const trail = progress.map((m) => new RegExp(`^job ${id}: (\\w+) → (\\w+)$`).exec(m));
  assert.ok(trail.length >= atLeast && trail.every((t) => t !== null), `progress: ${JSON.stringify(progress)}`);
  if (trail.length === 0) return;
  assert.equal(trail[0]![1], from, `progress: ${JSON.stringify(progress)}`);
  for (let i = 1; i < trail.length; i++) assert.equal(trail[i]![1], trail[i - 1]![2], `progress: ${JSON.stringify(progress)}`);
  assert.ok(['completed', 'started'].includes(trail.at(-1)![2]!), `ends at completed, or at started with the last one dropped: ${JSON.stringify(progress)}`);
}

/** Every secret a workspace holds: its jobs' tokens, their claim tokens, the embedded broker's password, the dispatch secret. */
function workspaceSecrets(workspace: string): string[] {
  const mam = path.join(workspace, '.mam');
  const out = [DISPATCH_SECRET];
  const jobs = path.join(mam, 'jobs');
  for (const name of fs.existsSync(jobs) ? fs.readdirSync(jobs) : []) {
    const token = path.join(jobs, name, 'token');
    if (fs.existsSync(token)) out.push(fs.readFileSync(token, 'utf8').trim());
    if (name.endsWith('.json')) {
      const owner = (JSON.parse(fs.readFileSync(path.join(jobs, name), 'utf8')) as JobRecord).owner;
      if (owner?.token) out.push(owner.token);
    }
  }
  const broker = path.join(mam, 'broker.json');
  if (fs.existsSync(broker)) out.push((JSON.parse(fs.readFileSync(broker, 'utf8')) as { password: string }).password);
  return out.filter((s) => s.length >= 8);
}
