import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { folderWatch, whileWorkspaceLasts } from '../../src/cli/commands/monitor';
import { tempDir } from '../support/helpers';

/** The race behind a monitor that said "tmux is not installed" after its workspace was deleted. */
describe('monitor: a workspace deleted before the first pass', () => {
  function workspace(): { ctx: Parameters<typeof whileWorkspaceLasts>[0]; dir: string; lines: string[] } {
    const dir = path.join(tempDir('ws'), '.mam');
    fs.mkdirSync(dir);
    const lines: string[] = [];
    return { ctx: { controlPlane: () => ({ paths: { dir } }) as never, out: (line: string) => void lines.push(line) }, dir, lines };
  }
  const failingPass = async (): Promise<void> => {
    throw new Error('tmux is not installed');
  };

  it('a watch taken when the command starts sees a deletion made while the engine connected: the monitor stops', async () => {
    const { ctx, dir, lines } = workspace();
    const gone = folderWatch(dir);
    fs.rmSync(path.dirname(dir), { recursive: true });
    await whileWorkspaceLasts(ctx, 0.2, failingPass, gone);
    assert.deepEqual(lines, [`${dir} is gone; the monitor stops.`]);
  });

  it('control: a watch taken only after the deletion cannot tell, and the pass error stands', async () => {
    const { ctx, dir } = workspace();
    fs.rmSync(path.dirname(dir), { recursive: true });
    await assert.rejects(whileWorkspaceLasts(ctx, 0.2, failingPass), /tmux is not installed/);
  });
});
