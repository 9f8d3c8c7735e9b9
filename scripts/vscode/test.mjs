#!/usr/bin/env node
/**
 * `npm run test:vscode`: the extension-host tests in a real VS Code, in two passes — a trusted
 * workspace (`*.test.ts`), then an untrusted one (`*.untrusted.test.ts`, run.mjs --trust). Options
 * go to both passes (see run.mjs); `--file NAME` runs only the pass that holds NAME.
 *
 *   npm run test:vscode -- --file activation
 *   npm run test:vscode -- --grep "every command"
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const run = path.join(path.dirname(fileURLToPath(import.meta.url)), 'run.mjs');
const fileAt = args.indexOf('--file');
const file = fileAt >= 0 ? args[fileAt + 1] ?? '' : undefined;
const passes = [
  { trust: false, holds: (name) => !name.endsWith('.untrusted') },
  { trust: true, holds: (name) => name.endsWith('.untrusted') },
].filter((p) => file === undefined || p.holds(file.replace(/\.test(\.[jt]s)?$/, '')));

for (const pass of passes) {
  // The whole trusted pass runs real loops and agents: 15 minutes, unless --timeout says otherwise.
  const timeout = args.includes('--timeout') ? [] : ['--timeout', '900'];
  const r = spawnSync(process.execPath, [run, 'test', '--tests', 'out/test/vscode/suite/index.js', ...timeout, ...(pass.trust ? ['--trust'] : []), ...args], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
