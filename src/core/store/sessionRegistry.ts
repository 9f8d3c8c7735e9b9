import * as fs from 'node:fs';
import { createHash } from 'node:crypto';
import type { Database, SqlValue } from 'sql.js';
import { CorruptStoreError, UsageError, errorMessage } from '../base/errors';
import type { Logger } from '../base/log';
import { removeStrayTemps, writeFileAtomic, readIfExists } from './atomicFile';
import { withLock } from './lock';
import { networkFsTypeOf } from './mounts';
import type { ControlPlanePaths } from './paths';
import { SESSION_FIELDS, validateSessionRow, type SessionRow } from './sessionSchema';
import { loadSqlJs } from './sqlite';
import { parseMirror, renderMirror, type RegistrySnapshot } from './registryMirror';

export type { RegistrySnapshot } from './registryMirror';

/** The changes a write may make, applied inside one SQLite transaction. */
export interface RegistryTransaction {
  get(name: string): SessionRow | undefined;
  list(): SessionRow[];
  /** Adds a session; a session of the same name is refused. */
  insert(row: SessionRow): void;
  /** Changes fields of a session and stamps `updated_at`; returns the new row. */
  update(name: string, patch: Partial<Omit<SessionRow, 'name' | 'created_at'>>): SessionRow;
  remove(name: string): void;
}

