import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * No two files of src/core import each other in a circle that a value import is part of (a type
 * import is erased; two files naming each other's types only is no circle at run time). The
 * composition root (core.ts) wires what would otherwise import back: job targets, the watchers of
 * a jobs engine. The layering test checks folders; this one checks files, within a folder too.
 */
const CORE = path.resolve(__dirname, '../../src/core');

interface Edge {
  to: string;
  value: boolean;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** The relative imports and re-exports of a file, each marked whether it imports a value. */
export function importsOf(file: string, text: string): Edge[] {
  const edges: Edge[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?([^;]*?)\s+from\s+'(\.[^']+)'/gm)) {
    const typeOnly = m[2] !== undefined || (m[1] === 'import' && /^\{[^}]*\}$/.test(m[3]!.trim()) && m[3]!.replace(/[{}]/g, '').split(',').map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith('type ')));
    const base = path.resolve(path.dirname(file), m[4]!);
    const to = [`${base}.ts`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f));
    if (to) edges.push({ to, value: !typeOnly });
  }
  return edges;
}

/** Value imports whose two ends import each other round a circle (Tarjan's strongly connected components). */
export function circularValueImports(graph: ReadonlyMap<string, readonly Edge[]>): Array<[string, string]> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const component = new Map<string, number>();
  const stack: string[] = [];
  let next = 0;
  let components = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const { to } of graph.get(v) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (!component.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) === index.get(v)) {
      for (let w = stack.pop(); ; w = stack.pop()) {
        component.set(w!, components);
        if (w === v) break;
      }
      components++;
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  const found: Array<[string, string]> = [];
  for (const [from, edges] of graph) for (const e of edges) if (e.value && component.get(from) === component.get(e.to)) found.push([from, e.to]);
  return found;
}

describe('imports in src/core run in no circle', () => {
  it('no value import is part of a circle of imports between files', () => {
    const graph = new Map(sourceFiles(CORE).map((f) => [f, importsOf(f, fs.readFileSync(f, 'utf8'))]));
    const rel = (f: string) => path.relative(CORE, f);
    assert.deepEqual(circularValueImports(graph).map(([a, b]) => `${rel(a)} imports ${rel(b)}, which imports it back (directly or round a circle)`), []);
  });

  it('finds a circle a value import is part of, and lets a circle of type imports be', () => {
    const a = '/a.ts';
    const b = '/b.ts';
    const c = '/c.ts';
    // a → b (value) → c (type) → a (type): the value import is in a circle.
    assert.deepEqual(circularValueImports(new Map([[a, [{ to: b, value: true }]], [b, [{ to: c, value: false }]], [c, [{ to: a, value: false }]]])), [[a, b]]);
    // Types only, both ways: erased at run time.
    assert.deepEqual(circularValueImports(new Map([[a, [{ to: b, value: false }]], [b, [{ to: a, value: false }]]])), []);
    // No circle.
    assert.deepEqual(circularValueImports(new Map([[a, [{ to: b, value: true }]], [b, [{ to: c, value: true }]], [c, []]])), []);
  });

  it('reads a type import as one, and a mixed one as a value import', () => {
    const here = path.join(CORE, 'jobs', 'x.ts');
    const text = "import type { JobEngine } from './jobEngine';\nimport { type JobTarget } from './jobTarget';\nimport { JobLedger, type JobChange } from './jobLedger';\n";
    assert.deepEqual(importsOf(here, text).map((e) => [path.basename(e.to), e.value]), [['jobEngine.ts', false], ['jobTarget.ts', false], ['jobLedger.ts', true]]);
  });
});
