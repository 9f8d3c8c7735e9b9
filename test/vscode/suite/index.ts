/**
 * The mocha runner inside VS Code's extension host. scripts/vscode/run.mjs opens the workbench with
 * this file (built to out/test/vscode/suite/index.js) as `extensionTestsPath`; VS Code calls `run()`
 * and, when the promise settles, reports pass or fail to the page (`codeAutomationExit`), which is
 * the runner's exit code.
 *
 * Loads every `*.test.js` beside it that belongs to this window (trusted or not, a folder or a
 * multi-root window), or only `MAM_VSCODE_FILE`, runs those matching
 * `MAM_VSCODE_GREP`, logs one `[mam-vscode]` line per test (the driver prints them as they come),
 * and writes the results to the JSON file named by `MAM_VSCODE_TEST_RESULTS`.
 *
 * Each test file is its own bundle: code it imports from src/ is a copy, not the running
 * extension's. Talk to the extension through VS Code (commands, views) or its exports.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

export interface VscodeTestResults {
  passes: Array<{ title: string; file: string; durationMs: number }>;
  failures: Array<{ title: string; file: string; error: string }>;
  pending: string[];
  durationMs: number;
}

const PREFIX = '[mam-vscode]';
/** This repository (out/test/vscode/suite/ is three folders down). */
const REPO_ROOT = path.resolve(__dirname, '../../../..');

export function run(): Promise<void> {
  const only = process.env.MAM_VSCODE_FILE;
  // `*.untrusted.test.js` run only in a workspace that is not trusted (run.mjs --trust), the rest only in a trusted one;
  // `*.multiroot[.untrusted].test.js` only in a multi-root window (run.mjs --multi-root), the rest only in a folder.
  // `*.bench.js` run only for `npm run bench` (MAM_VSCODE_BENCH=1), never as tests.
  const untrusted = process.env.MAM_VSCODE_TRUST === 'untrusted';
  const multiRoot = process.env.MAM_VSCODE_WINDOW === 'multi-root';
  const bench = process.env.MAM_VSCODE_BENCH === '1';
  const belongs = (f: string): boolean => f.endsWith('.untrusted.test.js') === untrusted && /\.multiroot\.(untrusted\.)?test\.js$/.test(f) === multiRoot;
  const files = fs
    .readdirSync(__dirname)
    .filter((f) => (bench ? f.endsWith('.bench.js') : f.endsWith('.test.js') && belongs(f)))
    .filter((f) => !only || f === `${only.replace(/(\.test)?\.(js|ts)$/, '')}.test.js`)
    .sort();
  const results: VscodeTestResults = { passes: [], failures: [], pending: [], durationMs: 0 };
  const started = Date.now();
  const relative = (file: string | undefined): string => (file ? path.basename(file) : '');

  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 20_000, reporter: class {} as unknown as Mocha.ReporterConstructor });
  forgiveBuiltInExtensions();
  if (process.env.MAM_VSCODE_GREP) mocha.grep(process.env.MAM_VSCODE_GREP);
  for (const f of files) mocha.addFile(path.join(__dirname, f));

  return new Promise<void>((resolve, reject) => {
    const finish = (error?: Error): void => {
      results.durationMs = Date.now() - started;
      const file = process.env.MAM_VSCODE_TEST_RESULTS;
      if (file) fs.writeFileSync(file, JSON.stringify(results, null, 2));
      const summary = `${results.passes.length} passing, ${results.failures.length} failing, ${results.pending.length} pending (${results.durationMs} ms)`;
      console.log(`${PREFIX} ${summary}`);
      if (error) reject(error);
      else if (results.failures.length > 0) reject(new Error(summary));
      else if (results.passes.length === 0) reject(new Error(`no test ran (files: ${files.join(', ') || 'none'})`));
      else resolve();
    };
    try {
      mocha
        .run(() => finish())
        .on('pass', (t) => {
          results.passes.push({ title: t.fullTitle(), file: relative(t.file), durationMs: t.duration ?? 0 });
          console.log(`${PREFIX} ✓ ${t.fullTitle()} (${t.duration ?? 0} ms)`);
        })
        .on('fail', (t, err: Error) => {
          results.failures.push({ title: t.fullTitle(), file: relative(t.file), error: String(err?.stack ?? err) });
          console.log(`${PREFIX} ✗ ${t.fullTitle()}: ${err?.message ?? err}`);
        })
        .on('pending', (t) => results.pending.push(t.fullTitle()));
    } catch (err) {
      results.failures.push({ title: 'loading the test files', file: '', error: String((err as Error)?.stack ?? err) });
      finish(err as Error);
    }
  });
}

/**
 * An error thrown from a timer of one of VS Code's built-in extensions is theirs, not a failure of
 * the test that happened to be running: it is logged, and the test goes on. Seen: the git
 * extension's `git check-ignore` writing to a git that had already exited (EPIPE), after a suite
 * removed the `.git` it had given the window's folder. Anything with a frame of our own code, or
 * no frame in a built-in extension, still fails the test as before.
 */
function forgiveBuiltInExtensions(): void {
  type Uncaught = (this: Mocha.Runner, err: unknown) => void;
  const proto = Mocha.Runner.prototype as unknown as { _uncaught: Uncaught };
  const original = proto._uncaught;
  proto._uncaught = function (err) {
    const frames = String((err as Error | undefined)?.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l));
    const builtIn = frames.some((l) => /[\\/]lib[\\/]vscode[\\/]extensions[\\/]/.test(l) || /[\\/]resources[\\/]app[\\/]extensions[\\/]/.test(l));
    // (VS Code itself is installed under .cache/ in this repository: its frames are not ours.)
    const ours = frames.some((l) => l.includes(REPO_ROOT) && !l.includes(path.join(REPO_ROOT, '.cache')));
    if (builtIn && !ours) {
      console.log(`${PREFIX} a built-in extension threw (not a MAM failure; the test goes on): ${String((err as Error).stack).split('\n').slice(0, 4).join(' | ')}`);
      return;
    }
    original.call(this, err);
  };
}
