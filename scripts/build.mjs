// Bundles the extension and the CLI with esbuild (cjs, node, `vscode` external) and copies the
// sql.js WebAssembly beside them. `node scripts/build.mjs --watch` rebuilds on change.
import * as esbuild from 'esbuild';
import { chmodSync, copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const watch = process.argv.includes('--watch');
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  external: ['vscode'],
  logLevel: 'warning',
  legalComments: 'none',
};
const entries = [
  { entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js' },
  // dist/cli.js serves `mam event` itself and loads dist/cli-main.js for everything else.
  {
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    banner: { js: '#!/usr/bin/env node' },
    // mqtt-packet's parser needs only bl's BufferList, not bl's stream (which pulls in readable-stream).
    alias: { bl: 'bl/BufferList.js', debug: './scripts/stubs/debug.cjs' },
  },
  { entryPoints: ['src/cli/app.ts'], outfile: 'dist/cli-main.js' },
];

mkdirSync('dist', { recursive: true });
copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), 'dist/sql-wasm.wasm');
if (watch) {
  for (const entry of entries) await (await esbuild.context({ ...common, ...entry })).watch();
} else {
  await Promise.all(entries.map((entry) => esbuild.build({ ...common, ...entry })));
  chmodSync('dist/cli.js', 0o755);
}
