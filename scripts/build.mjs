// Bundles the extension and the CLI with esbuild (cjs, node, `vscode` external) and copies the
// sql.js WebAssembly beside them. `node scripts/build.mjs --watch` rebuilds on change.
import * as esbuild from 'esbuild';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BUNDLE_ALIASES } from './bundleAliases.mjs';

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
  alias: BUNDLE_ALIASES,
};
/**
 * esbuild turns `import * as fs from 'node:fs'` into `__toESM(require("node:fs"))`, which copies
 * every export of the module onto a new object as a getter: for fs, ~100 of them, once per file that
 * imports it (a dozen in dist/cli-event.js), and every later `fs.x` goes through a getter. A Node
 * built-in needs none of it (it has no `default` we read, nor `__esModule`): such a namespace is the
 * module itself. This drops the wrapper where the namespace's `.default` is never read; measured on
 * `mam event`: ~3 ms of a cold process's CPU (docs/benchmarks.md).
 */
function plainBuiltinNamespaces(file) {
  const code = readFileSync(file, 'utf8');
  const out = code.replace(/^var (\w+) = __toESM\(require\("(node:[\w/]+)"\)\);$/gm, (line, name, id) =>
    new RegExp(`\\b${name}\\.default\\b`).test(code) ? line : `var ${name} = require("${id}");`,
  );
  if (out !== code) writeFileSync(file, out);
}

const entries = [
  // The extension's views and commands; the engine (SQLite, MQTT, jobs) loads from dist/engine.js on first need.
  // The banner and footer time the bundle's own evaluation (reported by the benchmark).
  {
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    banner: { js: 'var __mamLoadStart = performance.now();' },
    footer: { js: 'module.exports.__mamLoadMs = performance.now() - __mamLoadStart;' },
  },
  { entryPoints: ['src/engine.ts'], outfile: 'dist/engine.js' },
  // dist/cli.js only picks dist/cli-event.js (`mam event`, run by agents) or dist/cli-main.js.
  { entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
  { entryPoints: ['src/cli/event.ts'], outfile: 'dist/cli-event.js' },
  // The rest of `mam event` (publishing for itself, `started`, the heartbeat service): loaded by cli-event.js when the host's relay does not take the event.
  { entryPoints: ['src/cli/eventPublish.ts'], outfile: 'dist/cli-event-publish.js' },
  // The seeds' `multi-agent-mux-delegate-job`: `mam job` under the name seed 004's skill gave it.
  { entryPoints: ['src/cli/delegateJob.ts'], outfile: 'dist/delegate-job.js', banner: { js: '#!/usr/bin/env node' } },
  { entryPoints: ['src/cli/app.ts'], outfile: 'dist/cli-main.js' },
  // `mam mcp`: the MCP server and the SDK (with the zod it validates the protocol with), loaded by boot.ts for that command only.
  { entryPoints: ['src/mcp/main.ts'], outfile: 'dist/mcp.js' },
  // The embedded broker (aedes), loaded only by the daemon `mam broker serve`.
  { entryPoints: ['src/core/messaging/brokerDaemon.ts'], outfile: 'dist/broker-daemon.js' },
  // The scripted agent `mam demo` runs in each session (a program of its own, started with node).
  { entryPoints: ['src/scriptedAgent/demoAgent.ts'], outfile: 'dist/demo-agent.js' },
  // What every scripted agent shares; the test fixtures' fake agent (plain JS) requires it.
  { entryPoints: ['src/scriptedAgent/kit.ts'], outfile: 'dist/scripted-agent-kit.js' },
];

// The review-report page's script runs in the webview (a browser), so it is built for one; minified,
// as it carries markdown-it and DOMPurify.
const webview = { entryPoints: ['src/webview/report.ts'], outfile: 'media/report.js', bundle: true, minify: true, platform: 'browser', format: 'iife', target: 'es2022', logLevel: 'warning', legalComments: 'none' };

mkdirSync('dist', { recursive: true });
copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), 'dist/sql-wasm.wasm');
// Node looks up the nearest package.json of every file it loads as a module, to learn its type:
// without this one it parses the project's (47 KB, VS Code's manifest) in each short `mam` process
// (~3 ms of a cold `mam event`'s CPU: docs/benchmarks.md). The bundles are CommonJS, as before.
writeFileSync('dist/package.json', '{ "type": "commonjs" }\n');
if (watch) {
  for (const entry of entries) await (await esbuild.context({ ...common, ...entry })).watch();
  await (await esbuild.context(webview)).watch();
} else {
  await Promise.all([...entries.map((entry) => esbuild.build({ ...common, ...entry })), esbuild.build(webview)]);
  for (const entry of entries) plainBuiltinNamespaces(entry.outfile);
  chmodSync('dist/cli.js', 0o755);
  chmodSync('dist/delegate-job.js', 0o755);
}
