import { strict as assert } from 'node:assert';
import { execa } from 'execa';
import { CLI, tempDir, until } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';
import { numberedLines, OverlapRepo } from '../support/overlapRepo';

const APP = 'app.ts';

describe('mam monitor: a line per new conflict between running sessions', function () {
  this.timeout(90_000);
  let f: JobFixture;
  let repo: OverlapRepo;
  let a: string;
  let b: string;

  beforeEach(async () => {
    f = jobFixture();
    repo = new OverlapRepo(tempDir('overlap'), { [APP]: numberedLines(50) });
    a = repo.addWorktree('alice');
    b = repo.addWorktree('bob');
    for (const [name, cwd] of [['alice', a], ['bob', b]] as const) {
      await f.service.create({ name, agent: 'shell', command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], baseDir: cwd });
    }
  });

  afterEach(async () => {
    await f.dispose();
  });

  it('--once prints the conflicts it finds', async () => {
    const quiet = await f.run(['monitor', '--once']);
    assert.equal(quiet.exitCode, 0, quiet.stderr);
    assert.doesNotMatch(quiet.stdout, /CONFLICT|OVERLAP/);
    repo.editLine(a, APP, 3, 'alice');
    repo.editLine(b, APP, 3, 'bob');
    const r = await f.run(['monitor', '--once']);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /^CONFLICT in 1 of 1 file: alice \(.*\) ↔ bob \(.*\)$/m);
  });

  it('running, looks again by itself when a file changes in a checkout (its watch), not only at its passes', async () => {
    repo.editLine(a, APP, 3, 'alice');
    repo.editLine(b, APP, 3, 'bob');
    // An hour between passes: the first pass's look is the only one a pass asks for.
    const monitor = execa(process.execPath, [CLI, 'monitor', '--interval', '3600'], { cwd: f.workspace, env: f.env, reject: false });
    let out = '';
    monitor.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await until(() => out.split('\n').some((l) => l.startsWith('CONFLICT')), 30_000, 'the conflict the first look finds');
      repo.editLine(b, APP, 3, 'line 3'); // bob undoes his edit by hand
      await until(() => out.includes('conflict over: alice ↔ bob\n'), 30_000, 'the end of the conflict, seen with no pass between');
    } finally {
      monitor.kill('SIGTERM');
      await monitor;
    }
  });

  it('running, announces a conflict when it appears and again only after it went away and came back', async () => {
    const monitor = execa(process.execPath, [CLI, 'monitor', '--interval', '0.2'], { cwd: f.workspace, env: f.env, reject: false });
    let out = '';
    monitor.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const conflictLines = (): number => out.split('\n').filter((l) => l.startsWith('CONFLICT')).length;
    try {
      repo.editLine(a, APP, 3, 'alice');
      repo.editLine(b, APP, 3, 'bob');
      await until(() => conflictLines() === 1, 30_000, 'the conflict announced');
      repo.git(b, 'checkout', '--', APP); // bob undoes his edit: no conflict
      repo.editLine(b, APP, 40, 'bob, far away');
      await until(() => out.includes('conflict over: alice ↔ bob\n'), 30_000, 'the conflict gone');
      repo.editLine(b, APP, 3, 'bob again');
      await until(() => conflictLines() === 2, 30_000, 'the conflict announced again');
    } finally {
      monitor.kill('SIGTERM');
      await monitor;
    }
    assert.equal(conflictLines(), 2, out);
  });
});
