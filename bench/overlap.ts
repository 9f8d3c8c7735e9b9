/**
 * The overlap check for 10 worktrees × 200 changed files each (half committed on their branch, half
 * uncommitted; neighbours share 50 files, some on the same lines), beside one `git diff --name-only`
 * of one worktree. Goals: after one file changed, a watched checker's look ≤ 5× that one call; cold
 * (a new checker, one-shot, as `mam conflicts` runs) ≤ 20×.
 * Run alone: `node -r esbuild-register bench/overlap.ts`.
 */
import { spawnSync } from 'node:child_process';
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryLogger } from '../src/core/base/log';
import { worktreeTree } from '../src/core/loop/snapshot';
import { OverlapChecker } from '../src/core/overlap/overlapChecker';
import { ControlPlane } from '../src/core/store/controlPlane';
import { inotifyWatches } from '../test/support/inotify';
import { gitsStarted } from '../test/support/gitsStarted';
import { numberedLines, OverlapRepo } from '../test/support/overlapRepo';
import { sessionRow } from '../test/support/rows';
import { percentile, renderTable, timeCommand, type Row } from './stats';

const WORKTREES = 10;
const CHANGED = 200;
const FILES = 3000;
const CLI = path.resolve(__dirname, '../dist/cli.js');
/** git's hardening flags are cached 2 s per folder (src/core/base/git.ts); looks in real use are further apart. */
const APART_MS = 2_100;

