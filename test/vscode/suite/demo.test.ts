import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import { waitFor } from '../waitFor';
import { cleanUp, mamApi } from './support';

describe('MAM: Run Demo in VS Code', function () {
  this.timeout(120_000);
  let api: MamApi;
  before(async () => {
    api = await mamApi();
    process.env.MAM_DEMO_PACE = 'fast';
  });
  after(async () => {
    delete process.env.MAM_DEMO_PACE;
    await cleanUp(api);
  });

  it('runs the demo in this workspace: the trees fill in and its report opens', async () => {
    const engine = api.host.current[0]!.engine;
    await vscode.commands.executeCommand('mam.runDemo');
    const loop = await waitFor('the demo loop', () => engine.core.loops.list().find((l) => l.creator.startsWith('demo-creator')));
    assert.equal(loop.status, 'passed');
    assert.deepEqual(loop.rounds.map((r) => r.reviews.map((v) => `${v.reviewer}:${v.verdict}`)), [
      ['demo-reviewer-a:NOT PASS', 'demo-reviewer-b:PASS'],
      ['demo-reviewer-a:PASS', 'demo-reviewer-b:PASS'],
    ]);
    const sessions = (await engine.core.controlPlane.sessions.list()).map((s) => s.name).filter((n) => n.startsWith('demo-'));
    assert.deepEqual(sessions.sort(), ['demo-creator', 'demo-reviewer-a', 'demo-reviewer-b', 'demo-worker']);
    assert.ok(engine.core.jobs.index.list().some((j) => j.session === 'demo-worker' && j.state === 'completed'), 'the delegated job completed');
    assert.ok(api.reports.open.some((p) => p.loopId === loop.id), 'its report opened');
    for (const name of sessions) await engine.core.sessions.stop(name);
  });
});
