import { strict as assert } from 'node:assert';
import { injectLine } from '../../src/core/mux/inject';
import type { Key, Multiplexer, PaneInfo, SpawnRequest, SpawnedPane } from '../../src/core/mux/multiplexer';

/**
 * A pane whose program folds any paste into a placeholder, as opencode 1.18.33 does with a job
 * line ("[Pasted ~1 lines]"), and takes the line on Enter: the text never shows on its screen.
 */
class FoldingPane implements Multiplexer {
  readonly kind = 'tmux' as const;
  readonly server = 'in-memory';
  screen = '┃  Ask anything… "Fix broken tests"\n   tab agents  ctrl+p commands';
  typed: string[] = [];
  enters = 0;
  attachArgv = (): string[] => [];
  isRunning = async (): Promise<boolean> => true;
  spawn = async (_r: SpawnRequest): Promise<SpawnedPane> => ({ id: '%0', pid: null });
  listPanes = async (): Promise<PaneInfo[]> => [];
  capture = async (): Promise<string> => this.screen;
  async sendText(_pane: string, text: string): Promise<void> {
    this.typed.push(text);
    this.screen = '┃  [Pasted ~1 lines]\n   tab agents  ctrl+p commands';
  }
  async sendKeys(_pane: string, keys: readonly Key[]): Promise<void> {
    if (!keys.includes('Enter')) return;
    this.enters++;
    this.screen = `┃  ${this.typed.join('')}\n┃  Thinking…\n   esc interrupt`;
  }
  kill = async (): Promise<void> => undefined;
  killServer = async (): Promise<void> => undefined;
}

describe('injection into a TUI that folds a paste into a placeholder', () => {
  it('takes the changed screen, once still, for the text having landed — it does not wait for the text to show', async function () {
    // A land bound far beyond this test's own: waiting for the marker until then would fail the test.
    this.timeout(10_000);
    const pane = new FoldingPane();
    const line = 'MAM job j-20261203T051527Z-d0086de3: read the brief at /tmp/mam-bench/ws/.mam/jobs/j-20261203T051527Z-d0086de3/brief.md and follow it exactly.';
    const report = await injectLine(pane, '%0', line, { readScreen: (s) => (/ctrl\+p commands/.test(s) ? { kind: 'ready' } : { kind: 'unknown' }), landTimeoutMs: 600_000 });
    assert.deepEqual(report, { ready: 'sign', landed: 'screen-changed', submitted: 'first-enter' });
    assert.deepEqual(pane.typed, [line], 'typed once');
    assert.equal(pane.enters, 1);
  });
});
