/**
 * The real `claude` and `codex` CLIs as orchestrators that reach MAM through its MCP server (see
 * realAgents.test.ts for the setup). Each is run as a person runs it — in a terminal of its own,
 * not a MAM session — with `mam mcp` in its MCP configuration: claude from the project's
 * `.mcp.json` (approved for the project in `~/.claude.json`, as its own dialog would), codex from
 * `[mcp_servers.mam]` in `~/.codex/config.toml` (with `env_vars` naming what to pass on: codex gives
 * an MCP server a handful of variables, not its own environment). Told to delegate a task with MAM's MCP tools, the
 * scripted model calls `job_submit`, then `job_wait` until the job has ended, under the names each
 * CLI gives MCP tools (claude: `mcp__mam__job_submit`; codex: the function `job_submit` of the
 * namespace `mcp__mam`); the job goes to a session of the other CLI, which completes it. The server,
 * started by the orchestrator, records the orchestrator's conversation as `mam init` would.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { adapterFor } from '../../src/core/agents';
import { readScreen } from '../../src/core/agents/screens';
import { injectLine } from '../../src/core/mux/inject';
import { TmuxBackend } from '../../src/core/mux/tmux';
import type { OrchestratorEntry } from '../../src/core/sessions/orchestrators';
import { isTerminal, type JobRecord } from '../../src/core/store/jobSchema';
import type { SessionRow } from '../../src/core/store/sessionSchema';
import { CLI, mam, tempDir, until, type MamResult } from '../support/helpers';
import { itNeeds } from '../support/needs';
import { agentEnv, agentHome, agentsMissing, conversationFile, startModelServer, type ModelServer } from '../support/realAgents';

const missing = agentsMissing('codex', 'claude');
const TASK = 'Note this job in jobs-done.txt.';

describe("real agents as orchestrators through MAM's MCP server", function () {
  this.timeout(240_000);
  let server: ModelServer;
  const cleanups: Array<() => Promise<void>> = [];

  before(async function () {
    if (missing) return;
    server = await startModelServer({ steps: { job: { run: ['printf "%s\\n" "{job}" >> jobs-done.txt'], detail: 'noted the job in jobs-done.txt' } } });
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

  /** `mam mcp` in the orchestrator's own configuration, as a person (or `mam init`) puts it there. */
  function configure(orchestrator: 'claude' | 'codex', home: string, workspace: string): void {
    const command = { command: process.execPath, args: [CLI, 'mcp'] };
    if (orchestrator === 'codex') {
      // codex starts an MCP server with a few variables only (HOME, PATH, TMPDIR, LANG, SHELL, TERM):
      // the tmux socket folder this run's tmux servers live in, and MAM's settings, are forwarded by name.
      const forward = ['TMUX_TMPDIR', 'MAM_TMUX_SERVER'];
      fs.appendFileSync(path.join(home, '.codex', 'config.toml'), `\n[mcp_servers.mam]\ncommand = ${JSON.stringify(command.command)}\nargs = ${JSON.stringify(command.args)}\nenv_vars = ${JSON.stringify(forward)}\n`);
      return;
    }
    fs.writeFileSync(path.join(workspace, '.mcp.json'), `${JSON.stringify({ mcpServers: { mam: command } }, null, 2)}\n`);
    // A project's .mcp.json server runs only once approved: the answer claude's own dialog records.
    const file = path.join(home, '.claude.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { projects: Record<string, Record<string, unknown>> };
    config.projects[workspace] = { ...config.projects[workspace], enabledMcpjsonServers: ['mam'] };
    fs.writeFileSync(file, JSON.stringify(config, null, 2));
  }

  for (const [orchestrator, worker] of [['codex', 'claude'], ['claude', 'codex']] as const) {
    itNeeds(missing, `${orchestrator} orchestrates with MAM's MCP tools: job_submit, then job_wait until a ${worker} session has completed the job; its conversation is recorded as the orchestrator's`, async () => {
      const workspace = fs.realpathSync(tempDir('repo'));
      const home = agentHome({ server, projects: [workspace] });
      execFileSync('git', ['init', '-q'], { cwd: workspace, env: { ...process.env, HOME: home } });
      fs.writeFileSync(path.join(workspace, 'README.md'), '# A project\n');
      execFileSync('git', ['add', '-A'], { cwd: workspace });
      execFileSync('git', ['commit', '-qm', 'A project'], { cwd: workspace, env: { ...process.env, HOME: home } });
      const env = { ...agentEnv(home, server), MAM_TMUX_SERVER: `mam-mcp-${process.pid}-${orchestrator}` };
      const run = (args: string[]) => mam(args, { cwd: workspace, env });
      cleanups.push(async () => {
        await new TmuxBackend({ server: env.MAM_TMUX_SERVER, env }).killServer();
        await run(['broker', 'stop']);
      });
      ok(await run(['init']), 'init');
      ok(await run(['session', 'create', '--agent', worker, '--name', 'worker']), 'create the worker');
      configure(orchestrator, home, workspace);

      // The orchestrator: the real CLI in a terminal of its own (a tmux server that is not MAM's).
      const adapter = adapterFor(orchestrator);
      const terminal = new TmuxBackend({ server: `orch-mcp-${process.pid}-${orchestrator}`, env });
      const pane = await terminal.spawn({ label: 'orchestrator', argv: adapter.spawnArgv(adapter.program, adapter.defaultArgs, null), cwd: workspace, env: adapter.environment(env) });
      // Its pane's process group ends with it (claude outlives a hangup), and so does the MCP server it started.
      cleanups.push(async () => {
        await terminal.kill(pane.id);
        await terminal.killServer();
      });
      await injectLine(terminal, pane.id, `Use MAM's MCP tools to delegate '${TASK}' to session worker.`, { readScreen: (s) => readScreen(s, adapter), who: `the ${orchestrator} orchestrator` });

      await until(() => jobsOf(workspace).some((j) => isTerminal(j.state)), 150_000, 'the delegated job to end').catch((err: Error) => {
        const screen = execFileSync('tmux', ['-L', `orch-mcp-${process.pid}-${orchestrator}`, 'capture-pane', '-p', '-t', pane.id], { env, encoding: 'utf8' });
        const said = server.entries().filter((e) => e.agent === orchestrator && (e.tool || e.text)).map((e) => JSON.stringify({ tool: e.tool, text: e.text?.slice(0, 200), why: e.why }));
        throw new Error(`${err.message}\njobs: ${JSON.stringify(jobsOf(workspace).map((j) => [j.id, j.state, j.reason, j.why]))}\nthe model answered ${orchestrator}:\n${said.join('\n')}\nits screen:\n${screen.replace(/\n{2,}/g, '\n')}`);
      });
      const [job] = jobsOf(workspace);
      assert.deepEqual([job!.session, job!.state, job!.detail, job!.origin], ['worker', 'completed', 'noted the job in jobs-done.txt', { kind: 'person', by: 'mcp' }]);
      assert.match(fs.readFileSync(path.join(workspace, 'jobs-done.txt'), 'utf8'), new RegExp(job!.id), 'the worker did the job in the checkout');

      // The orchestrator's model called MAM's tools, and its turn ended on the outcome job_wait gave it.
      const calls = () => server.entries().filter((e) => e.step === 'orchestrate-mcp' && e.agent === orchestrator);
      await until(() => calls().some((e) => e.text?.includes(`Delegated job ${job!.id}`)), 60_000, 'the orchestrator to read the outcome');
      // (claude may first wait for its MCP servers to connect: WaitForMcpServers, its own tool.)
      const tools = calls().filter((e) => typeof e.tool === 'string' && e.tool !== 'WaitForMcpServers').map((e) => e.tool);
      assert.equal(tools[0], 'job_submit');
      assert.ok(tools.length >= 2 && tools.slice(1).every((t) => t === 'job_wait'), JSON.stringify(tools));
      const final = calls().find((e) => e.text?.includes(`Delegated job ${job!.id}`))!.text!;
      assert.match(final, /"state":\s*"completed"|completed/);

      // Started by the orchestrator, the server recorded its conversation (never a sub-agent's).
      const entries = JSON.parse(fs.readFileSync(path.join(workspace, '.mam', 'orchestrators.json'), 'utf8')) as OrchestratorEntry[];
      assert.deepEqual(entries.map((e) => e.agent), [orchestrator]);
      assert.ok(conversationFile(home, workspace, orchestrator, entries[0]!.conversation_id), `${orchestrator}'s own store holds conversation ${entries[0]!.conversation_id}`);
      const rows = JSON.parse(ok(await run(['session', 'list', '--json']), 'list').stdout) as SessionRow[];
      assert.deepEqual(rows.map((r) => r.name), ['worker'], 'the orchestrator is not a session');
      assert.deepEqual(server.outbound().filter((h) => !/raw\.githubusercontent\.com/.test(h)), [], 'nothing but the model server was reached');
    });
  }
});

function jobsOf(workspace: string): JobRecord[] {
  const dir = path.join(workspace, '.mam', 'jobs');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as JobRecord);
}