export interface RegistryOptions {
  logger: Logger;
  lockTimeoutMs?: number;
  /** The mount table to judge the filesystem by (tests); default: read /proc/self/mounts. */
  mountTable?: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
  name TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64 AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
  agent TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('orchestrator','planner','developer','creator','reviewer','worker')),
  mux TEXT NOT NULL CHECK (mux IN ('tmux','herdr')),
  server TEXT NOT NULL,
  target TEXT,
  cwd TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('starting','running','stopped','terminated','failed')),
  resumable INTEGER NOT NULL CHECK (resumable IN (0,1)),
  conversation_id TEXT,
  pid INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  current_job TEXT,
  command TEXT
);`;

/** The DB as read from disk. `mirrorSha` is the hash of the YAML the DB's last writer rendered. */
type DbState =
  | { kind: 'missing' }
  | { kind: 'ok'; db: Database; snapshot: RegistrySnapshot; mirrorSha: string | undefined }
  | { kind: 'corrupt'; why: string };

type YamlState = { kind: 'missing' } | { kind: 'ok'; snapshot: RegistrySnapshot } | { kind: 'corrupt'; why: string };

/**
 * The session registry: SQLite (sql.js) as the source of truth, `agent-sessions.yaml` as its
 * human-readable mirror. Reads take no lock (every file is replaced by rename, so a reader sees a
 * whole file); every change goes through `mutate`, the one write path (SPEC §3).
 *
 * The DB records the SHA-256 of the mirror it goes with, so a reader knows the two agree without
 * parsing the YAML; only when they differ is the YAML read, and then the DB wins.
 */
export class SessionRegistry {
  private warnedNetworkFs = false;
  /**
   * The last snapshot read, with the DB's bytes and its mirror's hash: the same bytes again give
   * the same snapshot, without opening SQLite, checking and validating every row once more (a
   * status and every monitor tick read the registry; most reads find it unchanged).
   */
  private lastRead: { db: Buffer; mirrorSha: string; snapshot: RegistrySnapshot } | undefined;

  constructor(
    private readonly paths: ControlPlanePaths,
    private readonly options: RegistryOptions,
  ) {}

  /** The current registry, repairing a disagreeing mirror or a corrupt DB on the way (under the lock). */
  async load(): Promise<RegistrySnapshot> {
    const bytes = readIfExists(this.paths.registryDb);
    const last = this.lastRead;
    if (bytes !== undefined && last && bytes.equals(last.db) && last.mirrorSha === sha256(readIfExists(this.paths.registryYaml))) return structuredClone(last.snapshot);
    // The bytes read above, not a second read: a DB created in between is seen by the next load.
    const state: DbState = bytes === undefined ? { kind: 'missing' } : await this.readDb(bytes);
    if (state.kind === 'ok') {
      state.db.close();
      if (state.mirrorSha !== undefined && state.mirrorSha === sha256(readIfExists(this.paths.registryYaml))) {
        this.lastRead = { db: bytes!, mirrorSha: state.mirrorSha, snapshot: structuredClone(state.snapshot) };
        return state.snapshot;
      }
    } else if (state.kind === 'missing' && !fs.existsSync(this.paths.registryYaml)) {
      return { revision: 0, sessions: [] };
    }
    return this.withRegistryLock(async () => {
      const { db, snapshot } = await this.loadForWrite();
      db.close();
      return snapshot;
    });
  }

  async list(): Promise<SessionRow[]> {
    return (await this.load()).sessions;
  }

  async get(name: string): Promise<SessionRow | undefined> {
    return (await this.load()).sessions.find((s) => s.name === name);
  }

  /**
   * The one write path: lock → load → apply `change` in a transaction → validate → write the DB
   * atomically → rewrite the YAML mirror atomically → unlock. If `change` throws or the result
   * fails validation, nothing is written.
   */
  async mutate<T>(change: (tx: RegistryTransaction) => T): Promise<T> {
    this.paths.ensureDir();
    fs.mkdirSync(this.paths.locksDir, { recursive: true });
    return this.withRegistryLock(async () => {
      const { db } = await this.loadForWrite();
      try {
        db.run('BEGIN');
        let result: T;
        let mirror: string;
        try {
          const tx = transactionOn(db);
          result = change(tx);
          if (!tx.changed) {
            // Nothing to write: no new revision, no file touched (watchers stay quiet).
            db.run('ROLLBACK');
            return result;
          }
          db.run(`UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'revision'`);
          mirror = stampMirror(db);
          db.run('COMMIT');
        } catch (err) {
          db.run('ROLLBACK');
          throw err;
        }
        this.writeFiles(db, mirror);
        return result;
      } finally {
        db.close();
      }
    });
  }

  private async withRegistryLock<T>(fn: () => Promise<T>): Promise<T> {
    this.warnIfNetworkFs();
    return withLock(this.paths.lock('registry'), fn, {
      what: 'the session registry',
      logger: this.options.logger,
      timeoutMs: this.options.lockTimeoutMs,
    });
  }

  /** Under the lock: the registry as an open DB, repaired from or into the mirror where needed. */
  private async loadForWrite(): Promise<{ db: Database; snapshot: RegistrySnapshot }> {
    removeStrayTemps(this.paths.registryDb);
    removeStrayTemps(this.paths.registryYaml);
    const state = await this.readDb();

    if (state.kind === 'ok') {
      const yamlBytes = readIfExists(this.paths.registryYaml);
      if (state.mirrorSha === undefined || state.mirrorSha !== sha256(yamlBytes)) {
        const yaml = this.parseYaml(yamlBytes);
        if (yaml.kind === 'corrupt') this.options.logger.warn(`agent-sessions.yaml was unreadable (${yaml.why}); rewrote it from agent-sessions.db`);
        else if (yaml.kind === 'ok' && !sameSnapshot(yaml.snapshot, state.snapshot)) {
          this.options.logger.warn('agent-sessions.yaml disagreed with agent-sessions.db; the DB wins, rewrote the YAML');
        }
        // Also reached after a crash between the two renames of a write: the YAML is one step behind.
        const mirror = stampMirror(state.db);
        this.writeFiles(state.db, mirror);
      }
      return { db: state.db, snapshot: state.snapshot };
    }

    const yaml = this.parseYaml(readIfExists(this.paths.registryYaml));
    if (state.kind === 'corrupt' && yaml.kind !== 'ok') {
      const mirror = yaml.kind === 'missing' ? 'there is no agent-sessions.yaml' : `agent-sessions.yaml is unreadable too (${yaml.why})`;
      throw new CorruptStoreError(
        `agent-sessions.db is corrupt (${state.why}) and ${mirror}; move ${this.paths.registryDb} aside to start an empty registry`,
      );
    }
    const snapshot = yaml.kind === 'ok' ? yaml.snapshot : { revision: 0, sessions: [] };
    if (state.kind === 'corrupt') {
      const aside = `${this.paths.registryDb}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      fs.renameSync(this.paths.registryDb, aside);
      this.options.logger.warn(`agent-sessions.db was corrupt (${state.why}); kept it as ${aside} and rebuilt the registry from agent-sessions.yaml`);
    } else if (yaml.kind === 'ok') {
      this.options.logger.info('agent-sessions.db was missing; rebuilt it from agent-sessions.yaml');
    }
    const SQL = await loadSqlJs();
    const db = new SQL.Database();
    db.run(SCHEMA);
    db.run(`INSERT INTO meta (key, value) VALUES ('schema', '1'), ('revision', ?), ('mirror_sha256', '')`, [String(snapshot.revision)]);
    for (const row of snapshot.sessions) insertRow(db, row);
    if (yaml.kind === 'ok') this.writeFiles(db, stampMirror(db));
    return { db, snapshot };
  }

  /** Opens the DB file and checks it: integrity, revision, and every row against the schema. */
  private async readDb(bytes = readIfExists(this.paths.registryDb)): Promise<DbState> {
    if (bytes === undefined) return { kind: 'missing' };
    const SQL = await loadSqlJs();
    let db: Database | undefined;
    try {
      db = new SQL.Database(bytes);
      const verdict = db.exec('PRAGMA quick_check')[0]?.values[0]?.[0];
      if (verdict !== 'ok') throw new Error(`integrity check: ${String(verdict)}`);
      const revision = Number(metaValue(db, 'revision') ?? NaN);
      if (!Number.isInteger(revision) || revision < 0) throw new Error('it has no revision');
      const sessions = selectRows(db);
      return { kind: 'ok', db, snapshot: { revision, sessions }, mirrorSha: metaValue(db, 'mirror_sha256') || undefined };
    } catch (err) {
      db?.close();
      return { kind: 'corrupt', why: errorMessage(err) };
    }
  }

  private parseYaml(bytes: Buffer | undefined): YamlState {
    if (bytes === undefined) return { kind: 'missing' };
    try {
      return { kind: 'ok', snapshot: parseMirror(bytes.toString('utf8')) };
    } catch (err) {
      return { kind: 'corrupt', why: errorMessage(err) };
    }
  }

  /** DB first, then its mirror: a crash between the two leaves a DB that knows its mirror is stale. */
  private writeFiles(db: Database, mirror: string): void {
    writeFileAtomic(this.paths.registryDb, db.export());
    writeFileAtomic(this.paths.registryYaml, mirror);
  }

  private warnIfNetworkFs(): void {
    if (this.warnedNetworkFs) return;
    this.warnedNetworkFs = true;
    const fsType = networkFsTypeOf(this.paths.dir, this.options.mountTable);
    if (fsType) {
      this.options.logger.warn(
        `.mam/ is on a network filesystem (${fsType}); MAM uses directory locks that work there, but keep one host writing at a time for best results`,
      );
    }
  }
}

