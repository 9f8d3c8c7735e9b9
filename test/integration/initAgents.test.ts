/**
 * `mam init` with the real `codex` and `claude` CLIs (see realAgents.test.ts for the setup): one of
 * them is the orchestrator, run as a person runs it — in a terminal of its own, not a MAM session —
 * and is told two things a person would type. First to run `mam init`, which finds the agent it runs
 * under and registers that conversation as the orchestrator's. Then to delegate a task using the
 * installed mam-jobs skill: the scripted model knows only the skill's path, the task and the session,
 * and takes the command line from the skill itself; the job goes to a MAM session of the other CLI
 * and completes. On the way, each CLI must list every installed skill to its model: it accepted the
 * skills' frontmatter (the seeds' fields beside name and description).
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { adapterFor } from '../../src/core/agents';
import { readScreen } from '../../src/core/agents/screens';
import { isTerminal, type JobRecord } from '../../src/core/store/jobSchema';
import { mamSkills, type Skill } from '../../src/core/init/skills';
import { injectLine } from '../../src/core/mux/inject';
import { TmuxBackend } from '../../src/core/mux/tmux';
import type { OrchestratorEntry } from '../../src/core/sessions/orchestrators';
import type { SessionRow } from '../../src/core/store/sessionSchema';
import { CLI, mam, tempDir, until, type MamResult } from '../support/helpers';
import { itNeeds } from '../support/needs';
import { agentEnv, agentHome, agentsMissing, conversationFile, startModelServer, type ModelServer } from '../support/realAgents';

const missing = agentsMissing('codex', 'claude');
const TASK = 'Note this job in jobs-done.txt.';

describe('mam init with real agents: an orchestrator registers itself and delegates through the installed skill', function () {
  this.timeout(240_000);
  let server: ModelServer;
  const cleanups: Array<() => Promise<void>> = [];

  before(async function () {
    if (missing) return;
    server = await startModelServer({ steps: { job: { run: ['printf "%s\\n" "{job}" >> jobs-done.txt'], detail: 'noted the job in jobs-done.txt' } } }, { dumpRequests: true });
  });
  after(async () => {
    await server?.stop();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const ok = (r: MamResult, what: string): MamResult => {
    assert.equal(r.exitCode, 0, `${what}: exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`);
    return r;
  };

  for (const [orchestrator, worker] of [['codex', 'claude'], ['claude', 'codex']] as const) {
    itNeeds(missing, `${orchestrator} orchestrates: mam init from its own terminal registers its conversation; with only the mam-jobs skill it delegates a job to a ${worker} session, which completes it`, async () => {
      const workspace = fs.realpathSync(tempDir('repo'));
      const home = agentHome({ server, projects: [workspace] });
      execFileSync('git', ['init', '-q'], { cwd: workspace, env: { ...process.env, HOME: home } });
      fs.writeFileSync(path.join(workspace, 'README.md'), '# A project\n');
      execFileSync('git', ['add', '-A'], { cwd: workspace });
      execFileSync('git', ['commit', '-qm', 'A project'], { cwd: workspace, env: { ...process.env, HOME: home } });
      const env = { ...agentEnv(home, server), MAM_TMUX_SERVER: `mam-init-${process.pid}-${orchestrator}` };
      const run = (args: string[]) => mam(args, { cwd: workspace, env });
      cleanups.push(async () => {
        await new TmuxBackend({ server: env.MAM_TMUX_SERVER, env }).killServer();
        await run(['broker', 'stop']);
      });

      // Set up from a plain terminal: nothing to register there. The agents start afterwards, so they find the skills.
      const setup = JSON.parse(ok(await run(['init', '--json']), 'init').stdout) as { orchestrator: { registered: boolean } };
      assert.equal(setup.orchestrator.registered, false);
      ok(await run(['session', 'create', '--agent', worker, '--name', 'worker']), 'create the worker');

      // The orchestrator: the real CLI in a terminal of its own (a tmux server that is not MAM's).
      const adapter = adapterFor(orchestrator);
      const terminal = new TmuxBackend({ server: `orch-${process.pid}-${orchestrator}`, env });
      cleanups.push(() => terminal.killServer());
      const pane = await terminal.spawn({ label: 'orchestrator', argv: adapter.spawnArgv(adapter.program, adapter.defaultArgs, null), cwd: workspace, env: adapter.environment(env) });
      const type = (text: string) => injectLine(terminal, pane.id, text, { readScreen: (s) => readScreen(s, adapter), who: `the ${orchestrator} orchestrator` });

      // 1. `mam init` from its shell tool registers its own conversation.
      const orchestrators = path.join(workspace, '.mam', 'orchestrators.json');
      await type(`Run this command: \`node "${CLI}" init --json\``);
      await until(() => fs.existsSync(orchestrators), 90_000, 'the orchestrator to be registered');
      const entries = JSON.parse(fs.readFileSync(orchestrators, 'utf8')) as OrchestratorEntry[];
      assert.equal(entries.length, 1);
      assert.equal(entries[0]!.agent, orchestrator);
      const conversation = entries[0]!.conversation_id;
      assert.ok(conversationFile(home, workspace, orchestrator, conversation), `${orchestrator}'s own store holds conversation ${conversation}`);

      // It read every installed skill's frontmatter (the seeds' fields beside name and description):
      // the CLI lists each skill, by name and description, in what it sends the model.
      const listed = (s: Skill) => JSON.stringify(`- ${s.name}: ${s.description.slice(0, 60)}`).slice(1, -1);
      const sent = () => server.requests().map((r) => JSON.stringify(JSON.parse(r))).join('\n');
      const skills = mamSkills(CLI, workspace);
      await until(() => skills.every((s) => sent().includes(listed(s))), 30_000, `${orchestrator} to list the installed skills`).catch(() => {
        assert.fail(`${orchestrator} does not list ${skills.filter((s) => !sent().includes(listed(s))).map((s) => s.name).join(', ')}`);
      });

      // 2. Reading only the skill, it delegates; the worker completes the job.
      const skill = path.join(workspace, orchestrator === 'claude' ? '.claude/skills' : '.agents/skills', 'mam-jobs', 'SKILL.md');
      await type(`Use the mam-jobs skill at ${skill} to delegate '${TASK}' to session worker.`);
      await until(() => jobsOf(workspace).some((j) => isTerminal(j.state)), 150_000, 'the delegated job to end');
      const [job] = jobsOf(workspace);
      assert.deepEqual([job!.session, job!.state, job!.detail], ['worker', 'completed', 'noted the job in jobs-done.txt']);
      assert.match(fs.readFileSync(path.join(workspace, 'jobs-done.txt'), 'utf8'), new RegExp(job!.id), 'the worker did the job in the checkout');

      // The command was the skill's, placeholders filled, run by the orchestrator's CLI; and its turn saw the outcome.
      const submitted = server.entries().find((e) => e.step === 'orchestrate' && e.cmd?.includes(' job submit '));
      assert.equal(submitted?.cmd, `node "${CLI}" job submit --session 'worker' --prompt '${TASK}' --json`);
      await until(() => server.entries().some((e) => e.step === 'orchestrate' && e.text?.includes(`"id": "${job!.id}"`)), 60_000, 'the orchestrator to read the outcome');
      const rows = JSON.parse(ok(await run(['session', 'list', '--json']), 'list').stdout) as SessionRow[];
      assert.equal(rows.length, 1, 'the orchestrator is not a session');
      assert.notEqual(rows[0]!.conversation_id, conversation, "the worker's conversation is its own");
      assert.deepEqual(server.outbound().filter((h) => !/raw\.githubusercontent\.com/.test(h)), [], 'nothing but the model server was reached');
    });
  }
});

function jobsOf(workspace: string): JobRecord[] {
  const dir = path.join(workspace, '.mam', 'jobs');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as JobRecord);
}
