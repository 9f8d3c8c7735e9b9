// `npm run test:electron`: the extension-host suite (test/vscode/suite, bundled into
// out/test/vscode/suite/ by scripts/vscode/build-tests.mjs) in VS Code desktop, through
// @vscode/test-cli and @vscode/test-electron. It downloads VS Code, so it runs on contributors'
// machines, not on CI here: CI runs the same suite in code-server (npm run test:vscode).
//
// It sets up what scripts/vscode/run.mjs sets up for the suite: a fresh workspace holding `.mam/`
// (the extension activates on `workspaceContains:.mam`), throwaway user data with quiet settings,
// HOME, TMPDIR, XDG folders and TMUX_TMPDIR, MAM_VSCODE_TRUST, and a marker on every process it
// starts; at exit it removes the folder (the embedded broker stops once its .mam/ is gone) and kills
// marked processes still alive.
//
// test-electron always passes --disable-workspace-trust, so only the trusted pass runs here; the
// `*.untrusted.test.js` files run under code-server only, as do the multi-root window's
// (`*.multiroot.test.js`: run.mjs --multi-root makes its workspace). `*.bench.js` are for `npm run bench`.
import { defineConfig } from '@vscode/test-cli';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MARKER, killMarked } from './scripts/vscode/processes.mjs';
import { QUIET_SETTINGS } from './scripts/vscode/settings.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-electron-'));
const id = path.basename(dir).slice('mam-electron-'.length);
for (const name of ['workspace/.mam', 'user-data/User', 'home', 'tmp', 'xdg-config', 'xdg-data', 'xdg-state', 'xdg-cache', 'tmux']) {
  fs.mkdirSync(path.join(dir, name), { recursive: true, mode: 0o700 });
}
fs.writeFileSync(path.join(dir, 'user-data/User/settings.json'), JSON.stringify(QUIET_SETTINGS));
process.on('exit', () => {
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  try {
    killMarked(id); // reads /proc: Linux only
  } catch {
    // no /proc here
  }
});

// Variables of the caller's own session that must not leak into the tests (as run.mjs drops them).
const dropped = Object.fromEntries(
  Object.keys(process.env)
    .filter((k) => k === 'TMUX' || k === 'TMUX_PANE' || k.startsWith('MQTT_') || k.startsWith('MAM_WORKSPACE') || k.startsWith('MAM_VSCODE_'))
    .map((k) => [k, undefined]),
);

// In the order the suite's own runner loads them (sorted), once built; the glob before that (a listing).
const suite = path.join(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), 'out/test/vscode/suite');
const files = fs.existsSync(suite)
  ? fs.readdirSync(suite).filter((f) => f.endsWith('.test.js') && !f.endsWith('.untrusted.test.js') && !f.endsWith('.multiroot.test.js')).sort().map((f) => path.join(suite, f))
  : 'out/test/vscode/suite/!(*.untrusted|*.multiroot).test.js';

export default defineConfig({
  tests: [
    {
      label: 'extension-host',
      files,
      workspaceFolder: path.join(dir, 'workspace'),
      launchArgs: [`--user-data-dir=${path.join(dir, 'user-data')}`, `--extensions-dir=${path.join(dir, 'extensions')}`, '--disable-extensions'],
      env: {
        ...dropped,
        HOME: path.join(dir, 'home'),
        TMPDIR: path.join(dir, 'tmp'),
        XDG_CONFIG_HOME: path.join(dir, 'xdg-config'),
        XDG_DATA_HOME: path.join(dir, 'xdg-data'),
        XDG_STATE_HOME: path.join(dir, 'xdg-state'),
        XDG_CACHE_HOME: path.join(dir, 'xdg-cache'),
        TMUX_TMPDIR: path.join(dir, 'tmux'),
        MAM_VSCODE_TRUST: 'disabled',
        [MARKER]: id,
      },
      // The suite's own runner (index.ts) uses bdd, 20 s per test, and fails a run with no test.
      mocha: { ui: 'bdd', timeout: 20_000, failZero: true, color: false },
    },
  ],
});
