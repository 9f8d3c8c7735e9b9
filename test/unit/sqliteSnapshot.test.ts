import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openSnapshot } from '../../src/core/agents/sqliteSnapshot';
import { snapshotTree, tempDir } from '../support/helpers';

/**
 * A database in WAL mode whose main file holds an empty table `t` and whose write-ahead log holds
 * three commits of one row each (made with Python's sqlite3, the log never checkpointed; 1 KB pages).
 */
const FIXTURE = path.join(__dirname, '../fixtures/sqlite-wal/three-rows.db');
const FRAME = 24 + 1024;

describe('a snapshot of a SQLite database in WAL mode (another program\'s store)', () => {
  function copy(changeWal?: (wal: Buffer) => Buffer | undefined): string {
    const dir = tempDir('wal');
    const db = path.join(dir, 'store.db');
    fs.copyFileSync(FIXTURE, db);
    const wal = changeWal ? changeWal(fs.readFileSync(`${FIXTURE}-wal`)) : fs.readFileSync(`${FIXTURE}-wal`);
    if (wal) fs.writeFileSync(`${db}-wal`, wal);
    return db;
  }
  async function rows(db: string): Promise<string[]> {
    const snapshot = await openSnapshot(db);
    assert.ok(snapshot, 'it opens');
    try {
      return (snapshot.exec('SELECT v FROM t ORDER BY id')[0]?.values ?? []).map((r) => String(r[0]));
    } finally {
      snapshot.close();
    }
  }

  it('reads the rows committed in the log, which the main file alone does not hold, and writes nothing', async () => {
    const db = copy();
    const before = snapshotTree(path.dirname(db));
    assert.deepEqual(await rows(db), ['row0', 'row1', 'row2']);
    assert.deepEqual(await rows(copy(() => undefined)), [], 'the main file alone has none');
    assert.deepEqual(snapshotTree(path.dirname(db)), before);
  });

  it('stops at the last whole commit: a frame being written, or one whose checksum fails, is not read', async () => {
    assert.deepEqual(await rows(copy((wal) => wal.subarray(0, wal.length - 10))), ['row0', 'row1'], 'a torn last frame');
    const flipped = (wal: Buffer) => {
      const out = Buffer.from(wal);
      out[32 + 2 * FRAME + 24 + 500]! ^= 0xff; // a byte of the third frame's page
      return out;
    };
    assert.deepEqual(await rows(copy(flipped)), ['row0', 'row1'], 'a page that does not match its checksum');
  });

  it('ignores a log whose header does not hold (another salt, a broken checksum) and a file that is no database', async () => {
    const salted = (wal: Buffer) => {
      const out = Buffer.from(wal);
      out[16]! ^= 0x01; // salt-1: the header's checksum no longer holds either
      return out;
    };
    assert.deepEqual(await rows(copy(salted)), []);
    const junk = path.join(tempDir('wal'), 'junk.db');
    fs.writeFileSync(junk, 'not a database at all, just text that is long enough to have a header');
    assert.equal(await openSnapshot(junk), undefined);
    assert.equal(await openSnapshot(path.join(tempDir('wal'), 'missing.db')), undefined);
  });
});
