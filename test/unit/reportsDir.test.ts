import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../../src/core/base/errors';
import { resolveReportsDir } from '../../src/core/loop/reports';
import { tempDir } from '../support/helpers';

describe('the reports folder of a loop (reportsDir)', () => {
  it('is any folder inside the workspace, however it is written', () => {
    const ws = tempDir('ws');
    const sub = path.join(ws, 'sub');
    fs.mkdirSync(sub);
    fs.symlinkSync(path.join(ws, 'sub'), path.join(ws, 'link-in'));
    for (const [dir, base, expected] of [
      ['.mam/reports', ws, '.mam/reports'],
      ['.agents/reports', ws, '.agents/reports'],
      ['reports', sub, 'sub/reports'],
      [path.join(ws, 'team', 'reports'), sub, 'team/reports'],
      [`../${path.basename(ws)}/.agents/reports`, ws, '.agents/reports'],
      ['link-in/reports', ws, 'sub/reports'],
    ] as const) {
      assert.equal(resolveReportsDir(ws, dir, base, '--reports-dir'), path.join(ws, expected), dir);
    }
  });

  it('is refused outside it, at its root, or empty: by a .., an absolute path or a symlink', () => {
    const ws = tempDir('ws');
    const outside = tempDir('outside');
    fs.symlinkSync(outside, path.join(ws, 'link-out'));
    for (const dir of ['..', '../reports', '.agents/../../reports', outside, path.join(outside, 'reports'), 'link-out/reports', '.', ws, '', '  ']) {
      assert.throws(() => resolveReportsDir(ws, dir, ws, 'MAM_REPORTS_DIR in the environment'), (e: unknown) => e instanceof UsageError && /^MAM_REPORTS_DIR in the environment '.*' is not a folder inside the workspace /.test(e.message), dir);
    }
  });
});
