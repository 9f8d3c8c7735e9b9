import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { reportPathOf, writeBrief } from '../../src/core/jobs/brief';
import { roleOf } from '../../src/core/jobs/submit';
import { UsageError } from '../../src/core/base/errors';
import { jobRecord, tempDir } from '../support/helpers';

describe('the brief', () => {
  const brief = (role: string | null): { text: string; file: string } => {
    const dir = path.join(tempDir('brief'), '.mam', 'jobs', 'j-1');
    const file = path.join(dir, 'brief.md');
    writeBrief({ job: jobRecord({ id: 'j-20261201T000000Z-0123abcd', role }), task: 'Review it.', cliPath: '/opt/mam/dist/cli.js', workspace: '/w', heartbeatS: 30 }, file);
    return { text: fs.readFileSync(file, 'utf8'), file };
  };

  it('tells a reviewer or planner exactly where to write its report: beside the brief, outside the checkout', () => {
    for (const role of ['reviewer', 'planner']) {
      const { text, file } = brief(role);
      const report = reportPathOf(file);
      assert.equal(report, path.join(path.dirname(file), 'report.md'));
      assert.ok(text.includes(`\n   ${report}\n`), 'the path stands alone on its line');
      assert.ok(text.includes(`completed --job j-20261201T000000Z-0123abcd --workspace "/w" --detail "one-line summary" --report "${report}"`));
      assert.doesNotMatch(text, /\/path\/to\/report\.md/);
    }
  });

  it('asks a worker for no report', () => {
    assert.doesNotMatch(brief('worker').text, /--report/);
  });

  it('roles are words, case-insensitive: --role Reviewer is a reviewer', () => {
    assert.equal(roleOf('Reviewer'), 'reviewer');
    assert.equal(roleOf(' PLANNER '), 'planner');
    assert.equal(roleOf(undefined), null);
    for (const bad of ['', 're viewer', 'x'.repeat(40), '$(id)']) assert.throws(() => roleOf(bad), UsageError, bad);
  });
});
