/**
 * MAM with the real `codex` and `claude` CLIs (installed into .cache/agents by the test setup), each
 * in a temp HOME, talking to the model server the project writes (test/fixtures/model-server.js),
 * in an ordinary checkout: `.mam/` at the root of a plain git repository, not ignored by it. The
 * model server plays an agent that follows MAM's brief through each CLI's own shell tool, so every
 * event, commit and report below was produced by the real CLI running real commands.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LoopState } from '../../src/core/loop/loopState';
import type { SessionRow } from '../../src/core/store/sessionSchema';
import type { SessionState } from '../../src/core/sessions/sessionStatus';
import { mam, tempDir, until, type MamResult } from '../support/helpers';
import { itNeeds } from '../support/needs';
import type { JobRecord } from '../../src/core/store/jobSchema';
import { isMeasured, type JobUsage } from '../../src/core/store/jobUsageSchema';
import { agentEnv, agentHome, agentsMissing, conversationFile as conversationFileOf, servedUsage, startModelServer, type ModelServer } from '../support/realAgents';

const missing = agentsMissing('codex', 'claude');
const JOB_ID = /j-\d{8}T\d{6}Z-[0-9a-f]{8}/;

/** The project every test's agents work on: a test that fails until `add` adds. */
const TEST_JS = `const { add } = require('./add');
const got = add(2, 3);
if (got !== 5) {
  console.error('add(2, 3) should be 5, got ' + got);
  process.exit(1);
}
console.log('add(2, 3) = 5');
`;

/** What the scripted model has each CLI do, by the step the brief (or the loop's hint) names. */
const SCRIPT = {
  steps: {
    // A plain job: leave a trace in the checkout, as real agents do.
    job: { run: ['printf "%s\\n" "{job}" >> jobs-done.txt'], detail: 'noted the job in jobs-done.txt' },
    // The creator's first attempt is wrong; its fix is right. Both committed.
    implement: { run: ["printf 'exports.add = (a, b) => a - b;\\n' > add.js && git add add.js && git commit -qm 'Add add()'"], detail: 'added add() and committed' },
    fix: { run: ["printf 'exports.add = (a, b) => a + b;\\n' > add.js && git add add.js && git commit -qm 'Fix add(): it subtracted'"], detail: 'fixed add() and committed' },
    // Reviewers run the project's test; the verdict is what it says.
    review: { run: ['node test.js 2>&1 && echo CHECK-OK || echo CHECK-FAILED'], passWhen: 'CHECK-OK' },
  },
};

interface Team {
  workspace: string;
  home: string;
  env: Record<string, string>;
  run(args: string[]): Promise<MamResult>;
  sessions(): SessionRow[];
  dispose(): Promise<void>;
}