export async function benchOverlap(root: string, runs: number): Promise<Row[]> {
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[`src/m${Math.floor(i / 100)}/f${i}.ts`] = numberedLines(60, `f${i}`);
  const repo = new OverlapRepo(path.join(root, 'overlap'), files);
  const worktrees: string[] = [];
  for (let w = 0; w < WORKTREES; w++) {
    const dir = repo.addWorktree(`w${w}`);
    worktrees.push(dir);
    // Worktree w changes files [150w, 150w + 200): the last 50 are the next one's first 50.
    for (let k = 0; k < CHANGED; k++) {
      const i = 150 * w + k;
      const file = `src/m${Math.floor(i / 100)}/f${i}.ts`;
      // Shared files: the lower worktree edits line 10, the upper one line 10 (every 10th: a conflict) or line 40.
      const line = k < 50 && w > 0 ? (k % 10 === 0 ? 10 : 40) : 10;
      repo.editLine(dir, file, line, `changed by w${w}`);
      if (k === CHANGED / 2 - 1) repo.git(dir, 'commit', '-q', '-am', `w${w}: first half`);
    }
  }
  const rows = worktrees.map((cwd, w) => sessionRow(`s${w}`, { cwd }));

  // A worktree as it is minutes after its edits: files older than the index, so no entry is racily
  // clean (git would reread those on every call, and how many there are depends on where the
  // setup's second boundaries fell: one `git diff` took 16 ms in one run and 44 ms in the next).
  const then = new Date(Date.now() - 3_600_000);
  for (const dir of [repo.main, ...worktrees]) {
    for (const f of fs.readdirSync(path.join(dir, 'src'), { recursive: true, encoding: 'utf8' })) fs.utimesSync(path.join(dir, 'src', f), then, then);
    repo.git(dir, 'update-index', '-q', '--refresh');
  }
  spawnSync('sync');
  // The reference is timed beside each measured look (the machine's load moves; ratios of samples
  // taken together hold better than of samples taken minutes apart).
  timeCommand('git', ['diff', '--name-only'], 1, { cwd: worktrees[0] });
  const reference: number[] = [];
  const referenceOnce = (): void => {
    reference.push(timeCommand('git', ['diff', '--name-only'], 1, { cwd: worktrees[0] })[0]!);
  };

  const timed = async (fn: () => Promise<unknown>): Promise<number> => {
    const t = performance.now();
    await fn();
    return performance.now() - t;
  };
  const expectFiles = (n: number): void => {
    if (n !== WORKTREES * CHANGED) throw new Error(`expected ${WORKTREES * CHANGED} changed files, saw ${n}`);
  };

  // What a one-look checker keeps for the next in each checkout's git folder (snapshotIndexes.ts)
  // and in the shared one (lookMemo.ts): removed before a look that is to be the first ever.
  const keptFolders = [repo.main, ...worktrees].map((w) => path.join(repo.git(w, 'rev-parse', '--absolute-git-dir'), 'mam-overlap'));
  const forgetKept = (): void => keptFolders.forEach((k) => fs.rmSync(k, { recursive: true, force: true }));

  // Cold: a new checker for one look, as `mam conflicts` and the MCP tool run it, the first ever.
  const cold: number[] = [];
  let pairs = 0;
  let conflicts = 0;
  let coldGits: Started = { gits: 0, processes: 0 };
  for (let i = 0; i <= runs; i++) {
    forgetKept();
    const checker = new OverlapChecker({ oneShot: true });
    let n = 0;
    if (i > 0) referenceOnce();
    const gits = countGits();
    const ms = await timed(async () => {
      const report = await checker.check(rows);
      pairs = report.pairs.length;
      conflicts = report.pairs.filter((p) => p.kind === 'conflict').length;
      n = report.checkouts.reduce((s, c) => s + c.files.length, 0);
    });
    coldGits = gits();
    checker.dispose();
    expectFiles(n);
    if (i > 0) cold.push(ms);
  }

  // The same look in a process of its own, as `mam conflicts` runs it (timed inside: no node start).
  // Each git is a fork of the process that starts it, and a fork costs with the process's size:
  // this benchmark's process is twice the CLI's.
  const fresh = await coldProcess(root);
  const rowsFile = path.join(root, 'overlap-rows.json');
  fs.writeFileSync(rowsFile, JSON.stringify(rows));
  const coldProcessLook = (): { ms: number; started: Started } => {
    const r = spawnSync(process.execPath, [fresh, rowsFile], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`the cold check process failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout) as { ms: number; started: Started; files: number; rss: number };
    expectFiles(out.files);
    return out;
  };
  // The first look ever: nothing kept in the checkouts' git folders.
  const coldFirst: number[] = [];
  let firstGits: Started = { gits: 0, processes: 0 };
  for (let i = 0; i <= runs; i++) {
    forgetKept();
    if (i > 0) referenceOnce();
    const out = coldProcessLook();
    firstGits = out.started;
    if (i > 0) coldFirst.push(out.ms);
  }
  // After one file of one worktree changed since the look before, which kept its snapshot indexes.
  const coldAlone: number[] = [];
  let aloneGits: Started = { gits: 0, processes: 0 };
  for (let i = 0; i <= runs; i++) {
    fs.appendFileSync(path.join(worktrees[0]!, 'src/m0/f0.ts'), `cold ${i}\n`);
    if (i > 0) referenceOnce();
    const out = coldProcessLook();
    aloneGits = out.started;
    if (i > 0) coldAlone.push(out.ms);
  }

  // The whole `mam conflicts --json` process, with the ten sessions in its registry.
  const cp = new ControlPlane(repo.main, { logger: new MemoryLogger() });
  await cp.sessions.mutate((tx) => rows.forEach((r) => tx.insert(r)));
  const process_ = timeCommand(process.execPath, [CLI, 'conflicts', '--json'], Math.min(runs, 10), { cwd: repo.main });

  // After one file changed, a checker kept without watches (what the monitor ran before): every worktree is asked.
  const unwatched: number[] = [];
  const kept = new OverlapChecker();
  await kept.check(rows);
  let unwatchedGits: Started = { gits: 0, processes: 0 };
  for (let i = 0; i < runs; i++) {
    fs.appendFileSync(path.join(worktrees[0]!, 'src/m0/f0.ts'), `one more line ${i}\n`);
    await sleep(APART_MS);
    const gits = countGits();
    unwatched.push(await timed(() => kept.check(rows)));
    unwatchedGits = gits();
    referenceOnce();
  }
  kept.dispose();

  // After one file changed, a watched checker (the extension, `mam monitor`): the look once the watch
  // saw it, 2 s after the last one (as the monitor's and the extension's looks come).
  const watchesBefore = inotifyWatches();
  const watched = new OverlapChecker({ watch: true });
  await watched.check(rows);
  const watches = inotifyWatches() - watchesBefore;
  const warm: number[] = [];
  const idle: number[] = [];
  const backToBack: number[] = [];
  let warmGits: Started = { gits: 0, processes: 0 };
  let backToBackGits: Started = { gits: 0, processes: 0 };
  for (let i = 0; i < runs; i++) {
    const moved = nextMove(watched, 10_000);
    fs.appendFileSync(path.join(worktrees[0]!, 'src/m0/f0.ts'), `and one more ${i}\n`);
    await moved;
    await sleep(APART_MS);
    const gits = countGits();
    warm.push(await timed(() => watched.check(rows)));
    warmGits = gits();
    referenceOnce();
    if (watched.lastWork.read.length !== 1 || watched.lastWork.read[0] !== worktrees[0]) throw new Error(`the watched look read ${watched.lastWork.read.join(', ') || 'nothing'}`);
    // Right after a look (git's hardening flags still known for that folder, as a burst of edits goes).
    const movedAgain = nextMove(watched, 10_000);
    fs.appendFileSync(path.join(worktrees[0]!, 'src/m0/f0.ts'), `and again ${i}\n`);
    await movedAgain;
    const gitsAgain = countGits();
    backToBack.push(await timed(() => watched.check(rows)));
    backToBackGits = gitsAgain();
    await sleep(APART_MS);
    idle.push(await timed(() => watched.check(rows)));
    if (watched.lastWork.read.length > 0 || watched.lastWork.listed.length > 0) throw new Error('a look with nothing moved read something');
  }
  watched.dispose();

  const seeded: number[] = [];
  const fromHead: number[] = [];
  const gitDir = repo.git(worktrees[0]!, 'rev-parse', '--absolute-git-dir');
  for (let i = 0; i < runs; i++) {
    seeded.push(await timed(() => worktreeTree(worktrees[0]!, { seedIndex: path.join(gitDir, 'index') })));
    fromHead.push(await timed(() => worktreeTree(worktrees[0]!)));
  }
  const ref = percentile(reference, 50);

  const label = `${WORKTREES} worktrees × ${CHANGED} changed files, ${FILES} files in the repository, ${pairs} pairs (${conflicts} conflicting)`;
  const row = (name: string, samples: number[], goal?: string): Row => ({
    name, p50: percentile(samples, 50), p99: percentile(samples, 99), reference: 'one `git diff --name-only`', ratio: `${(percentile(samples, 50) / ref).toFixed(1)}×`, ...(goal ? { goal } : {}),
  });
  return [
    { name: `raw \`git diff --name-only\`, one worktree of ${CHANGED} changed files (reference; timed beside each look below)`, p50: ref, p99: percentile(reference, 99) },
    row(`overlap check after one file of one worktree changed, watched (the extension, \`mam monitor\`): ${label}; ${watches} folder watches; ${describeGits(warmGits)}`, warm, '≤ 5×'),
    row(`overlap check after one more file changed, watched, right after the last look (${describeGits(backToBackGits)})`, backToBack),
    row('overlap check, watched, nothing moved since the last look (no git)', idle),
    row(`overlap check after one file changed, a checker kept without watches (every worktree asked: ${describeGits(unwatchedGits)})`, unwatched),
    row(`overlap check, cold (a new checker, one look), in a process of its own as \`mam conflicts\` runs it, after one file of one worktree changed since the look before (its snapshot indexes kept in the checkouts' git folders): ${label}; ${describeGits(aloneGits)}`, coldAlone, '≤ 20×'),
    row(`overlap check, cold, in a process of its own, the first look ever (nothing kept: what a look after a commit or a \`git add\` in every checkout costs); ${describeGits(firstGits)}`, coldFirst),
    row(`overlap check, cold, in this benchmark's process, the first look ever (${Math.round(process.memoryUsage().rss / 1e6)} MB resident: each git's fork costs more); ${describeGits(coldGits)}`, cold),
    row('`mam conflicts --json` (cold process: node, the registry, the check; nothing changed since the look before)', process_),
    row('one worktree\'s snapshot tree, temp index seeded from a copy of its index', seeded),
    row('one worktree\'s snapshot tree, temp index from `read-tree HEAD`', fromHead),
  ];
}

