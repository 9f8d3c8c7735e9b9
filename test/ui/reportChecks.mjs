// The review report's part of the UI check (test/ui/sidebar.mjs): a reviewer report that tries
// to inject HTML and links, and what run.mjs then checks in the report webview — markdown
// rendered, nothing an agent wrote obeyed, text contrast of at least 4.5:1 in four themes
// (screenshots test-output/report.light-modern.png, … .dark-high-contrast.png).
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Markdown an agent could write: raw HTML, a script, links of every scheme. */
export const HOSTILE_MARKDOWN = [
  '',
  '## Notes',
  '',
  '- raw HTML stays text: <img src=x onerror=alert(1)> and <script>alert(1)</script>',
  '- links: [the docs](https://example.com/docs), [the file](feature.txt#L1), [a command](command:workbench.action.terminal.new), [a script](javascript:alert(1))',
  '- code: `if (a < b) x();`',
  '',
  '> quoted from the task',
  '',
].join('\n');

/** Adds HOSTILE_MARKDOWN to the first review report of the workspace's loop (its persisted text, as the report reads it). */
export function addHostileReport(workspace) {
  const dir = path.join(workspace, '.mam', 'loops');
  const file = path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.json')));
  const loop = JSON.parse(fs.readFileSync(file, 'utf8'));
  const step = loop.steps.find((s) => /^r1:review:/.test(s.key));
  step.text = step.text.replace(/\n*(\[VERDICT: [A-Z ]+\]\s*)$/, `\n${HOSTILE_MARKDOWN}\n$1`);
  fs.writeFileSync(file, JSON.stringify(loop, null, 2));
}

/** run.mjs options for the report webview opened with `--webview-selector .timeline`. */
export const REPORT_CHECKS = [
  '--webview-expect', '.review .markdown h1',
  '--webview-expect', '.review .markdown li:has-text("<img src=x onerror=alert(1)>")',
  '--webview-expect', '.review .markdown a[href="https://example.com/docs"]',
  '--webview-expect', '.review .markdown a[href="feature.txt#L1"]',
  '--webview-expect', '!.markdown script, .markdown img, .markdown iframe, .markdown [onerror], .markdown [onclick]',
  '--webview-expect', '!.markdown a[href^="javascript:"], .markdown a[href^="command:"]',
  '--webview-expect', '.tl-bar',
  '--webview-expect', '.tl-tick.last',
  ...['Light Modern', 'Dark Modern', 'Dark High Contrast', 'Light High Contrast'].flatMap((t) => ['--theme', t]),
  // Pills, buttons, text, secondary text, links, code.
  ...['.pill', 'button.secondary', 'h1, .markdown p, .markdown li, .facts dd', '.facts dt, .identity, .tl-session, .tl-tick', '.markdown a, .files a, .review-head a', '.markdown code'].flatMap((s) => ['--contrast', s]),
];
