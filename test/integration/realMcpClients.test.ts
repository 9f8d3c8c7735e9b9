/**
 * The MCP server `mam init` registers, as the real agent CLIs find it (see realAgents.test.ts for
 * their setup): in a temp HOME, each CLI's own `mcp list` run in the initialized checkout lists
 * the `mam` server from the project file, and claude, gemini and opencode start it there and talk
 * to it; codex, whose list only reads its config, starts it when a conversation begins.
 *
 * The first test's server is test/fixtures/mcp-stub-cli.js standing in for dist/cli.js (`mcp
 * --workspace DIR` and nothing else): it logs what each client sent, with the arguments and the
 * variables it was started with, which the real server does not show. The second registers the
 * real `mam mcp`, and each CLI connects to it.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { initWorkspace } from '../../src/core/init/initWorkspace';
import { CLI, readJsonLines, REPO_ROOT, tempDir } from '../support/helpers';
import { itNeeds } from '../support/needs';
import { AGENTS_BIN, agentEnv, agentHome, agentsMissing, startModelServer, type ModelServer, type RealAgent } from '../support/realAgents';

const STUB_CLI = path.join(REPO_ROOT, 'test/fixtures/mcp-stub-cli.js');
/** What the CLIs reach for on their own, refused by the model server: codex a tip file, opencode its plugin package (as realOpencode.test.ts knows). */
const KNOWN_OUTBOUND = [/raw\.githubusercontent\.com/, /^registry\.npmjs\.org:443$/];
const missing = agentsMissing('claude', 'codex', 'gemini', 'opencode');

interface Run {
  /** The exit status, or the signal that ended it (the two-minute bound's SIGTERM). */
  code: number | string | null;
  out: string;
}

/**
 * Runs a real CLI in `cwd` (stdin closed: `codex exec` would wait for more input on it) and returns
 * its exit status and everything it printed, colours taken out; killed after two minutes.
 */
function run(agent: RealAgent, args: string[], cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(AGENTS_BIN, agent), args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    // eslint-disable-next-line no-control-regex
    child.on('close', (code, signal) => resolve({ code: code ?? signal, out: out.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '') }));
  });
}

/** What the stub server received, each with the arguments it was started with. */
function stubLog(workspace: string): Array<{ args: string[]; env: string[]; message: { method?: string; params?: { clientInfo?: { name?: string } } } }> {
  return readJsonLines(path.join(workspace, '.mam', 'mcp-stub.log'));
}

