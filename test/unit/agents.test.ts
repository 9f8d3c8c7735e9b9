import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import { adapterFor, AGENT_NAMES } from '../../src/core/agents';
import type { StoreContext } from '../../src/core/agents/adapter';
import { claudeSlug } from '../../src/core/agents/claude';
import { UsageError } from '../../src/core/base/errors';
import { discoverConversation } from '../../src/core/sessions/conversations';
import { tempDir } from '../support/helpers';

const ID = '11111111-2222-4333-8444-555555555555';

describe('agent adapters', () => {
  it('build the spawn and resume argv each CLI documents', () => {
    const cases: Array<[string, string[], string[] | null]> = [
      ['claude', ['claude', '--dangerously-skip-permissions', '--session-id', ID], ['claude', '--dangerously-skip-permissions', '--resume', ID]],
      ['codex', ['codex', '--no-daemon', '--dangerously-bypass-approvals-and-sandbox'], ['codex', 'resume', ID, '--no-daemon', '--dangerously-bypass-approvals-and-sandbox']],
      ['gemini', ['gemini', '--yolo', '--session-id', ID], ['gemini', '--yolo', '--resume', ID]],
      ['opencode', ['opencode', '--auto'], ['opencode', '--auto', '--session', ID]],
      ['copilot', ['copilot', '--yolo', '--session-id', ID], ['copilot', '--yolo', `--resume=${ID}`]],
      ['qwen', ['qwen', '--yolo', '--session-id', ID], ['qwen', '--yolo', '--resume', ID]],
      ['hermes', ['hermes', '--yolo'], ['hermes', '--yolo', '--resume', ID]],
      ['grok', ['grok', '--always-approve', '--session-id', ID], ['grok', '--always-approve', '--resume', ID]],
      ['agy', ['agy', '--dangerously-skip-permissions'], ['agy', '--dangerously-skip-permissions', '--conversation', ID]],
    ];
    for (const [name, spawn, resume] of cases) {
      const a = adapterFor(name);
      const id = a.preassignId ? ID : null;
      assert.deepEqual(a.spawnArgv(a.program, a.defaultArgs, id), spawn, `${name} spawn`);
      assert.deepEqual(a.resumeArgv(a.program, a.defaultArgs, ID), resume, `${name} resume`);
    }
    assert.deepEqual(adapterFor('shell').spawnArgv(['npm', 'run', 'watch'], [], null), ['npm', 'run', 'watch']);
  });

  it('pre-assigns fresh UUIDs only where the CLI allows it', () => {
    const preassigning = AGENT_NAMES.filter((n) => adapterFor(n).preassignId);
    assert.deepEqual(preassigning, ['claude', 'gemini', 'copilot', 'qwen', 'grok']);
    const a = adapterFor('claude').preassignId!();
    assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(a, adapterFor('claude').preassignId!());
  });

  it('refuses an unknown agent, naming the known ones', () => {
    assert.throws(() => adapterFor('gpt'), (e: unknown) => e instanceof UsageError && /choose one of claude, codex, gemini, opencode, copilot, qwen, hermes, grok, agy, shell/.test(e.message));
  });

  it("claude's project folder name follows its own rule, long paths included", () => {
    assert.equal(claudeSlug('/tmp/agentcli/work/my proj.a_b'), '-tmp-agentcli-work-my-proj-a-b');
    const long = `/${'d'.repeat(250)}`;
    const slug = claudeSlug(long);
    assert.equal(slug.slice(0, 201), `-${'d'.repeat(199)}-`);
    assert.match(slug.slice(201), /^[0-9a-z]+$/);
  });
});

