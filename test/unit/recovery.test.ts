import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryLogger } from '../../src/core/base/log';
import { CorruptStoreError } from '../../src/core/base/errors';
import { controlPlane, sessionRow, snapshotTree, tempWorkspace } from '../support/helpers';

describe('registry recovery', () => {
  let ws: string;
  beforeEach(async () => {
    ws = tempWorkspace();
    await controlPlane(ws).sessions.mutate((tx) => {
      tx.insert(sessionRow('one'));
      tx.insert(sessionRow('two', { role: 'reviewer' }));
    });
  });

  it('a YAML mirror that disagrees with the DB is rewritten from the DB', async () => {
    const logger = new MemoryLogger();
    const cp = controlPlane(ws, logger);
    const yaml = fs.readFileSync(cp.paths.registryYaml, 'utf8');
    fs.writeFileSync(cp.paths.registryYaml, yaml.replace('role: reviewer', 'role: planner'));
    const snap = await cp.sessions.load();
    assert.equal(snap.sessions.find((s) => s.name === 'two')?.role, 'reviewer');
    assert.equal(fs.readFileSync(cp.paths.registryYaml, 'utf8'), yaml);
    assert.match(logger.messages('warn').join('\n'), /disagreed .* the DB wins/);
  });

  it('a corrupt YAML mirror is rewritten from the DB', async () => {
    const logger = new MemoryLogger();
    const cp = controlPlane(ws, logger);
    const yaml = fs.readFileSync(cp.paths.registryYaml, 'utf8');
    fs.writeFileSync(cp.paths.registryYaml, 'sessions: [unclosed\n  - : :');
    assert.equal((await cp.sessions.list()).length, 2);
    assert.equal(fs.readFileSync(cp.paths.registryYaml, 'utf8'), yaml);
    assert.match(logger.messages('warn').join('\n'), /agent-sessions\.yaml was unreadable/);
  });

  it('a corrupt DB is kept aside and rebuilt from the YAML, with a clear warning', async () => {
    const logger = new MemoryLogger();
    const cp = controlPlane(ws, logger);
    const good = fs.readFileSync(cp.paths.registryDb);
    const torn = Buffer.from(good);
    torn.fill(0x41, 100, 4000);
    fs.writeFileSync(cp.paths.registryDb, torn);
    const snap = await cp.sessions.load();
    assert.deepEqual(snap.sessions.map((s) => s.name), ['one', 'two']);
    assert.equal(snap.revision, 1);
    const aside = fs.readdirSync(cp.paths.dir).filter((n) => n.startsWith('agent-sessions.db.corrupt-'));
    assert.equal(aside.length, 1);
    assert.deepEqual(fs.readFileSync(path.join(cp.paths.dir, aside[0]!)), torn);
    assert.match(logger.messages('warn').join('\n'), /agent-sessions\.db was corrupt .*kept it as .*corrupt-.* rebuilt the registry from agent-sessions\.yaml/);
    // The rebuilt DB is a good one: it loads without any further repair.
    const again = new MemoryLogger();
    assert.equal((await controlPlane(ws, again).sessions.list()).length, 2);
    assert.deepEqual(again.messages('warn'), []);
  });

  it('a file that is not SQLite at all counts as corrupt too', async () => {
    const cp = controlPlane(ws);
    fs.writeFileSync(cp.paths.registryDb, 'hello, not a database');
    assert.equal((await cp.sessions.list()).length, 2);
  });

  it('a missing DB is rebuilt from the YAML', async () => {
    const cp = controlPlane(ws);
    fs.rmSync(cp.paths.registryDb);
    assert.equal((await cp.sessions.list()).length, 2);
    assert.ok(fs.existsSync(cp.paths.registryDb));
  });

  it('a corrupt DB with no usable YAML is an error that changes nothing', async () => {
    const cp = controlPlane(ws);
    fs.writeFileSync(cp.paths.registryDb, 'garbage');
    fs.writeFileSync(cp.paths.registryYaml, 'revision: nope');
    const before = snapshotTree(cp.paths.dir);
    await assert.rejects(cp.sessions.load(), (e: unknown) => e instanceof CorruptStoreError && /agent-sessions\.db is corrupt .* and agent-sessions\.yaml is unreadable too .*move .* aside/.test(e.message));
    await assert.rejects(cp.sessions.mutate((tx) => tx.insert(sessionRow('three'))), CorruptStoreError);
    const after = snapshotTree(cp.paths.dir);
    delete before['locks/'];
    delete after['locks/'];
    assert.deepEqual(after, before);
  });
});
