#!/usr/bin/env node
/**
 * `npm run test:vscode`: the extension-host tests in a real VS Code, in four passes — a trusted
 * folder (`*.test.ts`), an untrusted one (`*.untrusted.test.ts`, run.mjs --trust), then a trusted
 * multi-root window (`*.multiroot.test.ts`, run.mjs --multi-root) and an untrusted one
 * (`*.multiroot.untrusted.test.ts`). Options go to every pass (see run.mjs); `--file NAME` runs only
 * the pass that holds NAME.
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
// Which window a test file runs in, by its name: NAME[.multiroot][.untrusted].test.ts.
const kind = (name) => ({ multiRoot: /\.multiroot(\.|$)/.test(name), untrusted: name.endsWith('.untrusted') });
const passes = [
  { trust: false, multiRoot: false },
  { trust: true, multiRoot: false },
  { trust: false, multiRoot: true },
  { trust: true, multiRoot: true },
].filter((p) => {
  if (file === undefined) return true;
  const k = kind(file.replace(/\.test(\.[jt]s)?$/, ''));
  return k.multiRoot === p.multiRoot && k.untrusted === p.trust;
});

for (const pass of passes) {
  // The whole trusted pass runs real loops and agents: 15 minutes, unless --timeout says otherwise.
  const timeout = args.includes('--timeout') ? [] : ['--timeout', '900'];
  const window = [...(pass.trust ? ['--trust'] : []), ...(pass.multiRoot ? ['--multi-root'] : [])];
  const r = spawnSync(process.execPath, [run, 'test', '--tests', 'out/test/vscode/suite/index.js', ...timeout, ...window, ...args], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
