/**
 * Loads a CommonJS bundle of ours with V8's code cache (what v8-compile-cache does; Node 20 has no
 * `module.enableCompileCache`): the bytecode V8 compiled for it in an earlier process, kept beside
 * the bundle, so a short process does not parse and compile the same functions again. Used for
 * dist/cli-event.js, which agents start once per event.
 *
 * The cache file's name carries what V8 itself does not check (it checks its own version and
 * flags, and the source's length only): the bundle's size, mtime and inode, so a rebuilt or
 * reinstalled bundle never runs an old bundle's code; and Node's version and options, so processes
 * started with other flags (which V8 would refuse the cache of) keep a cache of their own instead of
 * rewriting one by turns. The first process after a build writes it at exit (atomically: a temp
 * file renamed into place), and removes the caches of older builds; where the bundle's folder is
 * not writable (a read-only install) nothing is written and every process compiles as before.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';

const SUFFIX = '.v8cache';

/**
 * `file` as a CommonJS module, compiled with its cache. Its `require` is `own` — the caller's, when
 * the caller's module is in the same folder, which resolves alike and spares loading node:module
 * (~0.4 ms of a cold `mam event`) — or one made for it.
 */
export function requireWithCodeCache(file: string, own?: NodeJS.Require): unknown {
  const stat = fs.statSync(file, { bigint: true });
  const build = [stat.size, stat.mtimeNs, stat.ino].join('-');
  const runtime = `${process.version}-${process.arch}-${fnv1a([...process.execArgv, process.env.NODE_OPTIONS ?? ''].join('\0'))}`;
  const cacheFile = `${file}.${build}.${runtime}${SUFFIX}`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    // none yet (or unreadable): compile from source
  }
  // Module.wrap's text, so that line and column numbers in stack traces stay the bundle's.
  const source = `(function (exports, require, module, __filename, __dirname) { ${fs.readFileSync(file, 'utf8')}\n});`;
  const script = new vm.Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) });
  if (!cachedData || script.cachedDataRejected) process.once('exit', () => writeCache(script, file, build, cacheFile));
  const mod: { exports: unknown } = { exports: {} };
  const run: unknown = script.runInThisContext();
  if (typeof run !== 'function') throw new Error(`${file} did not compile to a module`);
  const req = own ?? (require('node:module') as typeof import('node:module')).createRequire(file);
  run.call(mod.exports, mod.exports, req, mod, file, path.dirname(file));
  return mod.exports;
}

/** At exit, so that the cache holds every function this process compiled, not only the top level. */
function writeCache(script: vm.Script, file: string, build: string, cacheFile: string): void {
  const dir = path.dirname(file);
  const temp = `${cacheFile}.${process.pid}.tmp`;
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    fs.writeFileSync(temp, script.createCachedData());
    fs.renameSync(temp, cacheFile);
    // Older builds' caches go; this build's for other Node versions or options stay.
    const base = `${path.basename(file)}.`;
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith(base) && name.endsWith(SUFFIX) && !name.startsWith(`${base}${build}.`)) fs.rmSync(path.join(dir, name), { force: true });
    }
  } catch {
    // A read-only install, a full disk: the next process compiles from source, as without a cache.
    fs.rmSync(temp, { force: true });
  }
}

/** FNV-1a, 32 bits: a name for Node's options among the caches beside the bundle (not a secret; node:crypto costs ~3.5 ms to load). */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}
