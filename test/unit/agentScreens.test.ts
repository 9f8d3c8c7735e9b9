import { strict as assert } from 'node:assert';
import { adapterFor } from '../../src/core/agents';
import { readScreen } from '../../src/core/agents/screens';

/**
 * What MAM reads on the real CLIs' screens (the lines that matter, as captured in tmux panes, 200
 * columns, from gemini 0.61.0, copilot 1.0.102, qwen 0.15.10, opencode 1.18.33 and grok 1.0.41): ready only
 * when the CLI takes input, never on a screen that comes just before a question only a person
 * should answer. The real-agent tests show the same end to end (test/integration/real*.test.ts).
 */
const GEMINI_INPUT = ['? for shortcuts', '────────────', ' YOLO Ctrl+Y', ' *   Type your message or @path/to/file', ' workspace (/directory)      sandbox'];
const screens: Array<[agent: string, what: string, lines: string[], reading: string]> = [
  ['gemini', 'the input box it draws before anything else (then its trust question or "Resuming session..." replaces it)', GEMINI_INPUT, 'unknown'],
  ['gemini', 'a new session, started', [' ▝▜▄     Gemini CLI v0.61.0', 'Tips for getting started:', '1. Create GEMINI.md files to customize your interactions', ...GEMINI_INPUT], 'ready'],
  ['gemini', 'a resumed session, its history shown', [' > [Function Response: run_shell_command]', '✦ Done: job j-20261203T042651Z-346a533e (job).', ...GEMINI_INPUT], 'ready'],
  ['gemini', 'resuming', ['✦ Ran it:', '⠋ Resuming session...', ' YOLO Ctrl+Y', ' workspace (/directory)'], 'unknown'],
  ['gemini', 'its folder-trust question', [' │ Do you trust the files in this folder?', ' │ ● 1. Trust folder (wg2)', ' │   2. Trust parent folder (x)', ' │   3. Don\'t trust'], 'folder_trust'],
  ['gemini', 'its sign-in choice', ['│ ? Get started', '│   How would you like to authenticate for this project?', '│   ● 2. Use Gemini API Key'], 'auth'],
  ['copilot', 'its input box', [' /tmp/clis/x/wc [⎇ master]', '────────', '❯', '────────', ' ← open sidebar · Interactive · Allow All · / commands · ? help · tab next tab      stub-model'], 'ready'],
  ['copilot', 'its folder-trust question (over the banner)', ['  ╰─╯╰─╯  Copilot v1.0.102 uses AI.', '│ Confirm folder trust', '│ Do you trust the files in this folder?', '│ ❯ 1. Yes', '│   2. Yes, and remember this folder for future sessions', '│   3. No (Esc)'], 'folder_trust'],
  ['copilot', 'no sign-in (its input box drawn beneath)', ['Please use /login to sign in to use Copilot', '❯', ' ← open sidebar · Interactive · Allow All · / commands · ? help · tab next tab'], 'not_logged_in'],
  ['qwen', 'its input box, still initializing (a line typed now is kept)', ['*   Type your message or @path/to/file', '  .   Initializing...'], 'ready'],
  ['qwen', 'its sign-in choice', ['  │ Select Authentication Method │', '  │ › Alibaba ModelStudio │', '  │   Custom Provider │'], 'auth'],
  ['grok', 'its prompt box after a reply, a suggested next prompt standing in it', ['     Done: job j-20261203T054155Z-a42d71f0 (job).', '  │ ❯ MAM job │', '  ╰──── mam-test-model · always-approve ─╯', '  Tab/→:accept suggestion  │  Shift+Tab:mode  │  Ctrl+x:shortcuts'], 'ready'],
  ['grok', 'no API key: its sign-in choice', ['                 Login with Grok              l', '                 Quit                         q'], 'login'],
  ['opencode', 'a new session', ['  ┃  Ask anything… "Fix broken tests"', '  ┃  Build · mam-test-model', '   tab agents  ctrl+p commands'], 'ready'],
  ['opencode', 'a resumed session (no placeholder)', ['  ┃  Build · mam-test-model', '   /tmp/repo    8.1K  ctrl+p commands    • OpenCode 1.18.33'], 'ready'],
];

describe('agent screens: ready signs and blocking screens on the real CLIs\' screens', () => {
  for (const [agent, what, lines, want] of screens) {
    it(`${agent}: ${what} → ${want}`, () => {
      const reading = readScreen(lines.join('\n'), adapterFor(agent));
      assert.equal(reading.kind === 'blocked' ? reading.screen.id : reading.kind, want);
    });
  }
});
