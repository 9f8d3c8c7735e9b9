/**
 * The seeds' snapshot rule, kept by MAM: when a job ends, what its pane showed from the job's line
 * on is saved as pane.txt beside its audit log — colours stripped, at most the last 5,000 lines —
 * so long output that scrolled away is not lost; `mam job logs ID --pane` prints it.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { until } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';

describe("a job's pane text: pane.txt and mam job logs --pane", function () {
  this.timeout(90_000);
  let f: JobFixture;
  beforeEach(() => {
    f = jobFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  const submit = async (session: string) => {
    const r = await f.run(['job', 'submit', '--session', session, '--prompt', 'Print a lot', '--json']);
    assert.equal(r.exitCode, 0, r.stderr);
    return JSON.parse(r.stdout) as { id: string };
  };

  it('keeps 3,000 lines that scrolled out of a 50-line pane, from the job\'s line on, without colours or the job before', async () => {
    await f.agent('w1', 'chatty', ['--chatty-lines', '3000']);
    const first = await submit('w1');
    const second = await submit('w1');
    const file = path.join(f.workspace, '.mam', 'delegate_job_logs', second.id, 'pane.txt');
    await until(() => fs.existsSync(file), 10_000, 'pane.txt of the second job');
    const r = await f.run(['job', 'logs', second.id, '--pane']);
    assert.equal(r.exitCode, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, new RegExp(`MAM job ${second.id}: read the brief at `), 'from the job\'s own line');
    const printed = lines.map((l) => /output line (\d+) of (\S+)$/.exec(l)).filter((m) => m !== null);
    assert.deepEqual(printed.map((m) => Number(m[1])), Array.from({ length: 3000 }, (_, i) => i + 1), 'every line it printed, though only 50 fit the pane');
    assert.ok(printed.every((m) => m[2] === second.id));
    assert.ok(!/\x1b/.test(r.stdout), 'colours stripped');
    assert.ok(!r.stdout.includes(first.id), 'nothing of the job before');
    assert.equal(fs.readFileSync(file, 'utf8').trimEnd(), r.stdout.trimEnd());

    const json = JSON.parse((await f.run(['job', 'logs', second.id, '--pane', '--json'])).stdout) as { job: string; file: string; text: string };
    assert.deepEqual([json.job, json.file, json.text.trimEnd()], [second.id, file, r.stdout.trimEnd()]);
  });

  it('an open job has none yet: exit 1, one line saying why', async () => {
    await f.agent('w1', 'started-silent');
    const r = await f.run(['job', 'submit', '--session', 'w1', '--prompt', 'Run long', '--no-wait', '--json']);
    const id = (JSON.parse(r.stdout) as { id: string }).id;
    const logs = await f.run(['job', 'logs', id, '--pane']);
    assert.equal(logs.exitCode, 1);
    assert.equal(logs.stdout, '');
    assert.match(logs.stderr.trim(), new RegExp(`^mam: no pane text kept for ${id}: it is (dispatched|started); its pane text is kept when it ends$`));
  });
});
