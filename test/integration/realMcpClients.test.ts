/**
 * The MCP server `mam init` registers, as the real agent CLIs find it (see realAgents.test.ts for
 * their setup): in a temp HOME, each CLI's own `mcp list` run in the initialized checkout lists
 * the `mam` server from the project file, and claude, gemini and opencode start it there and talk
 * to it; codex, whose list only reads its config, starts it when a conversation begins.
 *
 * The server here is test/fixtures/mcp-stub-cli.js standing in for dist/cli.js (`mcp --workspace
 * DIR` and nothing else): it logs what each client sent, and the arguments it was started with.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { initWorkspace } from '../../src/core/init/initWorkspace';
import { REPO_ROOT, tempDir } from '../support/helpers';
import { itNeeds } from '../support/needs';
import { AGENTS_BIN, agentEnv, agentHome, agentsMissing, startModelServer, type ModelServer, type RealAgent } from '../support/realAgents';

const STUB_CLI = path.join(REPO_ROOT, 'test/fixtures/mcp-stub-cli.js');
const missing = agentsMissing('claude', 'codex', 'gemini', 'opencode');

interface Run {
  code: number | null;
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
    child.on('close', (code) => resolve({ code, out: out.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '') }));
  });
}

/** What the stub server received, each with the arguments it was started with. */
function stubLog(workspace: string): Array<{ args: string[]; env: string[]; message: { method?: string; params?: { clientInfo?: { name?: string } } } }> {
  const file = path.join(workspace, '.mam', 'mcp-stub.log');
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
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
    assert.equal(turn.code, 0, turn.out);
    assert.equal(started('codex-mcp-client').length, 1, `codex started the server: ${JSON.stringify(stubLog(workspace))}\n${turn.out}`);
    // codex gives a server a few variables of its own, and those mam init names: where the tmux sockets are, not the keys.
    const codexEnv = started('codex-mcp-client')[0]!.env;
    assert.ok(env.TMUX_TMPDIR && codexEnv.includes('TMUX_TMPDIR'), `TMUX_TMPDIR passed on: ${codexEnv.join(' ')}`);
    assert.ok(!codexEnv.includes('ANTHROPIC_API_KEY') && started('claude-code')[0]!.env.includes('ANTHROPIC_API_KEY'), 'claude hands on its environment, codex does not');
    assert.deepEqual(server.outbound().filter((h) => !/raw\.githubusercontent\.com/.test(h)), [], 'nothing but the model server was reached');
  });
});
