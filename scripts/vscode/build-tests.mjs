// Bundles the extension-host tests (test/vscode/suite/*.test.ts and the runner, index.ts) into
// out/test/vscode/suite/, one cjs file each; `vscode` comes from the extension host and mocha from
// the project's node_modules. The folder is emptied first so that a deleted test cannot linger.
import * as esbuild from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLE_ALIASES } from '../bundleAliases.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const src = path.join(root, 'test/vscode/suite');
const out = path.join(root, 'out/test/vscode/suite');
rmSync(out, { recursive: true, force: true });
await esbuild.build({
  // The runner and the test files; helpers beside them are bundled into the tests that import them.
  entryPoints: readdirSync(src).filter((f) => f === 'index.ts' || f.endsWith('.test.ts') || f.endsWith('.bench.ts')).map((f) => path.join(src, f)),
  outdir: out,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'inline',
  external: ['vscode', 'mocha'],
  alias: BUNDLE_ALIASES,
  logLevel: 'warning',
});
