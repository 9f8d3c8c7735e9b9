#!/usr/bin/env node
/**
 * `npm run screenshots`: after the UI check (`npm run test:ui`, which screenshots the packaged
 * extension in a real VS Code into test-output/), copies the shots the README and docs/vscode.md show into
 * docs/images/, cropped to what they are about, to be committed with the change that altered what
 * they show. Crops are drawn by Debian's Chromium through playwright-core, as the UI check's are.
 *
 *   node scripts/screenshots.mjs        fails if a shot is missing or older than the build it shows
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { withChromium } from './chromium.mjs';
import { CHROMIUM, REPO_ROOT } from './vscode/install.mjs';

const FROM = path.join(REPO_ROOT, 'test-output');
const TO = path.join(REPO_ROOT, 'docs/images');
// test-output/<shot> → docs/images/<name>, and the part of the 1400×900 window kept: what README.md links to.
const SHOTS = [
  // The activity bar, the Sessions, Jobs and Loops views and the status bar's start (MAM's item), at full size.
  { shot: 'sidebar.png', name: 'vscode.png', clip: { x: 0, y: 0, width: 348, height: 900 } },
  // A multi-root window in Dark Modern: the views grouped by folder, down to the Loops view (docs/vscode.md).
  { shot: 'multiroot.dark-modern.png', name: 'vscode-multiroot.png', clip: { x: 0, y: 0, width: 348, height: 580 } },
  // The Plans view alone in Dark Modern (test/ui/plans.mjs: a running plan and an ended one with its five tasks), down to its last row.
  { shot: 'plans.dark-modern.png', name: 'vscode-plans.png', clip: { x: 0, y: 0, width: 300, height: 232 } },
  // The ended plan's page in Dark Modern: its tab, facts, graph of needs with the critical path, and the top of its task list.
  { shot: 'plan.dark-modern.png', name: 'vscode-plan-page.png', clip: { x: 348, y: 35, width: 1052, height: 800 } },
  // VS Code's MCP: List Servers in that window: the server the extension offers for each MAM folder (docs/vscode.md).
  { shot: 'multiroot-mcp.png', name: 'vscode-mcp.png', clip: { x: 396, y: 2, width: 610, height: 116 } },
];

// A shot older than the bundle it shows is from an earlier run, not from this build.
const built = fs.statSync(path.join(REPO_ROOT, 'dist/extension.js')).mtimeMs;
const stale = SHOTS.filter(({ shot }) => !(fs.statSync(path.join(FROM, shot), { throwIfNoEntry: false })?.mtimeMs >= built));
if (stale.length > 0) {
  console.error(`[screenshots] ${stale.map((s) => `test-output/${s.shot}`).join(', ')}: missing or older than dist/extension.js; run npm run test:ui first`);
  process.exit(1);
}

fs.mkdirSync(TO, { recursive: true });
await withChromium('screenshots', async (browser) => {
  for (const { shot, name, clip } of SHOTS) {
    const png = fs.readFileSync(path.join(FROM, shot));
    const page = await browser.newPage({ viewport: { width: png.readUInt32BE(16), height: png.readUInt32BE(20) }, deviceScaleFactor: 1 });
    await page.setContent(`<body style="margin:0"><img id="shot" src="data:image/png;base64,${png.toString('base64')}"></body>`);
    await page.evaluate(() => document.getElementById('shot').decode());
    const target = path.join(TO, name);
    await page.screenshot({ path: target, clip });
    await page.close();
    console.log(`[screenshots] test-output/${shot} → docs/images/${name} (${clip.width}×${clip.height}, ${Math.round(fs.statSync(target).size / 1024)} KB)`);
  }
});
