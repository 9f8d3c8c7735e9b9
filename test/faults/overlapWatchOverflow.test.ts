import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { OverlapChecker } from '../../src/core/overlap/overlapChecker';
import type { OverlapReport } from '../../src/core/overlap/overlapReport';
import { tempDir, until } from '../support/helpers';
import { numberedLines, OverlapRepo } from '../support/overlapRepo';
import { sessionRow } from '../support/rows';

/** The kernel's inotify queue size: more events than this, unread, and the rest are dropped. */
function queueSize(): number {
  return Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
}

/**
 * A real inotify overflow: while this process's event loop is blocked, a child makes more events
 * in alice's worktree than the kernel queues, then edits bob's. The kernel drops bob's event (and
 * libuv drops the overflow marker without a word), which the test shows with a watch of its own.
 * The watched overlap checker must still see bob's edit at its next look: the burst it did see tells
 * it that events may have been lost, and it reads everything again.
 */
describe('overlap watch: events lost to an overflowing inotify queue', function () {
  this.timeout(120_000);

  it('reads every checkout again after a burst that overflowed the queue, and sees the change whose event was lost', async () => {
    const repo = new OverlapRepo(tempDir('overlap-overflow'), { 'src/app.ts': numberedLines(50), 'src/util.ts': numberedLines(20, 'util'), 'src/f1.ts': '1\n', 'src/f2.ts': '2\n' });
    const a = repo.addWorktree('alice');
    const b = repo.addWorktree('bob');
    repo.editLine(a, 'src/app.ts', 5, 'alice');
    repo.editLine(b, 'src/app.ts', 30, 'bob');
    const rows = [sessionRow('alice', { cwd: a }), sessionRow('bob', { cwd: b })];
    const checker = new OverlapChecker({ watch: true });
    // The test's own watches, in the same process and so on the same inotify queue: bob's src/, and a
    // folder outside the repository for a marker written once the loop runs again.
    const markers = tempDir('overflow-marker');
    const seen: string[] = [];
    const own = [fs.watch(path.join(b, 'src'), { persistent: false }, (_t, name) => seen.push(`bob:${name}`)), fs.watch(markers, { persistent: false }, (_t, name) => seen.push(`marker:${name}`))];
    try {
      await checker.check(rows);
      let moves = 0;
      checker.onDidMove(() => moves++);

      // Alternating two files: the kernel folds an event into the one before it only when they are alike.
      const events = queueSize() + 4_096;
      const child = `const fs = require('fs'); const t = new Date();
        for (let i = 0; i < ${events}; i++) fs.utimesSync(i % 2 ? ${JSON.stringify(path.join(a, 'src/f1.ts'))} : ${JSON.stringify(path.join(a, 'src/f2.ts'))}, t, t);
        fs.appendFileSync(${JSON.stringify(path.join(b, 'src/util.ts'))}, 'bob, lost in the flood\\n');`;
      const r = spawnSync(process.execPath, ['-e', child], { stdio: 'inherit' }); // blocks this event loop throughout
      assert.equal(r.status, 0);
      // The loop reads the whole queue in one go; once the checker has heard of the flood, it is read,
      // and a marker written now is queued behind whatever was kept.
      await until(() => moves > 0, 30_000, 'the watch to see the flood');
      fs.writeFileSync(path.join(markers, 'after-the-flood'), '');
      await until(() => seen.includes('marker:after-the-flood'), 30_000, 'the marker written after the flood');
      // The queue keeps the order of events: bob's edit, made before the marker, would have come first.
      assert.ok(!seen.includes('bob:util.ts'), `the premise: bob's event was lost to the overflow (seen: ${seen.slice(-5).join(', ')})`);

      const report = await checker.check(rows);
      const fresh = new OverlapChecker();
      try {
        const strip = (x: OverlapReport): OverlapReport => ({ ...x, computed_at: '' });
        assert.deepEqual(report.checkouts.find((x) => x.checkout === b)?.files, ['src/app.ts', 'src/util.ts'], "bob's edit whose event was lost");
        assert.deepEqual(strip(report), strip(await fresh.check(rows)));
      } finally {
        fresh.dispose();
      }
      assert.deepEqual(checker.lastWork.read, [a, b].sort(), 'every checkout read again');
    } finally {
      for (const w of own) w.close();
      checker.dispose();
    }
  });
});