describe('mam init’s MCP registration, as the real claude, codex, gemini and opencode read it', function () {
  this.timeout(300_000);
  let server: ModelServer;

  before(async function () {
    if (missing) return;
    server = await startModelServer({});
  });
  after(async () => {
    await server?.stop();
  });

  itNeeds(missing, 'each lists the mam server from its project file; claude, gemini and opencode start it and ask for its tools, codex when a conversation starts; claude waits for a person to approve it', async () => {
    const workspace = fs.realpathSync(tempDir('repo'));
    execFileSync('git', ['init', '-q'], { cwd: workspace });
    await initWorkspace({ workspace, cliPath: STUB_CLI, mode: 'install' });
    const started = (client: string) => stubLog(workspace).filter((e) => e.message.method === 'initialize' && e.message.params?.clientInfo?.name === client);

    // Not approved: claude names the server and does not start it.
    const unapproved = agentEnv(agentHome({ server, projects: [workspace] }), server);
    const pending = await run('claude', ['mcp', 'list'], workspace, unapproved);
    assert.match(pending.out, new RegExp(`^mam: node ${STUB_CLI} mcp --workspace ${workspace} - ⏸ Pending approval`, 'm'), pending.out);
    assert.deepEqual(started('claude-code'), []);

    const env = agentEnv(agentHome({ server, projects: [workspace], claudeMcpApproved: ['mam'] }), server);
    const claude = await run('claude', ['mcp', 'list'], workspace, env);
    assert.equal(claude.code, 0, claude.out);
    assert.match(claude.out, new RegExp(`^mam: node ${STUB_CLI} mcp --workspace ${workspace} - ✔ Connected$`, 'm'), claude.out);

    const gemini = await run('gemini', ['mcp', 'list'], workspace, env);
    assert.equal(gemini.code, 0, gemini.out);
    assert.match(gemini.out, new RegExp(`^✓ mam: node ${STUB_CLI} mcp --workspace ${workspace} \\(stdio\\) - Connected$`, 'm'), gemini.out);

    const opencode = await run('opencode', ['mcp', 'list'], workspace, env);
    assert.equal(opencode.code, 0, opencode.out);
    assert.match(opencode.out, /✓ mam\s+connected/, opencode.out);
    assert.ok(opencode.out.includes(`node ${STUB_CLI} mcp --workspace ${workspace}`), opencode.out);

    const codex = await run('codex', ['mcp', 'list'], workspace, env);
    assert.equal(codex.code, 0, codex.out);
    // Its Env column: the variables it passes on (mam init's env_vars), values masked.
    assert.match(codex.out, new RegExp(`^mam +node +${STUB_CLI} mcp --workspace ${workspace} +TMUX_TMPDIR=\\*+, .*MAM_TMUX_SERVER=\\*+, .* +- +enabled`, 'm'), codex.out);

    // Each started the server with the arguments mam init wrote, and asked it for its tools (gemini pings).
    for (const client of ['claude-code', 'mcp-test-client', 'opencode']) assert.equal(started(client).length, 1, `${client} started the server once: ${JSON.stringify(stubLog(workspace))}`);
    assert.ok(stubLog(workspace).every((e) => JSON.stringify(e.args) === JSON.stringify(['mcp', '--workspace', workspace])));
    assert.equal(stubLog(workspace).filter((e) => e.message.method === 'tools/list').length, 2, 'claude and opencode list its tools');

    // codex starts it with the conversation.
    const turn = await run('codex', ['exec', 'Say hello.'], workspace, env);
    assert.equal(turn.code, 0, `${turn.out}\nthe MCP server got: ${JSON.stringify(stubLog(workspace).map((e) => e.message))}\nthe model server's log: ${fs.readFileSync(server!.log, 'utf8').slice(-4000)}`);
    assert.equal(started('codex-mcp-client').length, 1, `codex started the server: ${JSON.stringify(stubLog(workspace))}\n${turn.out}`);
    // codex gives a server a few variables of its own, and those mam init names: where the tmux sockets are, not the keys.
    const codexEnv = started('codex-mcp-client')[0]!.env;
    assert.ok(env.TMUX_TMPDIR && codexEnv.includes('TMUX_TMPDIR'), `TMUX_TMPDIR passed on: ${codexEnv.join(' ')}`);
    assert.ok(!codexEnv.includes('ANTHROPIC_API_KEY') && started('claude-code')[0]!.env.includes('ANTHROPIC_API_KEY'), 'claude hands on its environment, codex does not');
    assert.deepEqual(server.outbound().filter((h) => !KNOWN_OUTBOUND.some((k) => k.test(h))), [], 'nothing but the model server was reached');
  });

  itNeeds(missing, 'with the real `mam mcp` as mam init registers it: claude, gemini and opencode connect to it, and codex hands its tools to the model', async () => {
    const workspace = fs.realpathSync(tempDir('repo'));
    execFileSync('git', ['init', '-q'], { cwd: workspace });
    await initWorkspace({ workspace, cliPath: CLI, mode: 'install' });
    const dumping = await startModelServer({}, { dumpRequests: true });
    try {
      const env = agentEnv(agentHome({ server: dumping, projects: [workspace], claudeMcpApproved: ['mam'] }), dumping);
      const command = `node ${CLI} mcp --workspace ${workspace}`;
      const claude = await run('claude', ['mcp', 'list'], workspace, env);
      assert.ok(claude.out.includes(`mam: ${command} - ✔ Connected`), claude.out);
      const gemini = await run('gemini', ['mcp', 'list'], workspace, env);
      assert.ok(gemini.out.includes(`✓ mam: ${command} (stdio) - Connected`), gemini.out);
      const opencode = await run('opencode', ['mcp', 'list'], workspace, env);
      assert.match(opencode.out, /✓ mam\s+connected/, opencode.out);
      // codex gives the model the server's tools, as functions of the namespace mcp__mam.
      const turn = await run('codex', ['exec', 'Say hello.'], workspace, env);
      assert.equal(turn.code, 0, turn.out);
      const sent = dumping.requests().join('\n');
      assert.ok(sent.includes('mcp__mam') && ['job_submit', 'job_wait', 'session_list'].every((t) => sent.includes(t)), 'codex offered the model mam’s tools');
      assert.deepEqual(dumping.outbound().filter((h) => !KNOWN_OUTBOUND.some((k) => k.test(h))), [], 'nothing but the model server was reached');
    } finally {
      await dumping.stop();
    }
  });
});
