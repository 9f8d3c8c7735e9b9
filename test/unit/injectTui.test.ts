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
  captureRecent = async (): Promise<string> => this.capture();
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

describe('injection: a TUI that folds a paste into a placeholder', () => {
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

/**
 * A pane whose program loses the first Enter while it still starts, and fills in its footer at
 * that moment, as gemini 0.61.0 did under load: the screen changed, but the line still sat in the
 * input box, unsent.
 */
class LateStartingPane implements Multiplexer {
  readonly kind = 'tmux' as const;
  readonly server = 'in-memory';
  input = '';
  history: string[] = [];
  footer = ' workspace (/directory)      sandbox';
  enters = 0;
  typed: string[] = [];
  attachArgv = (): string[] => [];
  isRunning = async (): Promise<boolean> => true;
  spawn = async (_r: SpawnRequest): Promise<SpawnedPane> => ({ id: '%0', pid: null });
  listPanes = async (): Promise<PaneInfo[]> => [];
  capture = async (): Promise<string> => ['Tips for getting started:', ...this.history.map((h) => ` > ${h}`), '────', ' YOLO Ctrl+Y', ` * ${this.input || '  Type your message or @path/to/file'}`, this.footer].join('\n');
  captureRecent = async (): Promise<string> => this.capture();
  async sendText(_pane: string, text: string): Promise<void> {
    this.typed.push(text);
    this.input += text;
  }
  async sendKeys(_pane: string, keys: readonly Key[]): Promise<void> {
    if (!keys.includes('Enter')) return;
    this.enters++;
    if (this.enters === 1) {
      this.footer = ' workspace (/directory)      branch main      sandbox'; // lost, but the screen moved
      return;
    }
    this.history.push(this.input);
    this.input = '';
  }
  kill = async (): Promise<void> => undefined;
  killServer = async (): Promise<void> => undefined;
}

describe('injection: an Enter the program lost while its screen changed elsewhere', () => {
  it('presses Enter once more, because the line still sits in the input box; the text is typed once', async function () {
    this.timeout(10_000);
    const pane = new LateStartingPane();
    const line = 'MAM job j-20261203T055342Z-7349959e: read the brief at /tmp/repo/.mam/jobs/j-20261203T055342Z-7349959e/brief.md and follow it exactly.';
    const report = await injectLine(pane, '%0', line, { readScreen: (s) => (/YOLO Ctrl\+Y/.test(s) ? { kind: 'ready' } : { kind: 'unknown' }) });
    assert.deepEqual(report, { ready: 'sign', landed: 'marker', submitted: 'second-enter' });
    assert.deepEqual([pane.typed, pane.enters, pane.history], [[line], 2, [line]]);
  });
});
