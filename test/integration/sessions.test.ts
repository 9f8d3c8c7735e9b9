import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../../src/core/base/errors';
import { claudeSlug } from '../../src/core/agents/claude';
import { readAgentLog, tempDir, until } from '../support/helpers';
import { sessionFixture, type SessionFixture } from '../support/sessions';

describe('sessions: create, stop, resume, send', function () {
  this.timeout(60_000);
  let f: SessionFixture;
  beforeEach(() => {
    f = sessionFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  const starts = () => readAgentLog(f.log).filter((e) => e.event === 'start');
  const lines = () => readAgentLog(f.log).filter((e) => e.event === 'line').map((e) => e.text);

  it('claude: the pre-assigned conversation ID survives stop and resume', async () => {
    const created = await f.service.create({ name: 'creator-1', agent: 'claude', role: 'creator', baseDir: f.workspace });
    assert.equal(created.status, 'running');
    assert.match(created.conversation_id ?? '', /^[0-9a-f-]{36}$/);
    assert.match(created.target ?? '', /^%\d+$/);
    const id = created.conversation_id!;
    await until(() => starts().length === 1, 10_000, 'the agent to start');
    assert.deepEqual(starts()[0]?.argv?.slice(-3), ['--dangerously-skip-permissions', '--session-id', id]);

    const report = await f.service.send('creator-1', 'remember the number 42');
    assert.notEqual(report.submitted, 'unconfirmed');
    assert.deepEqual(lines(), ['remember the number 42']);
    assert.ok(fs.existsSync(path.join(process.env.HOME!, '.claude', 'projects', claudeSlug(f.workspace), `${id}.jsonl`)));

    const stopped = await f.service.stop('creator-1');
    assert.deepEqual([stopped.row.status, stopped.row.resumable, stopped.row.conversation_id, stopped.row.target], ['stopped', true, id, null]);
    assert.ok(readAgentLog(f.log).some((e) => e.event === 'exit' && e.code === 0), 'it exited by itself on /exit');

    const resumed = await f.service.resume('creator-1', { baseDir: tempDir('elsewhere') });
    assert.equal(resumed.status, 'running');
    assert.equal(resumed.conversation_id, id);
    await until(() => starts().length === 2, 10_000, 'the agent to restart');
    const again = starts()[1]!;
    assert.deepEqual(again.argv?.slice(-2), ['--resume', id]);
    assert.equal(again.resumed, true);
    assert.equal(again.conversation, id);
  });

  it('codex: the conversation ID is discovered from its store after the first message, and resumed', async () => {
    const created = await f.service.create({ name: 'rev-1', agent: 'codex', role: 'reviewer', baseDir: f.workspace });
    assert.equal(created.conversation_id, null, 'codex cannot be given an ID');
    await f.service.send('rev-1', 'hello codex');
    const row = await f.controlPlane.sessions.get('rev-1');
    const agentId = starts()[0]!.conversation;
    assert.equal(row?.conversation_id, agentId);

    const stopped = await f.service.stop('rev-1');
    assert.equal(stopped.row.resumable, true);
    await f.service.resume('rev-1', { baseDir: f.workspace });
    await until(() => starts().length === 2, 10_000, 'the agent to restart');
    assert.deepEqual(starts()[1]!.argv?.slice(4, 6), ['resume', agentId]);
    assert.equal(starts()[1]!.resumed, true);
  });

  it('discovery never takes a conversation another session or the orchestrator owns', async () => {
    await f.service.create({ name: 'a', agent: 'codex', baseDir: f.workspace });
    await f.service.send('a', 'first');
    const owned = (await f.controlPlane.sessions.get('a'))!.conversation_id!;
    await f.service.orchestrators.register('codex', 'orchestrator-conv');
    await f.service.create({ name: 'b', agent: 'codex', baseDir: f.workspace });
    await f.service.send('b', 'second');
    const b = (await f.controlPlane.sessions.get('b'))!;
    assert.ok(b.conversation_id);
    assert.notEqual(b.conversation_id, owned);
  });

  it('a claude session that never got a message resumes afresh under the same ID', async () => {
    const created = await f.service.create({ name: 'idle', agent: 'claude', baseDir: f.workspace });
    const stopped = await f.service.stop('idle');
    assert.equal(stopped.row.resumable, true);
    await f.service.resume('idle', { baseDir: f.workspace });
    await until(() => starts().length === 2, 10_000, 'the agent to restart');
    assert.deepEqual(starts()[1]!.argv?.slice(-2), ['--session-id', created.conversation_id]);
  });

  it('refuses to resume from another folder, and while running', async () => {
    await f.service.create({ name: 'w', agent: 'claude', baseDir: f.workspace });
    await assert.rejects(f.service.resume('w', { baseDir: f.workspace }), /session 'w' is running; stop it before resuming/);
    await f.service.stop('w');
    const other = fs.realpathSync(tempDir('other'));
    await assert.rejects(
      f.service.resume('w', { baseDir: f.workspace, cwd: other }),
      (e: unknown) => e instanceof UsageError && e.message === `session 'w' ran in ${fs.realpathSync(f.workspace)}; it can only be resumed there, not in ${other}`,
    );
    assert.equal((await f.controlPlane.sessions.get('w'))?.status, 'stopped');
    await f.service.resume('w', { baseDir: f.workspace, cwd: '.' });
  });

  it('purges a stored conversation only with --yes', async () => {
    const created = await f.service.create({ name: 'p', agent: 'claude', baseDir: f.workspace });
    await f.service.send('p', 'something to forget');
    const file = path.join(process.env.HOME!, '.claude', 'projects', claudeSlug(f.workspace), `${created.conversation_id}.jsonl`);
    assert.ok(fs.existsSync(file));
    await assert.rejects(f.service.stop('p', { purgeConversation: true }), /add --yes to confirm/);
    assert.equal((await f.controlPlane.sessions.get('p'))?.status, 'running', 'nothing happened');
    const stopped = await f.service.stop('p', { purgeConversation: true, yes: true });
    assert.deepEqual([stopped.row.resumable, stopped.row.conversation_id], [false, null]);
    assert.equal(fs.existsSync(file), false);
    await assert.rejects(f.service.resume('p', { baseDir: f.workspace }), /has no saved conversation to resume/);
  });

  it('purges a codex conversation with codex’s own delete command', async () => {
    await f.service.create({ name: 'c', agent: 'codex', baseDir: f.workspace });
    await f.service.send('c', 'hello');
    const id = (await f.controlPlane.sessions.get('c'))!.conversation_id!;
    const codexStore = path.join(process.env.HOME!, '.codex', 'sessions');
    const find = () => fs.readdirSync(codexStore, { recursive: true }).map(String).filter((n) => n.endsWith(`${id}.jsonl`));
    assert.equal(find().length, 1);
    await f.service.stop('c', { purgeConversation: true, yes: true });
    assert.equal(find().length, 0);
  });

  it('send retypes nothing: a swallowed Enter is pressed once more, and the line arrives once', async () => {
    const cmd = [process.execPath, path.resolve(__dirname, '../fixtures/fake-agent.js'), '--log', f.log, '--swallow-enters', '1'];
    await f.service.create({ name: 's', agent: 'shell', command: cmd, baseDir: f.workspace });
    const report = await f.service.send('s', 'only once please');
    assert.equal(report.submitted, 'second-enter');
    assert.deepEqual(lines(), ['only once please']);
    assert.equal(readAgentLog(f.log).filter((e) => e.event === 'swallowed-enter').length, 1);
  });

  it('waits for a slow agent to be ready instead of typing into the void', async () => {
    // Quiet for 2.5 s while "loading": longer than the quiet-output rule alone would wait.
    const cmd = [process.execPath, path.resolve(__dirname, '../fixtures/fake-agent.js'), '--as', 'claude', '--log', f.log, '--ready-delay', '2500'];
    await f.service.create({ name: 'slow', agent: 'claude', command: cmd, baseDir: f.workspace });
    const report = await f.service.send('slow', 'after you are ready');
    assert.equal(report.ready, 'sign');
    assert.deepEqual(lines(), ['after you are ready']);
  });
});

describe('sessions on herdr (the fake herdr server)', function () {
  this.timeout(60_000);
  const bin = path.resolve(__dirname, '../fixtures/bin');
  let f: SessionFixture;
  let herdrSession: string;
  beforeEach(() => {
    herdrSession = `mam-herdr-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    f = sessionFixture({ PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, MAM_MUX: 'herdr', MAM_HERDR_SESSION: herdrSession });
  });
  afterEach(async () => {
    await f.service.muxOf({ mux: 'herdr', server: herdrSession }).killServer();
    await f.dispose();
  });

  it('creates, sends to, stops and resumes a claude session, keeping its conversation', async () => {
    const created = await f.service.create({ name: 'h1', agent: 'claude', baseDir: f.workspace });
    assert.deepEqual([created.mux, created.server, created.status], ['herdr', herdrSession, 'running']);
    await f.service.send('h1', 'hello over herdr 한국어');
    await until(() => readAgentLog(f.log).some((e) => e.event === 'line'), 10_000, 'the line');
    assert.deepEqual(readAgentLog(f.log).filter((e) => e.event === 'line').map((e) => e.text), ['hello over herdr 한국어']);
    const stopped = await f.service.stop('h1');
    assert.deepEqual([stopped.row.status, stopped.row.conversation_id], ['stopped', created.conversation_id]);
    await f.service.resume('h1', { baseDir: f.workspace });
    await until(() => readAgentLog(f.log).filter((e) => e.event === 'start').length === 2, 10_000, 'the restart');
    const restart = readAgentLog(f.log).filter((e) => e.event === 'start')[1]!;
    assert.deepEqual(restart.argv?.slice(-2), ['--resume', created.conversation_id]);
  });
});
