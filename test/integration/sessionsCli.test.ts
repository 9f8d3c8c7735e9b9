import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mam, readAgentLog, snapshotTree, tempDir, until, FAKE_AGENT } from '../support/helpers';
import { idleCommand, sessionFixture, type SessionFixture } from '../support/sessions';

const idle = idleCommand().map((w) => JSON.stringify(w)).join(' ');

describe('mam session … from the command line', function () {
  this.timeout(120_000);
  let f: SessionFixture;
  beforeEach(() => {
    f = sessionFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });
  const run = (args: string[]) => mam(args, { cwd: f.workspace, env: f.env });

  it('20 parallel creates in one folder: 20 rows, 20 distinct panes, a valid registry', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => run(['session', 'create', '--agent', 'shell', '--name', `p${i}`, '--command', idle, '--json'])),
    );
    for (const r of results) assert.equal(r.exitCode, 0, r.stderr);
    const rows = await f.controlPlane.sessions.list();
    assert.equal(rows.length, 20);
    assert.ok(rows.every((r) => r.status === 'running'));
    const targets = new Set(rows.map((r) => r.target));
    assert.equal(targets.size, 20);
    const alive = (await f.tmux.listPanes()).filter((p) => p.alive && targets.has(p.id));
    assert.equal(alive.length, 20);
    assert.equal((await f.controlPlane.sessions.load()).revision, 40, 'each create: one reservation, one placement');
  });

  it('create, status, send, stop, resume, monitor and orchestrator register work end to end', async () => {
    const cmd = [process.execPath, FAKE_AGENT, '--log', f.log].map((w) => JSON.stringify(w)).join(' ');
    const created = await run(['session', 'create', '--agent', 'shell', '--name', 'dev.1', '--role', 'developer', '--command', cmd]);
    assert.equal(created.exitCode, 0, created.stderr);
    assert.match(created.stdout, /^Created session dev\.1 \(shell, developer\) in pane %\d+ of tmux server mam-test-/m);
    assert.match(created.stdout, new RegExp(`Attach: tmux -L ${f.server} attach-session -t %\\d+`));

    const status = await run(['session', 'status', '--json']);
    const states = JSON.parse(status.stdout) as Array<{ session: { name: string }; pane: { alive: boolean; command: string }; drift: string[] }>;
    assert.deepEqual(states.map((s) => [s.session.name, s.pane.alive, s.pane.command, s.drift]), [['dev.1', true, 'node', []]]);

    const line = '지금 $(rm -rf ~) 실행하지 마; echo "quoted" `tick` | cat';
    const sent = await run(['session', 'send', 'dev.1', '--text', line]);
    assert.equal(sent.exitCode, 0, sent.stderr);
    await until(() => readAgentLog(f.log).some((e) => e.event === 'line'), 10_000, 'the line');
    assert.deepEqual(readAgentLog(f.log).filter((e) => e.event === 'line').map((e) => e.text), [line]);

    const stopped = await run(['session', 'stop', 'dev.1']);
    assert.equal(stopped.exitCode, 0, stopped.stderr);
    assert.match(stopped.stdout, /Stopped session dev\.1\.\nResume it with: mam session resume dev\.1/);
    assert.equal((await run(['session', 'stop', 'dev.1'])).stdout.trim(), 'Session dev.1 was already stopped.\nResume it with: mam session resume dev.1');

    const resumed = await run(['session', 'resume', 'dev.1']);
    assert.equal(resumed.exitCode, 0, resumed.stderr);
    const pane = (await f.controlPlane.sessions.get('dev.1'))!.target!;
    await f.tmux.kill(pane);
    const monitor = await run(['session', 'monitor', '--once']);
    assert.equal(monitor.stdout.trim(), 'terminated dev.1: its pane is gone');

    const reg = await run(['orchestrator', 'register', '--agent', 'claude', '--conversation', 'abc-123']);
    assert.equal(reg.exitCode, 0, reg.stderr);
    const orchestrators = JSON.parse(fs.readFileSync(path.join(f.workspace, '.mam', 'orchestrators.json'), 'utf8'));
    assert.deepEqual(orchestrators.map((o: { conversation_id: string }) => o.conversation_id), ['abc-123']);
  });

  describe('bad input: one line, exit 64, nothing changed', () => {
    const cases: Array<[string, string[], RegExp]> = [
      ['unknown agent', ['session', 'create', '--agent', 'gpt9', '--name', 'x'], /^mam: unknown agent 'gpt9'; choose one of claude, codex, gemini, opencode, copilot, qwen, hermes, grok, agy, shell$/],
      ['name with a path separator', ['session', 'create', '--agent', 'claude', '--name', 'a/b'], /^mam: session name 'a\/b' contains '\/'; use only letters, digits, '\.', '_' and '-'$/],
      ['name with shell metacharacters', ['session', 'create', '--agent', 'claude', '--name', 'x;rm -rf ~'], /contains ';'/],
      ['over-long name', ['session', 'create', '--agent', 'claude', '--name', 'n'.repeat(65)], /session name is 65 characters long; the limit is 64/],
      ['duplicate name', ['session', 'create', '--agent', 'shell', '--name', 'taken', '--command', 'sleep 1'], /^mam: session 'taken' already exists$/],
      ['unknown role', ['session', 'create', '--agent', 'claude', '--name', 'r', '--role', 'boss'], /^mam: unknown role 'boss'; choose one of orchestrator, planner/],
      ['unknown multiplexer', ['session', 'create', '--agent', 'claude', '--name', 'm', '--mux', 'screen'], /^mam: unknown multiplexer 'screen'; choose tmux or herdr$/],
      ['missing cwd', ['session', 'create', '--agent', 'claude', '--name', 'c', '--cwd', '/no/such/dir'], /^mam: --cwd \/no\/such\/dir does not exist$/],
      ['shell without a command', ['session', 'create', '--agent', 'shell', '--name', 's'], /^mam: the shell agent needs --command "program args…"$/],
      ['program not installed', ['session', 'create', '--agent', 'shell', '--name', 's', '--command', 'no-such-program --flag'], /^mam: agent command 'no-such-program' was not found on PATH; install it, or point MAM_AGENT_COMMAND_SHELL at it$/],
      ['unterminated quote in a command', ['session', 'create', '--agent', 'shell', '--name', 's', '--command', 'echo "oops'], /^mam: unterminated " in command/],
      ['unknown session (stop)', ['session', 'stop', 'ghost'], /^mam: unknown session 'ghost'$/],
      ['unknown session (resume)', ['session', 'resume', 'ghost'], /^mam: unknown session 'ghost'$/],
      ['unknown session (send)', ['session', 'send', 'ghost', '--text', 'hi'], /^mam: unknown session 'ghost'$/],
      ['multi-line text', ['session', 'send', 'taken', '--text', 'a\nb'], /^mam: --text must be one line/],
      ['purge without --yes', ['session', 'stop', 'taken', '--purge-conversation'], /add --yes to confirm$/],
      ['negative interval', ['session', 'monitor', '--interval', '-1'], /--interval/],
      ['bad conversation ID', ['orchestrator', 'register', '--agent', 'claude', '--conversation', '../../x'], /is not a conversation ID$/],
    ];
    for (const [name, args, message] of cases) {
      it(name, async () => {
        const made = await run(['session', 'create', '--agent', 'shell', '--name', 'taken', '--command', idle]);
        assert.equal(made.exitCode, 0, made.stderr);
        const before = snapshotTree(f.workspace);
        const panes = (await f.tmux.listPanes()).map((p) => p.id);
        const r = await run(args);
        assert.equal(r.exitCode, 64, `exit ${r.exitCode}: ${r.stderr}`);
        assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, r.stderr);
        assert.match(r.stderr.trim(), message);
        const after = snapshotTree(f.workspace);
        for (const snap of [before, after]) for (const k of Object.keys(snap)) if (k.startsWith('.mam/locks/')) delete snap[k];
        assert.deepEqual(after, before);
        assert.deepEqual((await f.tmux.listPanes()).map((p) => p.id), panes, 'no pane was started or closed');
      });
    }
  });

  it('resume from another folder is refused (exit 64) and changes nothing', async () => {
    await run(['session', 'create', '--agent', 'shell', '--name', 'here', '--command', idle]);
    await run(['session', 'stop', 'here']);
    const other = tempDir('other');
    const before = snapshotTree(path.join(f.workspace, '.mam'));
    const r = await run(['session', 'resume', 'here', '--cwd', other]);
    assert.equal(r.exitCode, 64);
    assert.match(r.stderr, /^mam: session 'here' ran in .*; it can only be resumed there, not in /);
    const after = snapshotTree(path.join(f.workspace, '.mam'));
    for (const snap of [before, after]) for (const k of Object.keys(snap)) if (k.startsWith('locks/')) delete snap[k];
    assert.deepEqual(after, before);
  });
});