describe('conversation discovery in fixture stores', () => {
  let home: string;
  let cwd: string;
  let ctx: StoreContext;
  beforeEach(() => {
    home = tempDir('home');
    cwd = fs.realpathSync(tempDir('project'));
    ctx = { home, env: {}, program: [] };
  });
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  };
  const t = (iso: string) => new Date(iso);

  it('claude: ~/.claude/projects/<slug>/<uuid>.jsonl, id from the file name, time from the first stamped record', async () => {
    const dir = path.join(home, '.claude', 'projects', claudeSlug(cwd));
    write(path.join(dir, `${ID}.jsonl`), [
      JSON.stringify({ type: 'mode', mode: 'normal', sessionId: ID }),
      JSON.stringify({ type: 'user', message: { role: 'user', content: 'hi' }, timestamp: '2026-11-29T20:30:29.328Z', cwd, sessionId: ID }),
    ].join('\n'));
    const found = await adapterFor('claude').listConversations!(ctx, cwd);
    assert.deepEqual(found, [{ id: ID, cwd, createdAt: t('2026-11-29T20:30:29.328Z') }]);
    const plan = await adapterFor('claude').purgePlan(ctx, ID, cwd);
    assert.deepEqual(plan, { files: [path.join(dir, `${ID}.jsonl`), path.join(dir, ID)] });
  });

  it('codex: rollouts in local-time date folders, id/cwd/time from the 25 KB session_meta line', async () => {
    const rollout = (id: string, when: string, dir: string) =>
      write(
        path.join(home, '.codex', 'sessions', '2026', '11', '30', `rollout-2026-11-30T05-33-07-${id}.jsonl`),
        `${JSON.stringify({ timestamp: when, type: 'session_meta', payload: { id, session_id: id, timestamp: when, cwd: dir, base_instructions: { text: 'x'.repeat(25_000) } } })}\n{"type":"response_item"}\n`,
      );
    rollout('01a22902-0977-76c3-82fb-e283627301c0', '2026-11-29T20:32:14.962Z', cwd);
    rollout('01a22902-0977-76c3-82fb-000000000002', '2026-11-29T20:40:00.000Z', cwd);
    rollout('01a22902-0977-76c3-82fb-000000000003', '2026-11-29T20:41:00.000Z', '/some/other/project');
    const found = await adapterFor('codex').listConversations!(ctx, cwd);
    assert.deepEqual(found.map((c) => c.id), ['01a22902-0977-76c3-82fb-000000000002', '01a22902-0977-76c3-82fb-e283627301c0']);
    assert.deepEqual(await adapterFor('codex').purgePlan({ ...ctx, program: ['codex'] }, 'x', cwd), { argv: ['codex', 'delete', 'x', '--force'], cwd });
  });

  it('gemini: first line names the session and the sha256 of the project path', async () => {
    const hash = createHash('sha256').update(cwd).digest('hex');
    const chats = path.join(home, '.gemini', 'tmp', 'project', 'chats');
    write(path.join(chats, 'session-2026-11-29T20-34-34b5c43f.jsonl'), `${JSON.stringify({ sessionId: ID, projectHash: hash, startTime: '2026-11-29T20:34:56.865Z', kind: 'main' })}\n`);
    // A resume writes a second file for the same session; it is still one conversation.
    write(path.join(chats, 'session-2026-11-29T20-35-34b5c43f.jsonl'), `${JSON.stringify({ sessionId: ID, projectHash: hash, startTime: '2026-11-29T20:35:34.000Z', kind: 'main' })}\n`);
    write(path.join(chats, 'session-2026-11-29T20-36-aaaaaaaa.jsonl'), `${JSON.stringify({ sessionId: 'other', projectHash: 'f'.repeat(64), startTime: '2026-11-29T20:36:00.000Z' })}\n`);
    assert.deepEqual(await adapterFor('gemini').listConversations!(ctx, cwd), [{ id: ID, cwd, createdAt: t('2026-11-29T20:34:56.865Z') }]);
  });

  it('grok: summary.json of each session folder names its id and cwd', async () => {
    write(path.join(home, '.grok', 'sessions', encodeURIComponent(cwd), ID, 'summary.json'), JSON.stringify({ info: { id: ID, cwd }, created_at: '2026-11-29T20:39:03.679757258Z' }));
    write(path.join(home, '.grok', 'sessions', 'elsewhere', 'x', 'summary.json'), JSON.stringify({ info: { id: 'x', cwd: '/elsewhere' }, created_at: '2026-11-29T20:39:03Z' }));
    const found = await adapterFor('grok').listConversations!(ctx, cwd);
    assert.deepEqual(found.map((c) => c.id), [ID]);
  });

  it('hermes: rows of ~/.hermes/state.db', async () => {
    const SQL = await initSqlJs();
    const db = new SQL.Database();
    db.run('CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL, cwd TEXT)');
    db.run(`INSERT INTO sessions VALUES ('20261129_203000_a1b2c3', 'cli', 1795984200.5, ?), ('20261129_203100_ffffff', 'cli', 1795984260, '/x')`, [cwd]);
    write(path.join(home, '.hermes', 'state.db'), '');
    fs.writeFileSync(path.join(home, '.hermes', 'state.db'), db.export());
    const found = await adapterFor('hermes').listConversations!(ctx, cwd);
    assert.deepEqual(found.map((c) => [c.id, c.createdAt.getTime()]), [['20261129_203000_a1b2c3', 1795984200500]]);
  });

  it('opencode: rows of its database (session: directory, parent_id, time_created), a subagent\'s session left out', async () => {
    const SQL = await initSqlJs();
    const db = new SQL.Database();
    db.run('CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL, parent_id TEXT, time_created INTEGER NOT NULL)');
    db.run(`INSERT INTO session VALUES ('ses_a', ?, NULL, 1795984562530), ('ses_sub', ?, 'ses_a', 1795984562999), ('ses_b', '/x', NULL, 1)`, [cwd, cwd]);
    write(path.join(home, '.local', 'share', 'opencode', 'opencode.db'), '');
    fs.writeFileSync(path.join(home, '.local', 'share', 'opencode', 'opencode.db'), db.export());
    assert.deepEqual(await adapterFor('opencode').listConversations!(ctx, cwd), [{ id: 'ses_a', cwd, createdAt: new Date(1795984562530) }]);
    // XDG_DATA_HOME moves it; no database is no conversation.
    assert.deepEqual(await adapterFor('opencode').listConversations!({ ...ctx, env: { XDG_DATA_HOME: tempDir('xdg') } }, cwd), []);
  });

  it('copilot: session-state/<id>/events.jsonl, whose session.start names the id, cwd and start', async () => {
    const start = (id: string, dir: string, when: string) =>
      write(path.join(home, '.copilot', 'session-state', id, 'events.jsonl'), `${JSON.stringify({ type: 'session.start', data: { sessionId: id, startTime: when, context: { cwd: dir } } })}\n{"type":"user.message"}\n`);
    start(ID, cwd, '2026-12-03T04:11:54.657Z');
    start('22222222-2222-4333-8444-555555555555', '/elsewhere', '2026-12-03T04:12:00.000Z');
    assert.deepEqual(await adapterFor('copilot').listConversations!(ctx, cwd), [{ id: ID, cwd, createdAt: t('2026-12-03T04:11:54.657Z') }]);
    assert.deepEqual(await adapterFor('copilot').purgePlan(ctx, ID, cwd), { files: [path.join(home, '.copilot', 'session-state', ID)] });
  });

  it('qwen: projects/<cwd with non-alphanumerics as ->/chats/<id>.jsonl, each line naming the session and folder', async () => {
    const chats = path.join(home, '.qwen', 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats');
    write(path.join(chats, `${ID}.jsonl`), `${JSON.stringify({ uuid: 'u', sessionId: ID, timestamp: '2026-12-03T04:11:04.142Z', type: 'user', cwd })}\n`);
    write(path.join(chats, 'stray.jsonl'), `${JSON.stringify({ sessionId: 'other', timestamp: '2026-12-03T04:11:05.000Z', cwd })}\n`);
    assert.deepEqual(await adapterFor('qwen').listConversations!(ctx, cwd), [{ id: ID, cwd, createdAt: t('2026-12-03T04:11:04.142Z') }]);
    assert.deepEqual(await adapterFor('qwen').purgePlan(ctx, ID, cwd), { files: [path.join(chats, `${ID}.jsonl`)] });
    // QWEN_RUNTIME_DIR moves its runtime folder.
    assert.deepEqual(await adapterFor('qwen').listConversations!({ ...ctx, env: { QWEN_RUNTIME_DIR: tempDir('qwen') } }, cwd), []);
  });

  it('discovery takes the first conversation begun since the spawn that nobody owns, and refuses to guess', async () => {
    const dir = path.join(home, '.claude', 'projects', claudeSlug(cwd));
    const conv = (id: string, when: string) =>
      write(path.join(dir, `${id}.jsonl`), `${JSON.stringify({ type: 'user', timestamp: when, cwd, sessionId: id })}\n`);
    conv('before', '2026-11-29T10:00:00.000Z');
    conv('owned', '2026-11-29T12:00:01.000Z');
    conv('mine', '2026-11-29T12:00:02.000Z');
    conv('later', '2026-11-29T12:00:03.000Z');
    const since = t('2026-11-29T12:00:00.000Z');
    const claude = adapterFor('claude');
    assert.equal((await discoverConversation(claude, ctx, cwd, since, new Set(['owned'])))?.id, 'mine');
    assert.equal(await discoverConversation(claude, ctx, cwd, since, new Set(['owned']), { onlyIfUnique: true }), undefined);
    assert.equal((await discoverConversation(claude, ctx, cwd, since, new Set(['owned', 'mine']), { onlyIfUnique: true }))?.id, 'later');
  });
});
