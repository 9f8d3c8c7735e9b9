import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { exec, execQuick, ProgramNotFoundError } from '../../src/core/base/exec';
import { tempDir } from '../support/helpers';

// execQuick (node's execFile, for tmux) answers exactly as exec (execa) does.
for (const [name, run] of [['exec', exec], ['execQuick', execQuick]] as const) {
  describe(`${name}: a program that cannot start says why`, () => {
    it('a program that is not installed', async () => {
      await assert.rejects(run('mam-no-such-program', []), ProgramNotFoundError);
    });

    it('a working folder that is gone is not mistaken for a missing program', async () => {
      const gone = path.join(tempDir(), 'deleted');
      await assert.rejects(run(process.execPath, ['-e', '0'], { cwd: gone }), (err: Error) => {
        assert.ok(!(err instanceof ProgramNotFoundError), err.message);
        assert.equal(err.message, `cannot run ${process.execPath}: its working folder ${gone} is gone`);
        return true;
      });
    });
  });

  describe(`${name}: what a program said, whatever its exit status`, () => {
    it('stdout, stderr and the status, input on stdin, the environment given', async () => {
      const script = 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{process.stdout.write(s.toUpperCase()+process.env.MAM_X+"\\n");process.stderr.write("warn\\n");process.exit(3)})';
      const r = await run(process.execPath, ['-e', script], { input: 'héllo ', env: { MAM_X: 'x' } });
      assert.deepEqual(r, { exitCode: 3, stdout: 'HÉLLO x\n', stderr: 'warn\n' });
    });

    it('extendEnv false: only the environment given', async () => {
      const r = await run(process.execPath, ['-e', 'process.stdout.write(String(process.env.HOME))'], { env: { PATH: process.env.PATH }, extendEnv: false });
      assert.deepEqual(r, { exitCode: 0, stdout: 'undefined', stderr: '' });
    });

    it('a program past its time is stopped, and that is an error', async () => {
      await assert.rejects(run(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { timeoutMs: 200 }));
    });
  });
}
