/**
 * The tests every real agent CLI gets (test/integration/real<Cli>.test.ts): in an ordinary
 * checkout, against the project's model server, create → job → completed; the conversation ID
 * recorded right after the first job and present in the CLI's own store; stop (the CLI's own exit,
 * not a killed pane) → resume → a job in the same conversation; each job's tokens read from the
 * CLI's store equal to what the server returned; and the CLI's first-run screen, if it has one,
 * named (exit 4) and never typed into.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionState } from '../../src/core/sessions/sessionStatus';
import type { JobRecord } from '../../src/core/store/jobSchema';
import { isMeasured, type JobUsage } from '../../src/core/store/jobUsageSchema';
import { until } from './helpers';
import { itNeeds } from './needs';
import { agentsMissing, servedUsage, startModelServer, storedConversation, type AgentHomeOptions, type ModelServer, type RealAgent } from './realAgents';
import { realTeam, TEAM_SCRIPT, type Team } from './realTeam';

export interface RealCliSpec {
  agent: RealAgent;
  /** Connections beyond the model server the CLI is known to attempt (refused), with why, for the docs. */
  knownOutbound?: RegExp;
  /** A first-run screen left unanswered: how the HOME (or environment) leaves it, and the name MAM gives it. */
  firstRun?: { title: string; home?: Omit<AgentHomeOptions, 'server' | 'projects'>; env?: Record<string, string | undefined>; named: RegExp; onScreen: RegExp };
}

