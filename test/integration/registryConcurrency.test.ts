import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import initSqlJs from 'sql.js';
import { MemoryLogger } from '../../src/core/base/log';
import { parseMirror } from '../../src/core/store/registryMirror';
import { REPO_ROOT, controlPlane, tempWorkspace } from '../support/helpers';

const WRITER = path.join(REPO_ROOT, 'test/fixtures/registryWriter.ts');

function startWriter(ws: string, id: string, count: number | 'forever'): ResultPromise<{ reject: false }> {
  return execa(process.execPath, ['-r', 'esbuild-register', WRITER, ws, id, String(count)], { reject: false });
}

/** Reads the DB file directly, as a reader that takes no lock would. Throws if it is torn. */
async function readDbFile(file: string): Promise<{ revision: number; counter: number; rows: number }> {
  const SQL = await initSqlJs();
  const db = new SQL.Database(fs.readFileSync(file));
  try {
    assert.equal(db.exec('PRAGMA quick_check')[0]?.values[0]?.[0], 'ok');
    const revision = Number(db.exec(`SELECT value FROM meta WHERE key='revision'`)[0]!.values[0]![0]);
    const counter = Number(db.exec(`SELECT pid FROM sessions WHERE name='shared'`)[0]?.values[0]?.[0] ?? 0);
    const rows = Number(db.exec('SELECT count(*) FROM sessions')[0]!.values[0]![0]);
    return { revision, counter, rows };
  } finally {
    db.close();
  }
}

describe('registry under concurrent writers and crashes', function () {
  this.timeout(180_000);

  it('4 processes × 100 concurrent writes: no lost update, valid DB and YAML', async () => {
    const ws = tempWorkspace();
    const writers = ['a', 'b', 'c', 'd'].map((id) => startWriter(ws, id, 100));
    const results = await Promise.all(writers);
    for (const r of results) assert.equal(r.exitCode, 0, String(r.stderr));
    for (const r of results) assert.equal(String(r.stdout).trim().split('\n').length, 100);

    const cp = controlPlane(ws);
    const onDisk = await readDbFile(cp.paths.registryDb);
    assert.deepEqual(onDisk, { revision: 400, counter: 400, rows: 401 });
    const mirror = parseMirror(fs.readFileSync(cp.paths.registryYaml, 'utf8'));
    assert.equal(mirror.revision, 400);
    assert.equal(mirror.sessions.length, 401);
    const logger = new MemoryLogger();
    const snap = await controlPlane(ws, logger).sessions.load();
    assert.deepEqual(snap, mirror, 'DB and YAML agree');
    assert.deepEqual(logger.messages('warn'), [], 'no repair was needed');
    // Every counter value was handed out exactly once.
    const counters = snap.sessions.filter((s) => s.name !== 'shared').map((s) => Number(s.current_job!.slice('write-'.length)));
    assert.deepEqual(counters.sort((x, y) => x - y), Array.from({ length: 400 }, (_, i) => i + 1));
  });

  it('a writer killed with SIGKILL at random points, 24 times: always the old or the new state, never a torn one', async () => {
    const ws = tempWorkspace();
    const cp = controlPlane(ws);
    let confirmed = 0;
    for (let round = 0; round < 24; round++) {
      const writer = startWriter(ws, `w${round}`, 'forever');
      const wanted = 1 + (round % 3);
      let seen = 0;
      await new Promise<void>((resolve, reject) => {
        writer.stdout!.on('data', (chunk: Buffer) => {
          for (const line of chunk.toString().split('\n').filter(Boolean)) {
            confirmed = Number(line.split(' ')[1]);
            if (++seen === wanted) resolve();
          }
        });
        void writer.then((r) => reject(new Error(`writer exited: ${String(r.stderr)}`)));
      });
      // Kill somewhere inside the next write: before, inside or after the lock, between the renames.
      await new Promise((r) => setTimeout(r, Math.random() * 12));
      writer.kill('SIGKILL');
      const result = await writer;
      assert.equal(result.signal, 'SIGKILL');
      for (const line of String(result.stdout).split('\n').filter(Boolean)) confirmed = Math.max(confirmed, Number(line.split(' ')[1]));

      // Before any repair: the DB is whole and holds the last confirmed write or the one in flight.
      const onDisk = await readDbFile(cp.paths.registryDb);
      assert.ok(onDisk.counter === confirmed || onDisk.counter === confirmed + 1, `round ${round}: DB counter ${onDisk.counter}, confirmed ${confirmed}`);
      assert.equal(onDisk.revision, onDisk.counter, 'revision and contents move together');
      assert.equal(onDisk.rows, onDisk.counter + 1);
      // The YAML is whole too, at most one write behind the DB.
      const mirror = parseMirror(fs.readFileSync(cp.paths.registryYaml, 'utf8'));
      assert.ok(mirror.revision === onDisk.revision || mirror.revision === onDisk.revision - 1, `round ${round}: YAML ${mirror.revision} vs DB ${onDisk.revision}`);
      // Loading repairs any lag, and the state is the DB's.
      const snap = await cp.sessions.load();
      assert.equal(snap.revision, onDisk.revision);
      assert.equal(parseMirror(fs.readFileSync(cp.paths.registryYaml, 'utf8')).revision, onDisk.revision);
      confirmed = onDisk.counter;
    }
    assert.ok(confirmed >= 24);
  });
});