/**
 * Validates every row, renders the mirror for the DB's current contents and records its hash in
 * the DB. Returns the mirror text to write after the DB.
 */
function stampMirror(db: Database): string {
  const sessions = selectRows(db);
  const revision = Number(metaValue(db, 'revision'));
  const mirror = renderMirror({ revision, sessions });
  db.run(`INSERT INTO meta (key, value) VALUES ('mirror_sha256', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, [sha256(Buffer.from(mirror))]);
  return mirror;
}

function metaValue(db: Database, key: string): string | undefined {
  const value = db.exec('SELECT value FROM meta WHERE key = ?', [key])[0]?.values[0]?.[0];
  return value === undefined || value === null ? undefined : String(value);
}

function sha256(bytes: Buffer | Uint8Array | undefined): string {
  return bytes === undefined ? '' : createHash('sha256').update(bytes).digest('hex');
}

function transactionOn(db: Database): RegistryTransaction & { changed: boolean } {
  const get = (name: string): SessionRow | undefined => selectRows(db, name)[0];
  const tx = {
    changed: false,
    get,
    list: () => selectRows(db),
    insert(row: SessionRow) {
      if (get(row.name)) throw new UsageError(`session '${row.name}' already exists`, 'duplicate_session');
      insertRow(db, validateSessionRow(row, 'new session'));
      tx.changed = true;
    },
    update(name: string, patch: Partial<SessionRow>) {
      const current = get(name);
      if (!current) throw new UsageError(`unknown session '${name}'`, 'unknown_session');
      const next = validateSessionRow({ ...current, ...patch, name, updated_at: new Date().toISOString() }, `session '${name}'`);
      db.run('DELETE FROM sessions WHERE name = ?', [name]);
      insertRow(db, next);
      tx.changed = true;
      return next;
    },
    remove(name: string) {
      db.run('DELETE FROM sessions WHERE name = ?', [name]);
      if (db.getRowsModified() > 0) tx.changed = true;
    },
  };
  return tx;
}

function insertRow(db: Database, row: SessionRow): void {
  // SQLite has no booleans (resumable: 0 or 1) and no lists (command: JSON text).
  const values = SESSION_FIELDS.map((field): SqlValue => {
    const v = row[field];
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (Array.isArray(v)) return JSON.stringify(v);
    return v;
  });
  db.run(`INSERT INTO sessions (${SESSION_FIELDS.join(', ')}) VALUES (${SESSION_FIELDS.map(() => '?').join(', ')})`, values);
}

/** The rows, each read back through the session schema (a DB edited by hand is named, never trusted). */
function selectRows(db: Database, name?: string): SessionRow[] {
  const stmt = db.prepare(`SELECT ${SESSION_FIELDS.join(', ')} FROM sessions ${name === undefined ? '' : 'WHERE name = ?'} ORDER BY name`);
  try {
    if (name !== undefined) stmt.bind([name]);
    const rows: SessionRow[] = [];
    while (stmt.step()) {
      const raw = stmt.getAsObject();
      const row = { ...raw, resumable: raw.resumable === 1, command: raw.command === null ? null : JSON.parse(String(raw.command)) };
      rows.push(validateSessionRow(row, 'agent-sessions.db'));
    }
    return rows;
  } finally {
    stmt.free();
  }
}

function sameSnapshot(a: RegistrySnapshot, b: RegistrySnapshot): boolean {
  return a.revision === b.revision && JSON.stringify(a.sessions) === JSON.stringify(b.sessions);
}
