import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { parse } from 'yaml';
import { MemoryLogger } from '../../src/core/base/log';
import { UsageError, ValidationError } from '../../src/core/base/errors';
import { validateSessionRow } from '../../src/core/store/sessionSchema';
import { SessionRegistry } from '../../src/core/store/sessionRegistry';
import { controlPlane, sessionRow, snapshotTree, tempWorkspace } from '../support/helpers';

describe('session registry', () => {
  let ws: string;
  beforeEach(() => {
    ws = tempWorkspace();
  });

  it('reads an empty registry without creating anything', async () => {
    const cp = controlPlane(ws);
    assert.deepEqual(await cp.sessions.load(), { revision: 0, sessions: [] });
    assert.equal(fs.existsSync(cp.paths.dir), false);
  });

  it('round-trips rows through the DB and the YAML mirror', async () => {
    const cp = controlPlane(ws);
    const alpha = sessionRow('alpha', { agent: 'claude', role: 'creator', conversation_id: 'c-1', pid: 4242, command: ['claude', '--session-id', 'x y'] });
    const beta = sessionRow('beta.2_x-y', { status: 'stopped', resumable: true, target: '%3' });
    await cp.sessions.mutate((tx) => {
      tx.insert(beta);
      tx.insert(alpha);
    });
    const fresh = controlPlane(ws);
    const snap = await fresh.sessions.load();
    assert.equal(snap.revision, 1);
    assert.deepEqual(snap.sessions, [alpha, beta]);
    const mirror = parse(fs.readFileSync(cp.paths.registryYaml, 'utf8')) as { revision: number; sessions: unknown[] };
    assert.equal(mirror.revision, 1);
    assert.deepEqual(mirror.sessions, [alpha, beta]);

    const updated = await fresh.sessions.mutate((tx) => tx.update('alpha', { status: 'stopped', resumable: true }));
    assert.equal(updated.status, 'stopped');
    assert.ok(updated.updated_at >= alpha.updated_at);
    assert.equal((await controlPlane(ws).sessions.get('alpha'))?.status, 'stopped');
    await fresh.sessions.mutate((tx) => tx.remove('beta.2_x-y'));
    assert.deepEqual((await fresh.sessions.list()).map((s) => s.name), ['alpha']);
    assert.equal((await fresh.sessions.load()).revision, 3);
  });

  it('refuses a duplicate name and leaves the files untouched', async () => {
    const cp = controlPlane(ws);
    await cp.sessions.mutate((tx) => tx.insert(sessionRow('dup')));
    const before = snapshotTree(cp.paths.dir);
    await assert.rejects(cp.sessions.mutate((tx) => tx.insert(sessionRow('dup'))), (e: unknown) => e instanceof UsageError && e.message === "session 'dup' already exists");
    delete before['locks/'];
    const after = snapshotTree(cp.paths.dir);
    delete after['locks/'];
    assert.deepEqual(after, before);
  });

  it('validates every row and names the field that is wrong', async () => {
    const cp = controlPlane(ws);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'a/b' }, /session 'a\/b': name is invalid: .*contains '\/'/],
      [{ name: 'x'.repeat(65) }, /name is invalid: name is 65 characters long; the limit is 64/],
      [{ name: 'semi;colon' }, /contains ';'/],
      [{ role: 'boss' }, /role must be one of orchestrator, planner, developer, creator, reviewer, worker \(got 'boss'\)/],
      [{ status: 'zombie' }, /status must be one of/],
      [{ cwd: 'relative/dir' }, /cwd must be an absolute path/],
      [{ pid: -3 }, /pid must be a positive integer or null/],
      [{ resumable: 'yes' }, /resumable must be true or false/],
      [{ created_at: 'yesterday' }, /created_at must be an ISO-8601 UTC time/],
      [{ command: [] }, /command must be a non-empty list of strings/],
      [{ extra: 1 }, /extra is not a session field/],
    ];
    for (const [patch, message] of cases) {
      const row = { ...sessionRow('ok'), ...patch };
      assert.throws(() => validateSessionRow(row, 'test'), (e: unknown) => e instanceof ValidationError && message.test(e.message), `expected ${message}`);
      await assert.rejects(cp.sessions.mutate((tx) => tx.insert(row as never)), message);
    }
    assert.equal(fs.existsSync(cp.paths.registryDb), false, 'no write happened');
  });

  it('rolls back everything a failing change did', async () => {
    const cp = controlPlane(ws);
    await cp.sessions.mutate((tx) => tx.insert(sessionRow('keep')));
    await assert.rejects(
      cp.sessions.mutate((tx) => {
        tx.insert(sessionRow('new-one'));
        tx.update('keep', { status: 'failed' });
        throw new Error('change failed midway');
      }),
      /change failed midway/,
    );
    const snap = await controlPlane(ws).sessions.load();
    assert.equal(snap.revision, 1);
    assert.deepEqual(snap.sessions.map((s) => [s.name, s.status]), [['keep', 'running']]);
  });

  it('a reader that read before sees another process\'s write, a hand-edited mirror and a torn DB; what it changes in its copy is not read back', async () => {
    const logger = new MemoryLogger();
    const reader = controlPlane(ws, logger);
    const writer = controlPlane(ws);
    await writer.sessions.mutate((tx) => tx.insert(sessionRow('a', { command: ['x'] })));
    const first = await reader.sessions.list();
    assert.equal(first[0]?.status, 'running');
    first[0]!.status = 'failed';
    first[0]!.command!.push('y');
    assert.deepEqual((await reader.sessions.list()).map((s) => [s.status, s.command]), [['running', ['x']]]);

    await writer.sessions.mutate((tx) => tx.update('a', { status: 'stopped' }));
    assert.equal((await reader.sessions.get('a'))?.status, 'stopped');

    const yaml = fs.readFileSync(reader.paths.registryYaml, 'utf8');
    fs.writeFileSync(reader.paths.registryYaml, yaml.replace('status: stopped', 'status: failed'));
    assert.equal((await reader.sessions.get('a'))?.status, 'stopped');
    assert.equal(fs.readFileSync(reader.paths.registryYaml, 'utf8'), yaml);
    assert.match(logger.messages('warn').join('\n'), /disagreed .* the DB wins/);

    const torn = fs.readFileSync(reader.paths.registryDb);
    torn.fill(0x41, 100, 4000);
    fs.writeFileSync(reader.paths.registryDb, torn);
    assert.equal((await reader.sessions.get('a'))?.status, 'stopped');
    assert.match(logger.messages('warn').join('\n'), /agent-sessions\.db was corrupt/);
  });

  it('update of an unknown session is a usage error', async () => {
    const cp = controlPlane(ws);
    await assert.rejects(cp.sessions.mutate((tx) => tx.update('ghost', { status: 'stopped' })), /unknown session 'ghost'/);
  });

  it('warns once when .mam/ is on a network filesystem', async () => {
    const logger = new MemoryLogger();
    const mountTable = `/dev/vda / ext4 rw 0 0\nserver:/export ${ws} nfs4 rw 0 0\n`;
    const cp = controlPlane(ws);
    const registry = new SessionRegistry(cp.paths, { logger, mountTable });
    await registry.mutate((tx) => tx.insert(sessionRow('a')));
    await registry.mutate((tx) => tx.insert(sessionRow('b')));
    const warnings = logger.messages('warn').filter((m) => m.includes('network filesystem'));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /\(nfs4\)/);
  });
});
