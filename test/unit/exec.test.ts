import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { exec, ProgramNotFoundError } from '../../src/core/base/exec';
import { tempDir } from '../support/helpers';

describe('exec: a program that cannot start says why', () => {
  it('a program that is not installed', async () => {
    await assert.rejects(exec('mam-no-such-program', []), ProgramNotFoundError);
  });

  it('a working folder that is gone is not mistaken for a missing program', async () => {
    const gone = path.join(tempDir(), 'deleted');
    await assert.rejects(exec(process.execPath, ['-e', '0'], { cwd: gone }), (err: Error) => {
      assert.ok(!(err instanceof ProgramNotFoundError), err.message);
      assert.equal(err.message, `cannot run ${process.execPath}: its working folder ${gone} is gone`);
      return true;
    });
  });
});
