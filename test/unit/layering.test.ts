import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The core's folders form layers, lowest first; an import may go to its own folder or a lower
 * one, never back up. The root files (workspaceEngine.ts, recovery.ts, doctor.ts) compose the rest.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['base'],
  ['store'],
  ['mux'],
  ['agents'],
  ['config'],
  ['messaging'],
  ['worktree'],
  ['sessions'],
  ['usage'],
  ['jobs'],
  ['loop', 'remote'],
  ['overlap', 'merge'],
  ['plan'],
  ['init', 'demo'],
  ['.'],
];

const CORE = path.resolve(__dirname, '../../src/core');

function rankOf(folder: string): number {
  const rank = LAYERS.findIndex((layer) => layer.includes(folder));
  if (rank < 0) throw new Error(`src/core/${folder} is in no layer: add it to LAYERS in test/unit/layering.test.ts`);
  return rank;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

function isModule(target: string): boolean {
  return fs.existsSync(`${target}.ts`) || fs.existsSync(path.join(target, 'index.ts'));
}

interface Edge {
  file: string;
  from: string;
  to: string;
}

/** Every relative import (static, type-only or dynamic) between two core folders. */
export function coreImports(): Edge[] {
  const edges: Edge[] = [];
  const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const file of sourceFiles(CORE)) {
    const from = path.dirname(path.relative(CORE, file));
    for (const m of fs.readFileSync(file, 'utf8').matchAll(specifier)) {
      const target = path.resolve(path.dirname(file), m[1]!);
      const rel = path.relative(CORE, target);
      if (rel.startsWith('..')) continue; // outside src/core: checked below
      if (!isModule(target)) continue; // text that only looks like an import, e.g. a file a demo writes
      const to = fs.existsSync(`${target}.ts`) ? path.dirname(rel) : rel; // `../agents` is agents/index.ts
      if (to !== from) edges.push({ file: path.relative(CORE, file), from, to });
    }
  }
  return edges;
}

describe('the import graph of src/core', () => {
  it('has no arrow running back up between core folders', () => {
    const upward = coreImports()
      .filter((e) => rankOf(e.to) > rankOf(e.from))
      .map((e) => `${e.file} imports ${e.to}/ (${e.from}/ is below ${e.to}/)`);
    assert.deepEqual(upward, []);
  });

  it('never reaches out of src/core or into vscode', () => {
    const bad: string[] = [];
    for (const file of sourceFiles(CORE)) {
      const text = fs.readFileSync(file, 'utf8');
      if (/from\s+['"]vscode['"]|require\(['"]vscode['"]\)/.test(text)) bad.push(`${path.relative(CORE, file)} imports vscode`);
      for (const m of text.matchAll(/(?:from\s*|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
        const target = path.resolve(path.dirname(file), m[1]!);
        if (path.relative(CORE, target).startsWith('..') && isModule(target)) bad.push(`${path.relative(CORE, file)} imports ${m[1]}`);
      }
    }
    assert.deepEqual(bad, []);
  });

  it('would see an arrow running back up', () => {
    // The check itself: jobs/ sits below loop/, so an import from jobs/ into loop/ is upward.
    assert.ok(rankOf('loop') > rankOf('jobs'));
    assert.ok(rankOf('jobs') > rankOf('store'));
    assert.ok(coreImports().some((e) => e.from === 'loop' && e.to === 'jobs'), 'the scan finds the loop → jobs imports that exist');
  });
});
