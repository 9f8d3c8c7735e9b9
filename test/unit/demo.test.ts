import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DemoUnavailableError, demoSessionNames, findNode } from '../../src/core/demo/demo';
import { tempDir } from '../support/helpers';

describe('mam demo: choosing its sessions and its Node.js', () => {
  it('names the team demo-*, and gives all four the first free suffix when any name is taken', () => {
    assert.deepEqual(demoSessionNames(new Set(['creator'])), { worker: 'demo-worker', creator: 'demo-creator', 'reviewer-strict': 'demo-reviewer-a', 'reviewer-easy': 'demo-reviewer-b' });
    assert.deepEqual(Object.values(demoSessionNames(new Set(['demo-reviewer-b']))), ['demo-worker-2', 'demo-creator-2', 'demo-reviewer-a-2', 'demo-reviewer-b-2']);
    assert.deepEqual(Object.values(demoSessionNames(new Set(['demo-worker', 'demo-creator-2']))), ['demo-worker-3', 'demo-creator-3', 'demo-reviewer-a-3', 'demo-reviewer-b-3']);
  });

  describe('the node that runs the demo agents', () => {
    /** A folder with a `node` that only prints `version`, first on PATH. */
    const fakeNode = (version: string): string => {
      const dir = tempDir('fake-node');
      fs.writeFileSync(path.join(dir, 'node'), `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
      return dir;
    };
    const asElectron = async <T>(fn: () => Promise<T>): Promise<T> => {
      Object.defineProperty(process.versions, 'electron', { value: '35.0.0', configurable: true, enumerable: true });
      try {
        return await fn();
      } finally {
        delete (process.versions as Record<string, string | undefined>).electron;
      }
    };

    it('is the first node on PATH, even where this process is something else (the VS Code extension host)', async () => {
      const dir = fakeNode('v22.1.0');
      assert.equal(await asElectron(() => findNode({ PATH: `/nonexistent:${dir}:/usr/bin` })), path.join(dir, 'node'));
    });

    it('refuses one older than Node.js 20, naming it', async () => {
      const dir = fakeNode('v18.19.0');
      await assert.rejects(findNode({ PATH: dir }), (err: Error) => err instanceof DemoUnavailableError && err.message.includes('v18.19.0') && err.message.includes(dir));
    });

    it('without node on PATH: the node running the CLI, but never Electron', async () => {
      const empty = tempDir('no-node');
      assert.equal(await findNode({ PATH: empty }), process.execPath);
      await assert.rejects(asElectron(() => findNode({ PATH: empty })), /there is no node on PATH/);
    });
  });
});
