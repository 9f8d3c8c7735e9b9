import * as fs from 'node:fs';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import type { SqlJsStatic } from 'sql.js';

let loading: Promise<SqlJsStatic> | undefined;

/** Loads sql.js (SQLite compiled to WebAssembly) once per process. */
export function loadSqlJs(): Promise<SqlJsStatic> {
  // sql.js asks for an ArrayBuffer; a Buffer read from disk is a view into a shared pool, so copy it out.
  loading ??= initSqlJs({ wasmBinary: new Uint8Array(readWasm()).buffer });
  return loading;
}

function readWasm(): Uint8Array {
  // Bundled: dist/sql-wasm.wasm beside dist/*.js. From sources (tests): the package's own copy.
  const candidates = [path.join(__dirname, 'sql-wasm.wasm')];
  try {
    candidates.push(require.resolve('sql.js/dist/sql-wasm.wasm'));
  } catch {
    // not installed beside us: only the bundled copy can work
  }
  for (const file of candidates) {
    if (fs.existsSync(file)) return fs.readFileSync(file);
  }
  throw new Error(`sql-wasm.wasm not found (looked in ${candidates.join(', ')}); reinstall or rebuild MAM`);
}
