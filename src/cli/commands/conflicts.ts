import * as fs from 'node:fs';
import * as path from 'node:path';
import { printable } from '../../core/base/ids';
import { OverlapChecker } from '../../core/overlap/overlapChecker';
import { pairKey, type LineRange, type OverlapPair, type PairSide } from '../../core/overlap/overlapReport';
import { OverlapWatcher } from '../../core/overlap/overlapWatcher';
import { defineCommand, JSON_OPTION, type CommandContext } from '../command';

/**
 * `mam conflicts`: which running sessions' checkouts change the same files, with the lines, and
 * which would not merge cleanly — predicted with `git merge-tree`, nothing in any checkout touched.
 */
export const conflictsCommand = defineCommand({
  path: ['conflicts'],
  summary: "running sessions whose worktrees change the same files, and which would conflict",
  options: { ...JSON_OPTION },
  details: [
    'Compares every two checkouts (worktrees of one repository) that running or starting sessions',
    'work in: their changes since the merge-base of HEAD and the main line (the branch of the',
    "repository's first worktree), uncommitted and untracked files included. A pair is a CONFLICT",
    'when git merge-tree says merging the two would conflict, else an OVERLAP when both change a',
    'file. Lines are line numbers of the base. Sessions in one folder share a checkout and are',
    'never a pair; separate clones and folders outside git are not compared.',
    'Exit 0 whether or not anything overlaps (nothing to compare is not an error).',
    'JSON:     {computed_at, checkouts: [{sessions, checkout, branch, head, base, tree, files}],',
    '           pairs: [{a: {sessions, checkout}, b, kind, files: [{path, a_lines, b_lines, conflict}], merge_error?}],',
    '           skipped: [{session, why}]}',
  ].join('\n'),
  async run(ctx) {
    const checker = new OverlapChecker({ oneShot: true });
    const report = await checker.check(await ctx.controlPlane().sessions.list()).finally(() => checker.dispose());
    if (ctx.args.options.json) {
      ctx.json(report);
      return 0;
    }
    if (report.pairs.length === 0) ctx.out('No overlaps between running sessions.');
    for (const pair of report.pairs) {
      ctx.out(pairLine(pair, ctx.workspace()));
      for (const f of pair.files) {
        const lines = [`${side(pair.a)} ${ranges(f.a_lines)}`, `${side(pair.b)} ${ranges(f.b_lines)}`].join(', ');
        ctx.out(`  ${f.conflict ? 'conflict' : 'overlap '}  ${printable(f.path)}  (${lines})`);
      }
    }
    for (const s of report.skipped) ctx.io.stderr(`mam: not compared: session ${s.session}: ${s.why}\n`);
    return 0;
  },
});

/**
 * The monitor's overlap watch: one checker kept across looks, watching the checkouts it compares (a
 * look after a small change reads only where it happened), a line per new conflict, a warning when
 * a look fails. `schedule()` it on events; a move in a checkout schedules a look itself.
 */
export function watchConflicts(ctx: Pick<CommandContext, 'controlPlane' | 'workspace' | 'out' | 'logger'>, delayMs?: number): OverlapWatcher {
  // A watched checker when it runs on (a look reads only what moved, and a move asks for a look); one pass (--once) makes one look.
  const checker = new OverlapChecker(delayMs === 0 ? { oneShot: true } : { watch: true });
  const registry = ctx.controlPlane().sessions;
  const watcher = new OverlapWatcher({ check: async () => checker.check(await registry.list()), owns: checker, ...(delayMs === undefined ? {} : { delayMs }) });
  checker.onDidMove(() => watcher.schedule());
  watcher.onNewConflict((pair) => ctx.out(pairLine(pair, ctx.workspace())));
  // And when one ends, so that whoever reads the log knows the earlier line no longer holds.
  let conflicting = new Map<string, OverlapPair>();
  watcher.onDidChange((report) => {
    const now = new Map(report.pairs.filter((p) => p.kind === 'conflict').map((p) => [pairKey(p), p]));
    for (const [key, pair] of conflicting) if (!now.has(key)) ctx.out(`conflict over: ${side(pair.a)} ↔ ${side(pair.b)}`);
    conflicting = now;
  });
  watcher.onDidFail((err) => ctx.logger.warn(`overlap check failed: ${printable(err instanceof Error ? err.message : String(err))}`));
  return watcher;
}

/** One line naming a pair: what it is, whose, where, and how many files. */
export function pairLine(pair: OverlapPair, workspace: string): string {
  const where = (s: PairSide): string => `${side(s)} (${printable(shortPath(s.checkout, workspace))})`;
  const n = pair.files.length;
  const what = pair.kind === 'conflict' ? `CONFLICT in ${pair.files.filter((f) => f.conflict).length} of ${n} file${n === 1 ? '' : 's'}` : `OVERLAP in ${n} file${n === 1 ? '' : 's'}`;
  return `${what}: ${where(pair.a)} ↔ ${where(pair.b)}${pair.merge_error ? ` (merge not predicted: ${pair.merge_error})` : ''}`;
}

function side(s: PairSide): string {
  return s.sessions.join(',');
}

/** `lines 10-14,20`, `line 3`, or `-` when git gave no lines (a binary file; a file only the merge touches on this side). */
function ranges(lines: readonly LineRange[]): string {
  if (lines.length === 0) return '-';
  const one = lines.length === 1 && lines[0]![0] === lines[0]![1];
  return `line${one ? '' : 's'} ${lines.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',')}`;
}

function shortPath(p: string, workspace: string): string {
  let root = workspace;
  try {
    root = fs.realpathSync(workspace); // checkouts are real paths
  } catch {
    // keep it as given
  }
  const rel = path.relative(root, p);
  return rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? p : rel;
}