describe('real agents: codex and claude CLIs end to end, in an ordinary checkout', function () {
  this.timeout(180_000);
  let server: ModelServer;
  const teams: Team[] = [];

  before(async function () {
    if (missing) return;
    server = await startModelServer(SCRIPT);
  });
  after(async () => {
    await server?.stop();
  });
  afterEach(async () => {
    for (const t of teams.splice(0)) await t.dispose();
  });

  /** A plain git repository with one commit, a HOME for both CLIs, and `mam` run from the repository. */
  function team(homeOptions: Omit<Parameters<typeof agentHome>[0], 'server' | 'projects'> = {}): Team {
    const workspace = fs.realpathSync(tempDir('repo'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: workspace, env: { ...process.env, HOME: home } });
    const home = agentHome({ server, projects: [workspace], ...homeOptions });
    git('init', '-q');
    fs.writeFileSync(path.join(workspace, 'test.js'), TEST_JS);
    fs.writeFileSync(path.join(workspace, 'add.js'), 'exports.add = () => { throw new Error("not written yet"); };\n');
    git('add', '-A');
    git('commit', '-qm', 'A test for add()');
    const env = { ...agentEnv(home, server), MAM_TMUX_SERVER: `mam-real-${process.pid}-${teams.length}` };
    const t: Team = {
      workspace,
      home,
      env,
      run: (args) => mam(args, { cwd: workspace, env }),
      sessions: () => JSON.parse(execFileSync(process.execPath, [path.join(__dirname, '../../dist/cli.js'), 'session', 'list', '--json'], { cwd: workspace, env, encoding: 'utf8' })) as SessionRow[],
      async dispose() {
        try {
          execFileSync('tmux', ['-L', env.MAM_TMUX_SERVER, 'kill-server'], { env, stdio: 'ignore' });
        } catch {
          // no server left
        }
        await mam(['broker', 'stop'], { cwd: workspace, env });
      },
    };
    teams.push(t);
    return t;
  }

  const ok = (r: MamResult, what: string): MamResult => {
    assert.equal(r.exitCode, 0, `${what}: exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`);
    return r;
  };
  const submit = async (t: Team, session: string, prompt: string) => JSON.parse(ok(await t.run(['job', 'submit', '--session', session, '--prompt', prompt, '--json']), `job for ${session}`).stdout) as { id: string; state: string; usage?: JobUsage | null };

  /** Where each CLI keeps a conversation, and the file itself. */
  const conversationFile = (t: Team, agent: 'claude' | 'codex', id: string): string | undefined => conversationFileOf(t.home, t.workspace, agent, id);

  for (const agent of ['codex', 'claude'] as const) {
    itNeeds(missing, `${agent}: create → job → completed; its conversation is recorded while it runs; stop → resume → a job in the same conversation`, async () => {
      const t = team();
      ok(await t.run(['session', 'create', '--agent', agent, '--name', 'a1']), 'create');
      const first = await submit(t, 'a1', 'Note this job in jobs-done.txt.');
      assert.equal(first.state, 'completed');
      assert.ok(isMeasured(first.usage), `job submit --json tells what the job spent so far: ${JSON.stringify(first.usage)}`);
      assert.match(fs.readFileSync(path.join(t.workspace, 'jobs-done.txt'), 'utf8'), new RegExp(first.id), 'the agent ran the command in the checkout');

      // Recorded while it runs (no stop needed), and it is the conversation in the agent's own store.
      const running = t.sessions()[0]!;
      assert.equal(running.status, 'running');
      assert.ok(running.conversation_id, 'the conversation ID is known right after the first job');
      const file = conversationFile(t, agent, running.conversation_id);
      assert.ok(file, `${agent} stores conversation ${running.conversation_id}`);
      assert.match(fs.readFileSync(file, 'utf8'), new RegExp(`MAM job ${first.id}`));
      const status = JSON.parse(ok(await t.run(['session', 'status', '--json']), 'status').stdout) as SessionState[];
      assert.equal(status[0]!.session!.conversation_id, running.conversation_id);
      assert.equal(status[0]!.attention, null);

      ok(await t.run(['session', 'stop', 'a1']), 'stop');
      const stopped = t.sessions()[0]!;
      assert.deepEqual([stopped.status, stopped.resumable, stopped.conversation_id], ['stopped', true, running.conversation_id]);
      ok(await t.run(['session', 'resume', 'a1']), 'resume');
      const second = await submit(t, 'a1', 'Note this job in jobs-done.txt too.');
      assert.equal(second.state, 'completed');
      assert.equal(t.sessions()[0]!.conversation_id, running.conversation_id);
      const text = fs.readFileSync(file, 'utf8');
      assert.ok(text.includes(`MAM job ${first.id}`) && text.includes(`MAM job ${second.id}`), 'both jobs are in the one conversation');

      // What each job cost, from the CLI's own store: exactly what the model server returned for
      // the job's requests, the final message (written after `completed`) included.
      for (const job of [first, second]) {
        let usage: JobUsage | null | undefined;
        await until(async () => {
          usage = (JSON.parse(ok(await t.run(['job', 'status', job.id, '--json']), 'job status').stdout) as { job: JobRecord }).job.usage;
          return usage?.final === true;
        }, 30_000, `the usage of ${agent}'s job ${job.id} to be final`, 200);
        assert.ok(isMeasured(usage), `${agent} records usage: ${JSON.stringify(usage)}`);
        const want = servedUsage(server, job.id);
        assert.ok(want.requests >= 3, 'the server answered the job');
        assert.deepEqual({ input_tokens: usage.input_tokens, cached_input_tokens: usage.cached_input_tokens, output_tokens: usage.output_tokens, requests: usage.requests }, want);
      }
      assert.match(ok(await t.run(['job', 'status', first.id]), 'job status').stdout, /^tokens +[\d,]+ in \([\d,]+ cached\) · [\d,]+ out/m);
      assert.deepEqual(server.outbound().filter((h) => !/raw\.githubusercontent\.com/.test(h)), [], 'nothing but the model server was reached');
    });
  }

  itNeeds(missing, 'a loop with a codex creator and codex + claude reviewers: NOT PASS → fix → PASS; reports outside the reviewed tree; the checkout stays clean', async () => {
    const t = team();
    ok(await t.run(['session', 'create', '--agent', 'codex', '--name', 'creator', '--role', 'creator']), 'create creator');
    ok(await t.run(['session', 'create', '--agent', 'codex', '--name', 'rev-codex', '--role', 'reviewer']), 'create codex reviewer');
    ok(await t.run(['session', 'create', '--agent', 'claude', '--name', 'rev-claude', '--role', 'reviewer']), 'create claude reviewer');
    const r = await t.run(['loop', '--task', 'Write add(a, b) in add.js so that `node test.js` passes, and commit it.', '--creator', 'creator', '--reviewer', 'rev-codex,rev-claude', '--json']);
    assert.equal(r.exitCode, 0, `loop: ${r.stderr}`);
    const s = JSON.parse(r.stdout) as LoopState;
    assert.deepEqual(s.rounds.map((x) => [x.n, x.status, x.reviews.map((v) => `${v.reviewer}:${v.verdict}`)]), [
      [1, 'not_passed', ['rev-codex:NOT PASS', 'rev-claude:NOT PASS']],
      [2, 'passed', ['rev-codex:PASS', 'rev-claude:PASS']],
    ]);
    const log = execFileSync('git', ['log', '--format=%s'], { cwd: t.workspace, encoding: 'utf8' }).trim().split('\n');
    assert.deepEqual(log, ['Fix add(): it subtracted', 'Add add()', 'A test for add()']);
    // Each reviewer wrote its report where its brief said: under .mam/jobs/, never into the checkout.
    for (const round of s.rounds) {
      for (const review of round.reviews) {
        const report = path.join(t.workspace, '.mam', 'jobs', review.job_id, 'report.md');
        assert.match(fs.readFileSync(report, 'utf8'), new RegExp(`\\[VERDICT: ${review.verdict}\\]\\s*$`));
      }
    }
    assert.match(fs.readFileSync(path.join(t.workspace, '.mam', 'jobs', s.rounds[0]!.reviews[0]!.job_id, 'report.md'), 'utf8'), /add\(2, 3\) should be 5, got -1/, 'the finding came from running the test');
    assert.equal(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: t.workspace, encoding: 'utf8' }), '', 'the checkout is clean: .mam/ ignores itself');
    for (const reviewer of ['rev-codex', 'rev-claude']) {
      const dir = path.join(t.workspace, '.mam', 'reports', reviewer);
      assert.equal(fs.readdirSync(dir).filter((f) => f.endsWith('.identity.json')).length, 1, `${reviewer}'s passing report is promoted`);
    }
  });

  itNeeds(missing, 'after tmux kill-server, resume --all brings idle codex and claude sessions back, each in its own conversation', async () => {
    const t = team();
    const before: Record<string, { conversation: string; job: string }> = {};
    for (const agent of ['codex', 'claude'] as const) {
      ok(await t.run(['session', 'create', '--agent', agent, '--name', `${agent}-1`]), `create ${agent}`);
      const job = await submit(t, `${agent}-1`, 'Note this job in jobs-done.txt.');
      before[agent] = { conversation: t.sessions().find((s) => s.name === `${agent}-1`)!.conversation_id!, job: job.id };
    }
    execFileSync('tmux', ['-L', t.env.MAM_TMUX_SERVER, 'kill-server'], { env: t.env });

    const r = ok(await t.run(['session', 'resume', '--all']), 'resume --all');
    for (const agent of ['codex', 'claude'] as const) assert.match(r.stdout, new RegExp(`^${agent}-1 \\(${agent}\\): resumed: in conversation ${before[agent]!.conversation}$`, 'm'));
    for (const agent of ['codex', 'claude'] as const) {
      const row = t.sessions().find((s) => s.name === `${agent}-1`)!;
      assert.deepEqual([row.status, row.conversation_id], ['running', before[agent]!.conversation]);
      const job = await submit(t, row.name, 'Note this job in jobs-done.txt again.');
      assert.equal(job.state, 'completed');
      const text = fs.readFileSync(conversationFile(t, agent, row.conversation_id!)!, 'utf8');
      assert.ok(text.includes(before[agent]!.job) && text.includes(job.id), `${agent} continued the conversation it had`);
    }
    const again = ok(await t.run(['session', 'resume', '--all']), 'resume --all again');
    assert.match(again.stdout, /Nothing to resume/);
  });

  itNeeds(missing, 'a blocking screen is named, never typed into: claude\'s Bypass Permissions warning, codex\'s folder trust', async () => {
    const t = team({ acceptBypass: false });
    const created = await t.run(['session', 'create', '--agent', 'claude', '--name', 'c1']);
    assert.equal(created.exitCode, 4, created.stderr);
    assert.match(created.stderr, /claude shows its Bypass Permissions warning\. .*skipDangerousModePermissionPrompt.*Attach with: tmux -L \S+ attach-session -t %\d+/);
    const status = await t.run(['session', 'status']);
    assert.match(status.stdout, /^c1\s+claude\s+needs attention/m);
    assert.match(status.stdout, /^c1: claude shows its Bypass Permissions warning\./m);

    const untrusted = team({ trustProjects: false });
    for (const agent of ['codex', 'claude']) {
      const r = await untrusted.run(['session', 'create', '--agent', agent, '--name', `${agent}-1`]);
      assert.equal(r.exitCode, 4, r.stderr);
      assert.match(r.stderr, new RegExp(`${agent} shows its folder-trust question`));
    }

    const job = await t.run(['job', 'submit', '--session', 'c1', '--prompt', 'anything', '--json']);
    assert.equal(job.exitCode, 5);
    const record = JSON.parse(job.stdout) as { id: string; state: string; reason: string; why: string };
    assert.deepEqual([record.state, record.reason], ['cancelled', 'not_delivered']);
    assert.match(record.why, /session 'c1' \(claude\) shows its Bypass Permissions warning; nothing was typed into it/);
    const logs = ok(await t.run(['job', 'logs', record.id]), 'logs');
    assert.match(logs.stdout, /│ .*Bypass Permissions mode/, 'the screen is in the audit log');
    // Nothing was typed: the warning is still up, and claude still runs (an Enter would have quit it).
    await until(async () => /needs attention/.test((await t.run(['session', 'status'])).stdout), 10_000, 'the warning to be still there');
    assert.equal(t.sessions().find((s) => s.name === 'c1')!.status, 'running');
    assert.ok(!JOB_ID.test(execFileSync('tmux', ['-L', t.env.MAM_TMUX_SERVER, 'capture-pane', '-p', '-t', t.sessions().find((s) => s.name === 'c1')!.target!], { env: t.env, encoding: 'utf8' })), 'no job line on the screen');
  });
});