export function describeRealCli(spec: RealCliSpec): void {
  const { agent } = spec;
  const missing = agentsMissing(agent);

  describe(`real agents: ${agent} end to end, in an ordinary checkout`, function () {
    this.timeout(240_000);
    let server: ModelServer;
    const teams: Team[] = [];
    const team = (...args: Parameters<typeof realTeam>): Team => {
      const t = realTeam(...args);
      teams.push(t);
      return t;
    };

    before(async function () {
      if (missing) return;
      server = await startModelServer(TEAM_SCRIPT);
    });
    after(async () => {
      await server?.stop();
    });
    afterEach(async () => {
      for (const t of teams.splice(0)) await t.dispose();
    });

    /** A job, ended by MAM's own start timer (not by the test's process timeout) if the CLI never starts it; on failure, what MAM logged and the pane. */
    const submit = async (t: Team, session: string, prompt: string) => {
      const r = await t.run(['job', 'submit', '--session', session, '--prompt', prompt, '--start-timeout', '40', '--json']);
      if (r.exitCode !== 0) {
        const id = /j-\d{8}T\d{6}Z-[0-9a-f]{8}/.exec(`${r.stdout}${r.stderr}`)?.[0];
        const logs = id ? (await t.run(['job', 'logs', id])).stdout : '';
        let screen = '';
        try {
          screen = t.screen(session);
        } catch {
          screen = '(no pane)';
        }
        const served = id ? server.entries().filter((e) => e.job === id).map((e) => JSON.stringify(e)).join('\n') : '';
        throw new Error(`job for ${session}: exit ${r.exitCode}\n${r.stdout}\n${r.stderr}\n${logs}\n--- the pane now ---\n${screen}\n--- what the model server answered for it ---\n${served}`);
      }
      return JSON.parse(r.stdout) as { id: string; state: string; usage?: JobUsage | null };
    };

    itNeeds(missing, `${agent}: create → job → completed; its conversation is recorded after the first job and is in its own store; stop → resume → a job in the same conversation; tokens from its store`, async () => {
      const t = team(server);
      await t.ok(['session', 'create', '--agent', agent, '--name', 'a1'], 'create');
      const first = await submit(t, 'a1', 'Note this job in jobs-done.txt.');
      assert.equal(first.state, 'completed');
      assert.match(fs.readFileSync(path.join(t.workspace, 'jobs-done.txt'), 'utf8'), new RegExp(first.id), 'the agent ran the command in the checkout');

      // Recorded right after the first job (no stop needed), and it is the conversation in the CLI's own store.
      const running = t.session('a1');
      assert.equal(running.status, 'running');
      assert.ok(running.conversation_id, 'the conversation ID is known right after the first job');
      const stored = storedConversation(t.env, t.workspace, agent, running.conversation_id);
      assert.ok(stored, `${agent} stores conversation ${running.conversation_id}`);
      assert.match(stored, new RegExp(`MAM job ${first.id}`));
      const status = JSON.parse((await t.ok(['session', 'status', '--json'], 'status')).stdout) as SessionState[];
      assert.equal(status[0]!.session!.conversation_id, running.conversation_id);
      assert.equal(status[0]!.attention, null);

      // Its own exit: a pane MAM had to kill would be named in a warning.
      const stop = await t.ok(['session', 'stop', 'a1'], 'stop');
      assert.doesNotMatch(stop.stderr, /did not exit|closing its pane/, `${agent} exits by its own exit steps`);
      const stopped = t.session('a1');
      assert.deepEqual([stopped.status, stopped.resumable, stopped.conversation_id], ['stopped', true, running.conversation_id]);
      await t.ok(['session', 'resume', 'a1'], 'resume');
      const second = await submit(t, 'a1', 'Note this job in jobs-done.txt too.');
      assert.equal(second.state, 'completed');
      assert.equal(t.session('a1').conversation_id, running.conversation_id);
      const both = storedConversation(t.env, t.workspace, agent, running.conversation_id) ?? '';
      assert.ok(both.includes(`MAM job ${first.id}`) && both.includes(`MAM job ${second.id}`), 'both jobs are in the one conversation');

      // What each job cost, from the CLI's own store: exactly what the model server returned for
      // the job's requests, the final message (written after `completed`) included.
      for (const job of [first, second]) {
        let usage: JobUsage | null | undefined;
        await until(async () => {
          usage = (JSON.parse((await t.ok(['job', 'status', job.id, '--json'], 'job status')).stdout) as { job: JobRecord }).job.usage;
          return usage?.final === true;
        }, 60_000, `the usage of ${agent}'s job ${job.id} to be final`, 500);
        assert.ok(isMeasured(usage), `${agent} records usage: ${JSON.stringify(usage)}`);
        const want = servedUsage(server, job.id);
        assert.ok(want.requests >= 3, 'the server answered the job');
        assert.deepEqual({ input_tokens: usage.input_tokens, cached_input_tokens: usage.cached_input_tokens, output_tokens: usage.output_tokens, requests: usage.requests }, want);
      }
      const beyond = server.outbound().filter((h) => !spec.knownOutbound?.test(h));
      assert.deepEqual(beyond, [], 'nothing but the model server was reached');
    });

    if (spec.firstRun) {
      const first = spec.firstRun;
      itNeeds(missing, `${agent}: ${first.title} is named (exit 4), never typed into; a job for it is not delivered`, async () => {
        const t = team(server, first.home ?? {}, first.env ?? {});
        const created = await t.run(['session', 'create', '--agent', agent, '--name', 'a1']);
        assert.equal(created.exitCode, 4, `${created.stdout}\n${created.stderr}`);
        assert.match(created.stderr, first.named);
        assert.match(created.stderr, /Attach with: tmux -L \S+ attach-session -t %\d+/);
        const job = await t.run(['job', 'submit', '--session', 'a1', '--prompt', 'anything', '--json']);
        assert.equal(job.exitCode, 5, job.stderr);
        const record = JSON.parse(job.stdout) as { state: string; reason: string; why: string };
        assert.deepEqual([record.state, record.reason], ['cancelled', 'not_delivered']);
        assert.match(record.why, /nothing was typed into it/);
        // Nothing was typed: the screen is still up, the CLI still runs, no job line on it.
        const screen = t.screen('a1');
        assert.match(screen, first.onScreen);
        assert.doesNotMatch(screen, /MAM job j-/);
        assert.equal(t.session('a1').status, 'running');
      });
    }
  });
}
