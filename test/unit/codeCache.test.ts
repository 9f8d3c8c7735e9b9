import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../support/helpers';

/** Loads `file` through requireWithCodeCache in a process of its own (the cache is written at its exit). */
function load(file: string, env: NodeJS.ProcessEnv = process.env): unknown {
  const codeCache = path.resolve(__dirname, '../../src/cli/codeCache.ts');
  const script = `process.stdout.write(JSON.stringify(require(${JSON.stringify(codeCache)}).requireWithCodeCache(${JSON.stringify(file)})))`;
  const r = spawnSync(process.execPath, ['-r', 'esbuild-register', '-e', script], { encoding: 'utf8', cwd: path.resolve(__dirname, '../..'), env });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const caches = (dir: string): string[] => fs.readdirSync(dir).filter((f) => f.endsWith('.v8cache'));

describe('the code cache of a bundle (codeCache.ts)', () => {
  it('runs the bundle as a CommonJS module, writes its cache at exit and runs the same from it', () => {
    const dir = tempDir();
    const file = path.join(dir, 'bundle.js');
    fs.writeFileSync(file, 'module.exports = { n: 1, dir: __dirname, file: __filename, fs: typeof require("node:fs").readFileSync, self: this === module.exports };\n');
    const first = load(file);
    assert.deepEqual(first, { n: 1, dir, file, fs: 'function', self: true });
    assert.equal(caches(dir).length, 1);
    const cache = caches(dir)[0]!;
    assert.deepEqual(load(file), first);
    assert.deepEqual(caches(dir), [cache]);
  });

  it('never runs the code of an older build: a bundle rewritten with the same length runs its new code, and the old cache goes', () => {
    const dir = tempDir();
    const file = path.join(dir, 'bundle.js');
    fs.writeFileSync(file, 'module.exports = { n: 1 };\n');
    assert.deepEqual(load(file), { n: 1 });
    const old = caches(dir);
    assert.equal(old.length, 1);
    // Same length, same inode (rewritten in place, as esbuild does): V8 alone would take the old cache.
    fs.writeFileSync(file, 'module.exports = { n: 2 };\n');
    assert.deepEqual(load(file), { n: 2 });
    assert.equal(caches(dir).length, 1);
    assert.notEqual(caches(dir)[0], old[0]);
  });

  it('a process started with other Node options keeps a cache of its own, beside the first, instead of rewriting one by turns', () => {
    const dir = tempDir();
    const file = path.join(dir, 'bundle.js');
    fs.writeFileSync(file, 'module.exports = { n: 3 };\n');
    assert.deepEqual(load(file), { n: 3 });
    const [plain] = caches(dir);
    assert.deepEqual(load(file, { ...process.env, NODE_OPTIONS: '--max-old-space-size=200' }), { n: 3 });
    assert.equal(caches(dir).length, 2);
    assert.ok(caches(dir).includes(plain!));
    const stamp = fs.statSync(path.join(dir, plain!)).mtimeMs;
    assert.deepEqual(load(file), { n: 3 });
    assert.equal(fs.statSync(path.join(dir, plain!)).mtimeMs, stamp);
  });
});