/**
 * A script of its own (bundled with esbuild, run by plain node) that makes one cold look at the
 * sessions in the JSON file it is given and prints how long the look took and how many gits it ran (and from how many processes).
 */
async function coldProcess(root: string): Promise<string> {
  const outfile = path.join(root, 'cold-overlap-check.js');
  const contents = `
    const fs = require('node:fs');
    const { OverlapChecker } = require('./src/core/overlap/overlapChecker');
    const { gitsStarted } = require('./test/support/gitsStarted');
    const counting = gitsStarted();
    (async () => {
      const rows = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
      const checker = new OverlapChecker({ oneShot: true });
      const t = performance.now();
      const report = await checker.check(rows);
      const ms = performance.now() - t;
      checker.dispose();
      const files = report.checkouts.reduce((n, c) => n + c.files.length, 0);
      const { gits, processes } = counting.stop();
      console.log(JSON.stringify({ ms, started: { gits: gits.length, processes }, files, rss: process.memoryUsage().rss }));
    })();`;
  await esbuild.build({ stdin: { contents, resolveDir: path.resolve(__dirname, '..'), loader: 'js' }, bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile, logLevel: 'warning' });
  return outfile;
}

/** Counts the gits this process starts from now on; call the result to read the count and stop. */
function countGits(): () => Started {
  const counting = gitsStarted();
  return () => {
    const { gits, processes } = counting.stop();
    return { gits: gits.length, processes };
  };
}

/** How many gits a look ran, and from how many processes this one started (a snapshot's add and write-tree run from one shell). */
interface Started {
  gits: number;
  processes: number;
}

function describeGits(n: Started): string {
  return `${n.gits} gits from ${n.processes} processes`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves when the checker's watches next see something move; rejects after `ms`. */
function nextMove(checker: OverlapChecker, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`the watch did not see the change within ${ms} ms`));
    }, ms);
    const sub = checker.onDidMove(() => {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    });
  });
}

if (require.main === module) {
  void (async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-bench-overlap-'));
    try {
      const rows = await benchOverlap(root, Number(process.env.BENCH_RUNS ?? 15));
      console.log(`Node ${process.versions.node}, ${os.cpus().length} cores\n`);
      console.log(renderTable(rows));
    } finally {
      fs.rmSync(root, { recursive: true, force: true, maxRetries: 5 });
    }
  })();
}
