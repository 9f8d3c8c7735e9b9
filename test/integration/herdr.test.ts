import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { commandLine, HerdrBackend, HerdrError, herdrCall, herdrSocketPath } from '../../src/core/mux/herdr';
import { MuxError, type SpawnRequest } from '../../src/core/mux/multiplexer';
import { parse } from 'smol-toml';
import { FAKE_AGENT, readAgentLog, REPO_ROOT, tempDir, until } from '../support/helpers';
import { muxContract } from './muxContract';

const FAKE_BIN = path.join(REPO_ROOT, 'test/fixtures/bin');
let n = 0;

interface HerdrUnderTest {
  mux: HerdrBackend;
  session: string;
  socket: string;
  env: NodeJS.ProcessEnv;
  dispose(): Promise<void>;
}

/** A backend on a fresh session whose `herdr` is the fake one, found on PATH as a user's would be. */
function makeHerdr(extraEnv: NodeJS.ProcessEnv = {}): HerdrUnderTest {
  const session = `mam-test-${process.pid}-${n++}`;
  const env = { ...process.env, PATH: `${FAKE_BIN}${path.delimiter}${process.env.PATH ?? ''}`, ...extraEnv };
  const mux = new HerdrBackend({ session, env });
  const socket = herdrSocketPath(session, env);
  return {
    mux, session, socket, env,
    dispose: async () => {
      await mux.killServer();
      await until(() => leftovers(session, socket).length === 0, 10_000, `the fake herdr server of ${session} and its panes to exit`);
      assert.equal(fs.existsSync(socket), false, 'the socket is removed');
      assert.equal(tmuxAnswers(`fakeherdr-${session}`), false, "the fake's tmux server is gone");
    },
  };
}

/** The session's server process (its command line names the session) and its panes' processes (herdr hands each the socket path). */
function leftovers(session: string, socket: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))) continue;
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (argv.join(' ').includes(`--session ${session} server`) || environ.includes(`HERDR_SOCKET_PATH=${socket}`)) found.push(pid);
    } catch {
      // exited meanwhile, or not ours
    }
  }
  return found;
}

function tmuxAnswers(socketName: string): boolean {
  return spawnSync('tmux', ['-L', socketName, 'list-sessions'], { stdio: 'ignore' }).status === 0;
}

/** Writes `payload` on a fresh connection and collects every line until the server closes it. */
function exchange(socket: string, payload: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const conn = net.createConnection(socket);
    let text = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`the server kept the connection open; got: ${text}`));
    }, 7000);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(payload));
    conn.on('data', (chunk: string) => (text += chunk));
    conn.on('error', reject);
    conn.on('close', () => {
      clearTimeout(timer);
      resolve(text.split('\n').filter(Boolean));
    });
  });
}

interface Subscription {
  lines: Array<Record<string, any>>;
  close(): void;
}

async function subscribe(socket: string, subscriptions: object[]): Promise<Subscription> {
  const conn = net.createConnection(socket);
  const lines: Array<Record<string, any>> = [];
  let buffer = '';
  conn.setEncoding('utf8');
  conn.on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      lines.push(JSON.parse(buffer.slice(0, nl)) as Record<string, any>);
      buffer = buffer.slice(nl + 1);
    }
  });
  conn.on('connect', () => conn.write(`${JSON.stringify({ id: 'sub_1', method: 'events.subscribe', params: { subscriptions } })}\n`));
  await until(() => lines.length > 0, 5000, 'the subscription ack');
  return { lines, close: () => conn.destroy() };
}

const sleeper = (cwd: string, label = 'herdr.sleeper') => ({ label, argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], cwd, env: {} });

muxContract('herdr (fake server)', async () => makeHerdr());

