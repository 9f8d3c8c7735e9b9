/**
 * How `mam init` finds the agent it runs under, with stand-ins that look to /proc as the pinned CLIs
 * do (initAgents.test.ts runs the real ones): a process started as `claude` that gives its shell
 * CLAUDE_CODE_SESSION_ID, one started as `codex` that holds its rollout file open.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findEnclosingAgent } from '../../src/core/sessions/enclosingAgent';
import type { InitResult } from '../../src/core/init/initWorkspace';
import { CLI, tempDir } from '../support/helpers';
import { itNeeds } from '../support/needs';

/** Runs `mam init --json` the way an agent's shell tool does (a shell below the agent), and prints its output. */
const STAND_IN = `
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const [cli, workspace, holdOpen, childEnv] = process.argv.slice(1);
if (holdOpen) fs.openSync(holdOpen, 'r');
const env = { ...process.env, ...JSON.parse(childEnv) };
process.stdout.write(execFileSync('sh', ['-c', '"$0" "$1" init --json --workspace "$2"; :', process.execPath, cli, workspace], { env }));
`;

async function initUnder(argv0: string, options: { env?: Record<string, string>; childEnv?: Record<string, string>; holdOpen?: string } = {}): Promise<InitResult['orchestrator']> {
  const workspace = tempDir('ws');
  const child = spawn(process.execPath, ['-e', STAND_IN, CLI, workspace, options.holdOpen ?? '', JSON.stringify(options.childEnv ?? {})], { argv0, env: { ...process.env, MAM_SESSION: undefined, ...options.env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0);
  return (JSON.parse(out) as InitResult).orchestrator;
}

describe('finding the agent that runs mam init (process ancestry)', () => {
  const noProc = fs.existsSync('/proc/self/stat') ? undefined : 'no /proc here (Linux only): the process tree cannot be walked';

  itNeeds(noProc, 'claude: the session ID it gives its shell', async () => {
    const id = '1570c80e-7d76-4530-b9a3-f654a3788514';
    const o = await initUnder('claude', { childEnv: { CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: id } });
    assert.deepEqual(o, { registered: true, added: true, agent: 'claude', conversation_id: id, how: 'CLAUDE_CODE_SESSION_ID, which claude gives the commands it runs' });
  });

  itNeeds(noProc, 'codex: the rollout file it holds open, before any variable', async () => {
    const home = tempDir('home');
    const id = '01a22f8d-6ee8-70a1-b61f-b4a6de5de3c6';
    const rollout = path.join(home, '.codex', 'sessions', '2026', '12', '01', `rollout-2026-12-01T03-02-07-${id}.jsonl`);
    fs.mkdirSync(path.dirname(rollout), { recursive: true });
    fs.writeFileSync(rollout, `${JSON.stringify({ type: 'session_meta', payload: { id, cwd: home, timestamp: new Date().toISOString() } })}\n`);
    const o = await initUnder('codex', { env: { HOME: home }, holdOpen: rollout, childEnv: { CODEX_THREAD_ID: 'not-this-one' } });
    assert.deepEqual(o, { registered: true, added: true, agent: 'codex', conversation_id: id, how: 'the conversation file codex holds open' });
  });

  itNeeds(noProc, 'codex without its file: CODEX_THREAD_ID; an agent in a MAM session is a sub-agent and is not registered', async () => {
    const o = await initUnder('codex', { childEnv: { CODEX_THREAD_ID: '01a22f8d-9b91-7463-b8ac-108e97e6fa10' } });
    assert.deepEqual(o && o.registered && [o.agent, o.conversation_id, o.how], ['codex', '01a22f8d-9b91-7463-b8ac-108e97e6fa10', 'CODEX_THREAD_ID, which codex gives the commands it runs']);
    const sub = await initUnder('claude', { env: { MAM_SESSION: 'rev-a' }, childEnv: { CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: 'c0ffee00-0000-4000-8000-000000000000' } });
    assert.deepEqual(sub, { registered: false, why: "this runs in MAM session 'rev-a' (claude), a sub-agent whose conversation is the session's" });
    const lost = await initUnder('claude', { childEnv: { CLAUDE_CODE_SESSION_ID: '' } });
    assert.deepEqual(lost && !lost.registered && lost.why.replace(/pid \d+/, 'pid N'), 'claude (pid N) runs this, but its conversation could not be found');
  });

  it('without /proc, the variables alone decide, and only when one agent set them', () => {
    const gone = 2 ** 22 + 1; // above Linux's pid_max: no /proc entry
    assert.deepEqual(findEnclosingAgent(gone, { CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: 'abc' }), { found: true, agent: 'claude', pid: 0, conversationId: 'abc', how: 'CLAUDE_CODE_SESSION_ID in the environment', mamSession: null });
    assert.deepEqual(findEnclosingAgent(gone, { CODEX_THREAD_ID: 'x1', MAM_SESSION: 'w' }), { found: true, agent: 'codex', pid: 0, conversationId: 'x1', how: 'CODEX_THREAD_ID in the environment', mamSession: 'w' });
    assert.deepEqual(findEnclosingAgent(gone, { CLAUDE_CODE_SESSION_ID: 'abc' }), { found: false, why: 'not run by a claude or codex agent' });
    assert.deepEqual(findEnclosingAgent(gone, { CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: 'abc', CODEX_THREAD_ID: 'x1' }), { found: false, why: 'both CLAUDE_CODE_SESSION_ID and CODEX_THREAD_ID are set; cannot tell which agent runs this' });
  });
});
