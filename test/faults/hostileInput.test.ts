/**
 * What an agent or a payload says is data: IDs are checked before any path or topic is built from
 * them, and agent text reaches the user's terminal without its control characters and without
 * forging lines of its own.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { snapshotTree, tempDir } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';

const HOSTILE = 'done\u001b]0;pwned title\u0007\u001b[2J\u001b[31m red\nFORGED 2026-12-01T00:00:00.000Z  completed  seq=99\r\u009b';
/** What a terminal would obey: ESC, BEL, CSI (C1), carriage return. */
const CONTROL = /[\u0007\u001b\r\u0080-\u009f]/;

describe('faults: hostile IDs and agent text', function () {
  this.timeout(60_000);
  let f: JobFixture;
  beforeEach(() => {
    f = jobFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  it('a job ID with a path in it is refused before anything is written or started (event, heartbeat, logs, status, cancel)', async () => {
    const outside = tempDir('outside');
    fs.writeFileSync(path.join(outside, 'victim.json'), '{}');
    const rel = path.relative(path.join(f.workspace, '.mam', 'jobs'), path.join(outside, 'victim'));
    const before = snapshotTree(outside);
    for (const args of [
      ['event', 'progress', '--job', rel, '--detail', 'x'],
      ['event', 'started', '--job', rel, '--heartbeat', '1'],
      ['event', 'progress', '--job', 'j-1/../../x'],
      ['job', 'logs', rel],
      ['job', 'status', rel],
      ['job', 'cancel', rel],
      ['loop', 'resume', '../../../x'],
      ['loop', 'status', '../x'],
    ]) {
      const r = await f.run(args);
      assert.equal(r.exitCode, 64, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr.trim(), /^mam: '.*' is not a (job|loop) ID$/, args.join(' '));
    }
    assert.deepEqual(snapshotTree(outside), before, 'nothing written outside .mam/');
    assert.ok(!fs.existsSync(path.join(f.workspace, '.mam', 'jobs', 'j-1')));
  });

  it('an agent\'s --detail with escape sequences and newlines is shown, never obeyed, on one line: submit, status, list, logs', async () => {
    await f.agent('w1', 'started-silent');
    const submit = f.run(['job', 'submit', '--session', 'w1', '--prompt', 'Say something odd']);
    let id: string | undefined;
    const jobsDir = path.join(f.workspace, '.mam', 'jobs');
    for (const end = Date.now() + 30_000; !id && Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
      id = fs.existsSync(jobsDir) ? fs.readdirSync(jobsDir).find((n) => n.endsWith('.json'))?.replace(/\.json$/, '') : undefined;
      if (id && f.controlPlane.jobs.get(id)?.state !== 'started') id = undefined;
    }
    assert.ok(id, 'the job started');
    const event = await f.run(['event', 'completed', '--job', id!, '--detail', HOSTILE]);
    assert.equal(event.exitCode, 0, event.stderr);
    const submitted = await submit;
    assert.equal(submitted.exitCode, 0, submitted.stderr);
    for (const [what, r] of [
      ['submit', submitted],
      ['status', await f.run(['job', 'status', id!])],
      ['list', await f.run(['job', 'list'])],
      ['logs', await f.run(['job', 'logs', id!])],
    ] as const) {
      assert.ok(!CONTROL.test(r.stdout) && !CONTROL.test(r.stderr), `${what}: no control character reaches the terminal: ${JSON.stringify(r.stdout)}`);
      assert.ok(!/^FORGED/m.test(r.stdout), `${what}: the agent's newline forges no line`);
    }
    const logs = await f.run(['job', 'logs', id!]);
    assert.match(logs.stdout, /completed\s+seq=2 from .*done\\x1b\]0;pwned title\\x07\\x1b\[2J\\x1b\[31m red\\x0aFORGED/, 'shown visibly, in its own entry');
  });
});
