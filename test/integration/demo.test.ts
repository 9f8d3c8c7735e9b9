import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import type { DemoSummary } from '../../src/core/demo/demo';
import type { LoopState } from '../../src/core/loop/loopState';
import { CLI, tempDir, until } from '../support/helpers';

interface DemoJson extends DemoSummary {
  kept: boolean;
  tmuxServer: string;
  look: Array<[string, string]>;
  cleanup: string[][];
  narration: string[];
}

/** Whether tmux server `name` (in the run's TMUX_TMPDIR) answers. */
function tmuxRunning(name: string): boolean {
  return spawnSync('tmux', ['-L', name, 'list-sessions'], { stdio: 'ignore' }).status === 0;
}

/** Processes whose command line mentions `dir` (agents, heartbeats, the broker daemon of that workspace). */
function processesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(dir) && !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))) found.push(`${pid} ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('mam demo (real tmux, git, embedded broker and the built-in demo agents)', function () {
  this.timeout(60_000);

  it('runs one delegated job and one loop (NOT PASS, then PASS) in a temporary repository; --keep leaves it to look at', async () => {
    // TMPDIR puts the demo's temporary folder under the run's own root.
    const tmp = tempDir('demo-tmp');
    const r = await execa(process.execPath, [CLI, 'demo', '--pace', 'fast', '--json', '--keep'], { cwd: tmp, env: { ...process.env, TMPDIR: tmp }, reject: false, timeout: 50_000 });
    const s = JSON.parse(String(r.stdout)) as DemoJson;
    try {
      assert.equal(r.exitCode, 0, `${r.stderr}\n${s.narration?.join('\n')}`);
      assert.ok(s.passed && s.kept);
      assert.ok(s.workspace.startsWith(fs.realpathSync(tmp)), s.workspace);

      // Part 1: one delegated job, done by the worker.
      assert.deepEqual([s.job.session, s.job.state], ['demo-worker', 'completed']);
      assert.match(fs.readFileSync(path.join(s.repoDir, 'notes/survey.md'), 'utf8'), /`src\/signup\.js`: `signup`/);

      // Part 2: the loop, strict NOT PASS + easy PASS, then both PASS.
      assert.equal(s.loop.status, 'passed');
      assert.deepEqual(s.loop.rounds.map((x) => [x.n, x.status, x.verdicts.map((v) => `${v.reviewer}:${v.verdict}`)]), [
        [1, 'not_passed', ['demo-reviewer-a:NOT PASS', 'demo-reviewer-b:PASS']],
        [2, 'passed', ['demo-reviewer-a:PASS', 'demo-reviewer-b:PASS']],
      ]);
      const loop = JSON.parse(fs.readFileSync(path.join(s.workspace, '.mam', 'loops', `${s.loop.id}.json`), 'utf8')) as LoopState;
      const finding = loop.steps.find((x) => x.key === 'r1:review:demo-reviewer-a')!.text!;
      assert.match(finding, /Empty input is not rejected/);
      assert.match(finding, /\[VERDICT: NOT PASS\]\s*$/);

      // Two commits by the creator on top of the first one, as git itself tells.
      const log = execFileSync('git', ['log', '--format=%an|%s'], { cwd: s.repoDir, encoding: 'utf8' }).trim().split('\n');
      assert.deepEqual(log.map((l) => l.split('|')[0]), ['MAM demo creator', 'MAM demo creator', 'MAM demo']);
      assert.match(execFileSync('git', ['show', 'HEAD:src/signup.js'], { cwd: s.repoDir, encoding: 'utf8' }), /\n {2}if \(!validate\(email\)\)/);
      assert.equal(execFileSync('git', ['status', '--porcelain'], { cwd: s.repoDir, encoding: 'utf8' }), '', 'the worker\'s notes are ignored; nothing else is left uncommitted');

      // Reports promoted, each beside its identity sidecar naming the reviewed snapshot.
      const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: s.repoDir, encoding: 'utf8' }).trim();
      assert.equal(s.reports.length, 4);
      for (const review of loop.rounds[1]!.reviews) {
        const dir = path.join(s.reportsDir, review.reviewer);
        assert.match(fs.readFileSync(path.join(dir, `report-${review.job_id}.md`), 'utf8'), /\[VERDICT: PASS\]\n$/);
        const identity = JSON.parse(fs.readFileSync(path.join(dir, `report-${review.job_id}.identity.json`), 'utf8'));
        assert.deepEqual([identity.head, identity.verdict, identity.round, identity.loop], [head, 'PASS', 2, s.loop.id]);
      }

      // The narration says what happened, and the commands it points at work.
      const narration = s.narration.join('\n');
      for (const line of [/survey +demo-worker completed/, /round 1: demo-reviewer-a NOT PASS/, /round 1: demo-reviewer-b PASS/, /round 2: every reviewer passed; reports in/, /watch it: tmux -L mam-demo-\S+ attach-session -t %\d/]) {
        assert.match(narration, line);
      }
      const look = new Map(s.look);
      const loopStatus = await execa(process.execPath, [CLI, 'loop', 'status', s.loop.id, '--workspace', s.workspace], { reject: false });
      assert.equal(loopStatus.exitCode, 0, loopStatus.stderr);
      assert.match(loopStatus.stdout, /: passed/);
      assert.match(look.get('the loop')!, new RegExp(`loop status ${s.loop.id} --workspace`));
      assert.ok(tmuxRunning(s.tmuxServer), '--keep leaves the sessions running');
      assert.equal(s.sessions.length, 4);
    } finally {
      // The clean-up the demo printed, as a user would run it.
      for (const argv of s.cleanup ?? []) {
        const [file, ...args] = argv[0] === 'node' ? [process.execPath, ...argv.slice(1)] : argv;
        spawnSync(file!, args, { stdio: 'ignore' });
      }
    }
    assert.ok(!tmuxRunning(s.tmuxServer));
    assert.ok(!fs.existsSync(s.workspace));
    await until(() => processesUnder(s.workspace).length === 0, 5_000, `the demo's processes to end: ${processesUnder(s.workspace).join('; ')}`, 100);
  });

  it('Ctrl-C midway stops the demo and everything it started, and removes its folder', async () => {
    const tmp = tempDir('demo-tmp');
    const child = execa(process.execPath, [CLI, 'demo', '--pace', 'fast'], { cwd: tmp, env: { ...process.env, TMPDIR: tmp }, reject: false, timeout: 30_000 });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
    await until(() => /survey +demo-worker started/.test(out), 20_000, 'the delegated job to start');
    const server = /tmux server (mam-demo-\S+),/.exec(out)![1]!;
    child.kill('SIGINT');
    const r = await child;
    assert.equal(r.exitCode, 1, `${r.stderr}\n${out}`);
    assert.match(String(r.stderr), /the demo was cancelled/);
    assert.match(out, /survey +demo-worker cancelled \(cancelled_by_user\)/);
    assert.match(out, /Cleaned up: stopped 4 sessions, the broker and tmux server/);
    assert.ok(!tmuxRunning(server));
    assert.deepEqual(fs.readdirSync(tmp).filter((n) => n.startsWith('mam-demo-')), []);
    await until(() => processesUnder(tmp).length === 0, 5_000, `the demo's processes to end: ${processesUnder(tmp).join('; ')}`, 100);
  });
});