describe('herdr backend (fake server)', function () {
  this.timeout(60_000);
  let h: HerdrUnderTest;
  const extraEnv: NodeJS.ProcessEnv = {};
  beforeEach(() => {
    h = makeHerdr(extraEnv);
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('is not running before anything starts it, and listPanes and capture do not start it', async () => {
    assert.equal(await h.mux.isRunning(), false);
    assert.deepEqual(await h.mux.listPanes(), []);
    await assert.rejects(h.mux.capture('w0-1'), (err: HerdrError) => err instanceof HerdrError && err.code === 'not_running' && /pane\.read/.test(err.message));
    assert.equal(await h.mux.isRunning(), false);
    assert.equal(fs.existsSync(path.dirname(h.socket)), false, 'no session folder was made');
    assert.deepEqual(leftovers(h.session, h.socket), []);
    await h.mux.killServer(); // not running is not an error
  });

  it('starts the server detached as `herdr --session NAME server` from PATH, on a 0600 socket', async () => {
    await h.mux.spawn(sleeper(tempDir('auto')));
    const [pid] = leftovers(h.session, h.socket).filter((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('server'));
    assert.ok(pid, 'a server process');
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    assert.deepEqual(argv.slice(1), [path.join(FAKE_BIN, 'herdr'), '--session', h.session, 'server']);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const session = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
    assert.equal(session, pid, 'the server leads a session of its own (detached)');
    assert.equal(fs.statSync(h.socket).mode & 0o777, 0o600);
  });

  it('answers unknown methods and malformed lines with invalid_request and an empty id, one request per connection', async () => {
    await h.mux.spawn(sleeper(tempDir('proto')));
    for (const bad of ['{"id":"req_x","method":"no.such_method","params":{}}', 'not json', '{"id":"req_y","method":"pane.read","params":{}}']) {
      const lines = await exchange(h.socket, `${bad}\n`);
      assert.equal(lines.length, 1);
      const answer = JSON.parse(lines[0]!);
      assert.equal(answer.id, '');
      assert.equal(answer.error.code, 'invalid_request');
      assert.equal(typeof answer.error.message, 'string');
    }
    const two = await exchange(h.socket, '{"id":"req_1","method":"ping","params":{}}\n{"id":"req_2","method":"ping","params":{}}\n');
    assert.equal(two.length, 1, 'one answer, then the server closes the connection');
    assert.deepEqual(Object.keys(JSON.parse(two[0]!)), ['id', 'result']);
    assert.equal(JSON.parse(two[0]!).id, 'req_1');
    assert.equal(JSON.parse(two[0]!).result.type, 'pong');
    assert.deepEqual(await exchange(h.socket, '\n'), [], 'an empty line gets no answer');
  });

  it('streams pane_exited then pane_closed to a subscriber when a program exits', async () => {
    const cwd = tempDir('events');
    const trigger = path.join(cwd, 'exit-now');
    const script = `setInterval(() => { if (require('fs').existsSync(${JSON.stringify(trigger)})) process.exit(0) }, 20)`;
    const pane = await h.mux.spawn({ label: 'herdr.events', argv: [process.execPath, '-e', script], cwd, env: {} });
    const sub = await subscribe(h.socket, [{ type: 'pane.exited' }, { type: 'pane.closed' }, { type: 'workspace.closed' }]);
    try {
      assert.deepEqual(sub.lines[0], { id: 'sub_1', result: { type: 'subscription_started' } });
      fs.writeFileSync(trigger, '');
      await until(() => sub.lines.some((l) => l.event === 'workspace_closed'), 10_000, 'the events');
      const events = sub.lines.slice(1);
      assert.deepEqual(events.map((e) => e.event), ['pane_exited', 'pane_closed', 'workspace_closed']);
      for (const e of events) assert.equal('id' in e, false, 'pushed events carry no id');
      assert.equal(events[0]!.data.pane_id, pane.id);
      assert.equal(events[1]!.data.pane_id, pane.id);
      assert.equal(typeof events[1]!.data.workspace_id, 'string');
      assert.equal((await h.mux.listPanes()).some((p) => p.id === pane.id), false);
    } finally {
      sub.close();
    }
  });

  it('reports agent state to herdr with source custom:mam', async () => {
    const pane = await h.mux.spawn(sleeper(tempDir('report')));
    const sub = await subscribe(h.socket, [{ type: 'pane.agent_status_changed', pane_id: pane.id }]);
    try {
      await h.mux.reportAgent(pane.id, 'working', 'job j-1: running tests');
      const got = (await herdrCall(h.socket, 'pane.get', { pane_id: pane.id })) as { pane: Record<string, unknown> };
      assert.equal(got.pane.agent, 'mam');
      assert.equal(got.pane.agent_status, 'working');
      await until(() => sub.lines.length > 1, 5000, 'the status event');
      assert.equal(sub.lines[1]!.event, 'pane.agent_status_changed');
      assert.deepEqual([sub.lines[1]!.data.pane_id, sub.lines[1]!.data.agent_status], [pane.id, 'working']);
    } finally {
      sub.close();
    }
    await assert.rejects(h.mux.reportAgent(`${pane.id}9`, 'idle'), (err: HerdrError) => err.code === 'pane_not_found' && /pane\.report_agent/.test(err.message));
  });

  it('maps key names to herdr keys: BSpace, Tab, Escape, Enter, C-d', async () => {
    const cwd = tempDir('keys');
    const log = path.join(cwd, 'agent.log');
    const pane = await h.mux.spawn({ label: 'herdr.keys', argv: [process.execPath, FAKE_AGENT, '--log', log], cwd, env: {} });
    await until(async () => /fake-agent ready/.test(await h.mux.capture(pane.id)), 10_000, 'the agent to be ready');
    await h.mux.sendText(pane.id, 'abc');
    await h.mux.sendKeys(pane.id, ['BSpace', 'Tab', 'Escape', 'Enter']);
    await until(() => readAgentLog(log).some((e) => e.event === 'line'), 10_000, 'the line');
    assert.equal(readAgentLog(log).find((e) => e.event === 'line')!.text, 'ab\t\u001b');
    await h.mux.sendKeys(pane.id, ['C-d']);
    await until(() => readAgentLog(log).some((e) => e.event === 'exit'), 10_000, 'the agent to take C-d as end of input');
    assert.equal(readAgentLog(log).find((e) => e.event === 'exit')!.code, 0);
  });

  it('names the method and herdr error code when herdr refuses a call', async () => {
    await h.mux.spawn(sleeper(tempDir('err')));
    await assert.rejects(h.mux.capture('w0000-7'), (err: HerdrError) => {
      assert.ok(err instanceof MuxError);
      assert.equal(err.method, 'pane.read');
      assert.equal(err.code, 'pane_not_found');
      assert.match(err.message, /herdr pane\.read failed \(pane_not_found\)/);
      return true;
    });
    await h.mux.kill('w0000-7'); // a pane that is gone is not an error
  });

  it('refuses a command line it cannot type safely, before starting anything', async () => {
    const cwd = tempDir('refuse');
    const bad: SpawnRequest[] = [
      { label: 'x', argv: [], cwd, env: {} },
      { label: 'x', argv: ['A=b'], cwd, env: {} },
      { label: 'x', argv: ['node', 'tab\there'], cwd, env: {} },
      { label: 'x', argv: ['node'], cwd, env: { 'A=B': 'c' } },
      { label: 'x', argv: ['node', 'x'.repeat(5000)], cwd, env: {} },
    ];
    for (const request of bad) await assert.rejects(h.mux.spawn(request), MuxError);
    assert.equal(await h.mux.isRunning(), false);
    assert.equal(commandLine({ label: 'x', argv: ['/bin/node', "it's"], cwd, env: { K: 'a b' } }), "exec env -- 'K=a b' '/bin/node' 'it'\\''s'");
  });

  it('is stopped by `herdr --session NAME server stop`, as a user would', async () => {
    await h.mux.spawn(sleeper(tempDir('cli-stop')));
    const r = spawnSync(path.join(FAKE_BIN, 'herdr'), ['--session', h.session, 'server', 'stop'], { env: h.env, encoding: 'utf8', timeout: 15_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).result.type, 'ok');
    assert.equal(await h.mux.isRunning(), false);
  });

  it('starts past a stale socket left by a server that died', async () => {
    fs.mkdirSync(path.dirname(h.socket), { recursive: true });
    const script = `require('net').createServer().listen(${JSON.stringify(h.socket)}, () => process.kill(process.pid, 'SIGKILL'))`;
    spawnSync(process.execPath, ['-e', script], { timeout: 10_000 });
    assert.ok(fs.existsSync(h.socket), 'the dead server left its socket');
    assert.equal(await h.mux.isRunning(), false);
    const pane = await h.mux.spawn(sleeper(tempDir('stale')));
    assert.ok((await h.mux.listPanes()).some((p) => p.id === pane.id && p.alive));
  });

  describe('started from inside another herdr pane', () => {
    before(() => Object.assign(extraEnv, { HERDR_SOCKET_PATH: '/nonexistent/other.sock', HERDR_SESSION: 'other', HERDR_PANE_ID: 'w1-1' }));
    after(() => {
      for (const key of ['HERDR_SOCKET_PATH', 'HERDR_SESSION', 'HERDR_PANE_ID']) delete extraEnv[key];
    });

    it('starts its own session, not the one its environment names', async () => {
      const pane = await h.mux.spawn(sleeper(tempDir('nested')));
      assert.ok((await h.mux.listPanes()).some((p) => p.id === pane.id && p.alive));
      const [pid] = leftovers(h.session, h.socket).filter((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('server'));
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      assert.deepEqual(environ.filter((e) => e.startsWith('HERDR_')), [`HERDR_CONFIG_PATH=${path.join(path.dirname(h.socket), 'mam-config.toml')}`], "only MAM's config for its own server");
    });
  });

  describe("the server MAM starts never relaunches agents by itself (the user's config, plus resume_agents_on_restore = false)", () => {
    const userConfig = (): string => path.join(String(extraEnv.XDG_CONFIG_HOME), 'herdr', 'config.toml');
    before(() => {
      extraEnv.XDG_CONFIG_HOME = tempDir('xdg');
    });
    after(() => {
      delete extraEnv.XDG_CONFIG_HOME;
    });
    const serverConfig = (): { file: string; text: string } => {
      const [pid] = leftovers(h.session, h.socket).filter((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('server'));
      const file = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith('HERDR_CONFIG_PATH='))?.slice('HERDR_CONFIG_PATH='.length);
      assert.ok(file, 'the server is told which config to read');
      return { file, text: fs.readFileSync(file, 'utf8') };
    };

    it("keeps the user's settings, turns restore off, and leaves the user's file as it was", async () => {
      const mine = '# my herdr\n[ui]\ntheme = "dark"\n\n[session]\nresume_agents_on_restore = true\nscrollback = 5000\n';
      fs.mkdirSync(path.dirname(userConfig()), { recursive: true });
      fs.writeFileSync(userConfig(), mine);
      const warnings: string[] = [];
      const mux = new HerdrBackend({ session: h.session, env: h.env, warn: (m) => warnings.push(m) });
      await mux.spawn(sleeper(tempDir('restore')));
      const { file, text } = serverConfig();
      assert.equal(path.dirname(file), path.dirname(h.socket), "beside the server's socket, not in the user's config");
      assert.deepEqual(plain(parse(text)), { ui: { theme: 'dark' }, session: { resume_agents_on_restore: false, scrollback: 5000 } });
      assert.equal(fs.readFileSync(userConfig(), 'utf8'), mine);
      assert.deepEqual(warnings, []);
    });

    it('names a config it cannot read, never rewrites it, and still turns restore off', async () => {
      const broken = '[ui\ntheme = dark\n';
      fs.mkdirSync(path.dirname(userConfig()), { recursive: true });
      fs.writeFileSync(userConfig(), broken);
      const warnings: string[] = [];
      const mux = new HerdrBackend({ session: h.session, env: h.env, warn: (m) => warnings.push(m) });
      await mux.spawn(sleeper(tempDir('broken')));
      assert.deepEqual(plain(parse(serverConfig().text)), { session: { resume_agents_on_restore: false } });
      assert.equal(fs.readFileSync(userConfig(), 'utf8'), broken);
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(warnings[0]!, new RegExp(`your herdr config ${userConfig().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is left as it is .*not valid TOML \\(line 1`));
    });
  });

  describe("the user's own server, named 'default'", () => {
    it('goes to herdr/herdr.sock, started as `herdr server` with the user\'s own config', async () => {
      const xdg = tempDir('xdg-default');
      const env = { ...h.env, XDG_CONFIG_HOME: xdg };
      const mux = new HerdrBackend({ session: 'default', env });
      const socket = path.join(xdg, 'herdr', 'herdr.sock');
      assert.equal(herdrSocketPath('default', env), socket);
      try {
        await mux.spawn(sleeper(tempDir('own')));
        const [pid] = leftovers('default', socket).filter((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('server'));
        const found = pid ?? Number(fs.readdirSync('/proc').find((n) => /^\d+$/.test(n) && safeRead(`/proc/${n}/cmdline`).split('\0').filter(Boolean).slice(1).join(' ') === `${path.join(FAKE_BIN, 'herdr')} server`));
        assert.ok(found, 'a server started as `herdr server`');
        assert.ok(fs.existsSync(socket));
        assert.ok(!fs.readFileSync(`/proc/${found}/environ`, 'utf8').includes('HERDR_CONFIG_PATH='), 'no config of MAM for it');
      } finally {
        await mux.killServer();
        await until(() => !fs.existsSync(socket), 10_000, "the user's server to stop");
      }
    });
  });

  describe('against the released API (no pane.process_info, workspace.create answering workspace_info)', () => {
    before(() => {
      extraEnv.FAKE_HERDR_PROTOCOL = 'released';
    });
    after(() => {
      delete extraEnv.FAKE_HERDR_PROTOCOL;
    });

    it('spawns with no pid and lists panes alive by herdr listing them, with the workspace cwd and label', async () => {
      const cwd = fs.realpathSync(tempDir('released'));
      const pane = await h.mux.spawn(sleeper(cwd, 'released.one'));
      assert.equal(pane.pid, null);
      const listed = (await h.mux.listPanes()).find((p) => p.id === pane.id);
      assert.deepEqual(listed, { id: pane.id, alive: true, pid: null, command: null, cwd, label: 'released.one' });
      await h.mux.kill(pane.id);
      assert.deepEqual(await h.mux.listPanes(), []);
    });
  });
});

function safeRead(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** A parsed TOML table as plain objects, to compare with literals. */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}
