import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { newJobId } from '../../src/core/base/ids';
import { execa } from 'execa';
import { CLI, controlPlane, jobRecord, mam, sessionRow, snapshotTree, tempDir, tempWorkspace } from '../support/helpers';
import { version } from '../../package.json';

describe('mam CLI', function () {
  this.timeout(60_000);
  let ws: string;
  beforeEach(() => {
    ws = tempWorkspace();
  });

  it('--help lists the session and job command groups; --version prints the version', async () => {
    const help = await mam(['--help'], { cwd: ws });
    assert.equal(help.exitCode, 0);
    assert.match(help.stdout, /^\s+session\s+agent sessions/m);
    assert.match(help.stdout, /^\s+job\s+delegated jobs/m);
    assert.match(help.stdout, /^\s+doctor\s+/m);
    const bare = await mam([], { cwd: ws });
    assert.equal(bare.exitCode, 64, 'no command is a usage error');
    assert.match(bare.stdout, /Usage: mam <command>/);
    const v = await mam(['--version'], { cwd: ws });
    assert.deepEqual([v.exitCode, v.stdout.trim()], [0, version]);
    const names = help.stdout.split('Commands:')[1]!.split('Options:')[0]!.trim().split('\n').map((l) => l.trim().split(/\s+/)[0]);
    assert.deepEqual(names, [...new Set(names)], 'each command is listed once (loop is a group and a command)');
  });

  it('a reader that goes away early (mam job list | head) ends the output quietly, without a stack trace', async () => {
    const cp = controlPlane(ws);
    for (let i = 0; i < 400; i++) await cp.jobs.create(jobRecord({ id: newJobId(), title: `job number ${i} with a title long enough to fill the pipe quickly` }));
    const r = await execa('sh', ['-c', `node ${JSON.stringify(CLI)} job list | head -n 1`], { cwd: ws, reject: false });
    assert.equal(r.exitCode, 0);
    assert.match(r.stdout, /^ID\s/);
    assert.equal(r.stderr, '', 'nothing on stderr: no EPIPE trace');
  });

  it('has help for each group and command', async () => {
    const group = await mam(['job', '--help'], { cwd: ws });
    assert.equal(group.exitCode, 0);
    for (const sub of ['list', 'status', 'logs']) assert.match(group.stdout, new RegExp(`^\\s+${sub}\\s`, 'm'));
    const cmd = await mam(['job', 'list', '--help'], { cwd: ws });
    assert.equal(cmd.exitCode, 0);
    assert.match(cmd.stdout, /Usage: mam job list \[options\]/);
    assert.match(cmd.stdout, /--state STATE/);
    assert.match(cmd.stdout, /--json/);
  });

  it('session list prints the registry as a table and as JSON', async () => {
    const rows = [sessionRow('creator-1', { agent: 'claude', role: 'creator' }), sessionRow('rev-2', { agent: 'codex', role: 'reviewer', status: 'stopped' })];
    await controlPlane(ws).sessions.mutate((tx) => rows.forEach((r) => tx.insert(r)));
    const text = await mam(['session', 'list'], { cwd: path.join(ws) });
    assert.equal(text.exitCode, 0, text.stderr);
    assert.match(text.stdout, /^NAME\s+AGENT\s+ROLE\s+STATUS/m);
    assert.match(text.stdout, /^creator-1\s+claude\s+creator\s+running/m);
    assert.match(text.stdout, /^rev-2\s+codex\s+reviewer\s+stopped/m);
    const json = await mam(['session', 'list', '--json'], { cwd: ws });
    assert.deepEqual(JSON.parse(json.stdout), rows);
  });

  it('finds the workspace from a subfolder, from MAM_WORKSPACE and from --workspace', async () => {
    await controlPlane(ws).sessions.mutate((tx) => tx.insert(sessionRow('here')));
    const sub = path.join(ws, 'a', 'b');
    fs.mkdirSync(sub, { recursive: true });
    const elsewhere = tempDir('elsewhere');
    for (const [args, cwd, env] of [
      [['session', 'list', '--json'], sub, {}],
      [['session', 'list', '--json'], elsewhere, { MAM_WORKSPACE: ws }],
      [['session', 'list', '--json', '--workspace', ws], elsewhere, {}],
    ] as const) {
      const r = await mam(args, { cwd, env });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout).map((s: { name: string }) => s.name), ['here']);
    }
  });

  it('job list, status and logs read what is on disk', async () => {
    const cp = controlPlane(ws);
    const done = jobRecord({ state: 'completed', detail: 'all green', created_at: '2026-11-01T10:00:00.000Z' });
    const open = jobRecord({ state: 'started', session: 'tmux:rev-2', created_at: '2026-11-02T10:00:00.000Z' });
    await cp.jobs.create(done);
    await cp.jobs.create(open);
    await cp.audit.append(done.id, { type: 'transition', at: '2026-11-01T10:00:00.000Z', from: null, to: 'registered' });
    await cp.audit.append(done.id, { type: 'event', at: '2026-11-01T10:00:01.000Z', event: 'started', seq: 1, sender: 'w1' });
    await cp.audit.append(done.id, { type: 'event', at: '2026-11-01T10:00:09.000Z', event: 'completed', seq: 2, sender: 'w1', detail: 'all green' });

    const list = await mam(['job', 'list'], { cwd: ws });
    assert.equal(list.exitCode, 0, list.stderr);
    const lines = list.stdout.trim().split('\n');
    assert.match(lines[0]!, /^ID\s+SESSION\s+TYPE\s+STATE/);
    assert.ok(lines[1]!.startsWith(open.id) && lines[2]!.startsWith(done.id), 'newest first');
    const filtered = await mam(['job', 'list', '--state', 'completed', '--json'], { cwd: ws });
    assert.deepEqual(JSON.parse(filtered.stdout).map((j: { id: string }) => j.id), [done.id]);

    const status = await mam(['job', 'status', done.id], { cwd: ws });
    assert.equal(status.exitCode, 0);
    assert.match(status.stdout, /^state\s+completed$/m);
    assert.match(status.stdout, /^events\s+2$/m);
    const statusJson = await mam(['job', 'status', '--job', done.id, '--json'], { cwd: ws });
    assert.equal(JSON.parse(statusJson.stdout).job.id, done.id);

    const logs = await mam(['job', 'logs', done.id], { cwd: ws });
    assert.equal(logs.exitCode, 0);
    assert.match(logs.stdout, /→ registered/);
    assert.match(logs.stdout, /started\s+seq=1 from w1/);
    assert.match(logs.stdout, /completed\s+seq=2 from w1\s+all green/);
    const logsJson = await mam(['job', 'logs', done.id, '--json'], { cwd: ws });
    assert.deepEqual(JSON.parse(logsJson.stdout).map((e: { type: string }) => e.type), ['transition', 'event', 'event']);
  });

  describe('bad input: one line, exit 64, nothing changed', () => {
    const cases: Array<{ name: string; args: string[]; message: RegExp; setup?: (ws: string) => void }> = [
      { name: 'unknown command', args: ['frobnicate'], message: /^mam: unknown command 'frobnicate'; see 'mam --help'$/ },
      { name: 'unknown subcommand', args: ['session', 'frob'], message: /^mam: unknown command 'mam session frob'/ },
      { name: 'unknown option', args: ['session', 'list', '--bogus'], message: /^mam: unknown option --bogus; see 'mam session list --help'$/ },
      { name: 'missing option value', args: ['job', 'status', '--job'], message: /^mam: --job needs a value/ },
      { name: 'value for a flag', args: ['session', 'list', '--json=yes'], message: /^mam: --json takes no value/ },
      { name: 'extra argument', args: ['session', 'list', 'extra'], message: /^mam: mam session list: unexpected argument 'extra'$/ },
      { name: 'unknown job', args: ['job', 'status', 'j-20260101T000000Z-deadbeef'], message: /^mam: unknown job 'j-20260101T000000Z-deadbeef'$/ },
      { name: 'job ID with a path', args: ['job', 'logs', '../../etc/passwd'], message: /^mam: '\.\.\/\.\.\/etc\/passwd' is not a job ID$/ },
      { name: 'job ID with shell metacharacters', args: ['job', 'status', '$(touch pwned);rm -rf ~'], message: /is not a job ID$/ },
      { name: 'job ID given twice', args: ['job', 'status', 'j-a', '--job', 'j-b'], message: /give the job ID once/ },
      { name: 'bad state filter', args: ['job', 'list', '--state', 'exploded'], message: /^mam: --state must be one of registered, dispatched/ },
      { name: 'missing --workspace', args: ['session', 'list', '--workspace', '/nonexistent/dir'], message: /^mam: --workspace: \/nonexistent\/dir is not a directory$/ },
      {
        name: 'malformed .mam.env',
        args: ['session', 'list'],
        message: /^mam: .*\.mam\.env:2: expected KEY=VALUE, got 'this is not an assignment'$/,
        setup: (w) => fs.writeFileSync(path.join(w, '.mam.env'), 'MQTT_BROKER=localhost\nthis is not an assignment\n'),
      },
      {
        name: 'non-numeric timer in .mam.env',
        args: ['job', 'list'],
        message: /^mam: MAM_START_TIMEOUT_S in .*\.mam\.env: must be a number of seconds \(got 'soon'\)$/,
        setup: (w) => fs.writeFileSync(path.join(w, '.mam.env'), 'MAM_START_TIMEOUT_S=soon\n'),
      },
      {
        name: 'corrupt registry with no mirror',
        args: ['session', 'list'],
        message: /^mam: agent-sessions\.db is corrupt .* and there is no agent-sessions\.yaml; move .* aside to start an empty registry$/,
        setup: (w) => {
          fs.mkdirSync(path.join(w, '.mam'), { recursive: true });
          fs.writeFileSync(path.join(w, '.mam', 'agent-sessions.db'), 'not sqlite');
        },
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const w = tempWorkspace();
        await controlPlane(w).jobs.create(jobRecord({ id: newJobId() }));
        c.setup?.(w);
        const before = snapshotTree(w);
        const r = await mam(c.args, { cwd: w });
        assert.equal(r.exitCode, 64, `exit ${r.exitCode}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, `one line: ${r.stderr}`);
        assert.match(r.stderr.trim(), c.message);
        const after = snapshotTree(w);
        delete after['.mam/locks/'];
        delete before['.mam/locks/'];
        assert.deepEqual(after, before);
        assert.equal(fs.existsSync(path.join(w, 'pwned')), false);
      });
    }

    it('no workspace at all', async () => {
      const bare = tempDir('bare');
      const r = await mam(['session', 'list'], { cwd: bare });
      assert.equal(r.exitCode, 64);
      assert.match(r.stderr, /^mam: no workspace found at or above .*; run inside a project, or pass --workspace DIR$/);
      assert.deepEqual(fs.readdirSync(bare), []);
    });
  });

  it('doctor reports each problem with what to do, and exits 1 when there is one', async () => {
    const ok = await mam(['doctor'], { cwd: ws });
    assert.equal(ok.exitCode, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /✓ tmux\s+tmux \d/);
    assert.match(ok.stdout, /✓ git\s+git version/);
    assert.match(ok.stdout, /✓ broker\s+embedded broker/);
    assert.match(ok.stdout, /^No problems found(, \d+ warnings?)?\.$/m);

    // A PATH without tmux, and a .mam.env naming a CA file that does not exist.
    const bin = tempDir('bin');
    for (const tool of ['git']) fs.symlinkSync(execPathOf(tool), path.join(bin, tool));
    fs.writeFileSync(path.join(ws, '.mam.env'), 'MQTT_BROKER=broker.example\nMQTT_TLS=true\nMQTT_CA=/nonexistent/ca.pem\n');
    const bad = await mam(['doctor', '--json'], { cwd: ws, env: { PATH: bin } });
    assert.equal(bad.exitCode, 1);
    const report = JSON.parse(bad.stdout) as { ok: boolean; checks: Array<{ name: string; ok: boolean; detail: string; fix?: string }> };
    assert.equal(report.ok, false);
    const tmux = report.checks.find((c) => c.name === 'tmux')!;
    assert.deepEqual([tmux.ok, tmux.detail], [false, 'tmux is not installed']);
    assert.match(tmux.fix!, /install tmux/);
    const broker = report.checks.find((c) => c.name === 'broker')!;
    assert.equal(broker.ok, false);
    assert.match(broker.detail, /MQTT_CA names \/nonexistent\/ca\.pem, which does not exist/);
    const problems = report.checks.filter((c) => !c.ok).length;
    const text = await mam(['doctor'], { cwd: ws, env: { PATH: bin } });
    assert.match(text.stdout, new RegExp(`^${problems} problems found(, \\d+ warnings?)?\\.$`, 'm'));
  });
});

function execPathOf(tool: string): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const candidate = path.join(dir, tool);
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error(`${tool} not found`);
}
