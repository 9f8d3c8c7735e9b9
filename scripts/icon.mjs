#!/usr/bin/env node
/**
 * Renders the extension icon, docs/images/icon.svg, to media/icon.png (128×128, transparent corners): the
 * PNG the marketplace and the Extensions view show (vsce refuses an SVG icon). Offline: the SVG is
 * drawn by Debian's Chromium through the project's playwright-core, as the UI tests do.
 *
 *   node scripts/icon.mjs                      regenerate media/icon.png
 *   node scripts/icon.mjs --preview FILE       also write FILE: the icon at 128, 64 and 32 px on the
 *                                              light and dark backgrounds of VS Code's themes, to look at
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { withChromium } from './chromium.mjs';
import { CHROMIUM, REPO_ROOT } from './vscode/install.mjs';

const SOURCE = path.join(REPO_ROOT, 'docs/images/icon.svg');
const TARGET = path.join(REPO_ROOT, 'media/icon.png');
const SIZE = 128;
// The Extensions view and the marketplace in VS Code's default themes (Light Modern, Dark Modern, the two high-contrast ones).
const BACKGROUNDS = ['#ffffff', '#f8f8f8', '#1f1f1f', '#181818', '#000000'];

const { values } = parseArgs({ options: { preview: { type: 'string' } } });
if (!fs.existsSync(CHROMIUM)) {
  console.error(`[icon] ${CHROMIUM} is missing: apt-get install chromium`);
  process.exit(1);
}

const svg = `data:image/svg+xml;base64,${fs.readFileSync(SOURCE).toString('base64')}`;
await withChromium('icon', async (browser) => {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE }, deviceScaleFactor: 1 });
  await page.setContent(`<body style="margin:0;background:transparent"><img id="icon" src="${svg}" width="${SIZE}" height="${SIZE}"></body>`);
  await page.evaluate(() => document.getElementById('icon').decode());
  await page.screenshot({ path: TARGET, omitBackground: true, clip: { x: 0, y: 0, width: SIZE, height: SIZE } });
  const png = fs.readFileSync(TARGET);
  console.log(`[icon] ${path.relative(REPO_ROOT, TARGET)}: ${png.readUInt32BE(16)}×${png.readUInt32BE(20)}, ${png.length} bytes`);

  if (values.preview) {
    const sizes = [128, 64, 32];
    const cell = (bg) => `<div style="background:${bg};padding:16px;display:flex;gap:16px;align-items:center">${sizes.map((s) => `<img src="${svg}" width="${s}" height="${s}">`).join('')}</div>`;
    const sheet = await browser.newPage({ viewport: { width: 320, height: BACKGROUNDS.length * 160 }, deviceScaleFactor: 1 });
    await sheet.setContent(`<body style="margin:0">${BACKGROUNDS.map(cell).join('')}</body>`);
    await sheet.evaluate(() => Promise.all([...document.images].map((i) => i.decode())));
    fs.mkdirSync(path.dirname(path.resolve(values.preview)), { recursive: true });
    await sheet.locator('body').screenshot({ path: values.preview });
    console.log(`[icon] preview: ${values.preview}`);
  }
});
