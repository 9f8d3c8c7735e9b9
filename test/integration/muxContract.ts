/**
 * The contract every multiplexer backend passes: run by tmux.test.ts against a private tmux server
 * and by herdr.test.ts against the fake herdr server.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { injectLine } from '../../src/core/mux/inject';
import type { Multiplexer } from '../../src/core/mux/multiplexer';
import { FAKE_AGENT, readAgentLog, tempDir, until } from '../support/helpers';

export interface BackendUnderTest {
  mux: Multiplexer;
  /** Stops everything the backend started. */
  dispose(): Promise<void>;
}

export function muxContract(name: string, make: () => Promise<BackendUnderTest>): void {
  describe(`multiplexer contract: ${name}`, function () {
    this.timeout(60_000);
    let backend: BackendUnderTest;
    let mux: Multiplexer;
    beforeEach(async () => {
      backend = await make();
      mux = backend.mux;
    });
    afterEach(async () => {
      await backend.dispose();
    });

    it('reports no panes and does not start a server that is not running', async () => {
      assert.equal(await mux.isRunning(), false);
      assert.deepEqual(await mux.listPanes(), []);
      assert.equal(await mux.isRunning(), false);
    });

    it('spawns a program with its cwd and env, and lists it alive with pid, command and cwd', async () => {
      const cwd = fs.realpathSync(tempDir('pane-cwd'));
      const marker = path.join(cwd, 'seen.json');
      const script = `const fs = require('fs'); fs.writeFileSync(${JSON.stringify(marker + '.tmp')}, JSON.stringify({cwd: process.cwd(), v: process.env.MAM_CONTRACT})); fs.renameSync(${JSON.stringify(marker + '.tmp')}, ${JSON.stringify(marker)}); setInterval(() => {}, 1000)`;
      const pane = await mux.spawn({ label: 'contract.one', argv: [process.execPath, '-e', script], cwd, env: { MAM_CONTRACT: 'it works; $(not run)' } });
      await until(() => fs.existsSync(marker), 10_000, 'the program to start');
      assert.deepEqual(JSON.parse(fs.readFileSync(marker, 'utf8')), { cwd, v: 'it works; $(not run)' });
      const listed = (await mux.listPanes()).find((p) => p.id === pane.id);
      assert.ok(listed, 'the new pane is listed');
      assert.equal(listed.alive, true);
      assert.equal(listed.cwd, cwd);
      assert.equal(listed.label, 'contract.one');
      assert.equal(listed.command, 'node');
      if (pane.pid !== null) assert.equal(listed.pid, pane.pid);
    });

    it('delivers a 2 KB line with Korean text, quotes and shell metacharacters byte-exact, and runs none of it', async () => {
      const cwd = tempDir('inject');
      const log = path.join(cwd, 'agent.log');
      const pwned = path.join(cwd, 'pwned');
      const pane = await mux.spawn({ label: 'contract.inject', argv: [process.execPath, FAKE_AGENT, '--log', log], cwd, env: {} });
      const chunk = `한국어 텍스트 "double" 'single' \`tick\` $(touch ${pwned}) ; rm -rf / && echo $HOME | cat > x & \\ * ? [a] {b} ~ # 끝 `;
      let line = '';
      while (line.length < 2048) line += chunk;
      line = [...line].slice(0, 2048).join('');
      const report = await injectLine(mux, pane.id, line, { readScreen: (s) => ({ kind: /fake-agent ready/.test(s) ? 'ready' : 'unknown' }) });
      assert.equal(report.ready, 'sign');
      await until(() => readAgentLog(log).some((e) => e.event === 'line'), 10_000, 'the line to arrive');
      const lines = readAgentLog(log).filter((e) => e.event === 'line');
      assert.equal(lines.length, 1, 'submitted once');
      assert.equal(lines[0]!.text, line);
      assert.equal(fs.existsSync(pwned), false);
    });

    it('closes a pane on kill, and killing it again is not an error', async () => {
      const pane = await mux.spawn({ label: 'contract.kill', argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], cwd: tempDir('kill'), env: {} });
      assert.ok((await mux.listPanes()).some((p) => p.id === pane.id && p.alive));
      await mux.kill(pane.id);
      assert.equal((await mux.listPanes()).some((p) => p.id === pane.id && p.alive), false);
      await mux.kill(pane.id);
    });

    it('reports a pane whose program exited as gone or dead', async () => {
      const cwd = tempDir('exit');
      const pane = await mux.spawn({ label: 'contract.exit', argv: [process.execPath, '-e', 'setTimeout(() => process.exit(3), 300)'], cwd, env: {} });
      await until(async () => !(await mux.listPanes()).some((p) => p.id === pane.id && p.alive), 10_000, 'the pane to end');
    });

    it('gives parallel spawns distinct panes', async () => {
      const cwd = tempDir('parallel');
      const panes = await Promise.all(
        Array.from({ length: 6 }, (_, i) => mux.spawn({ label: `contract.p${i}`, argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], cwd, env: {} })),
      );
      assert.equal(new Set(panes.map((p) => p.id)).size, 6);
      const listed = await mux.listPanes();
      for (const p of panes) assert.ok(listed.some((l) => l.id === p.id && l.alive));
    });

    it('stops the whole server', async () => {
      await mux.spawn({ label: 'contract.server', argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], cwd: tempDir('srv'), env: {} });
      assert.equal(await mux.isRunning(), true);
      await mux.killServer();
      assert.equal(await mux.isRunning(), false);
      assert.deepEqual(await mux.listPanes(), []);
    });
  });
}
