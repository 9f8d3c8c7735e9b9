// Debian's Chromium through the project's playwright-core, for the scripts that draw pictures
// (scripts/icon.mjs, scripts/screenshots.mjs): headless, its profile and caches in a temp folder.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CHROMIUM } from './vscode/install.mjs';

/** Runs `use(browser)` in a fresh headless Chromium whose profile lives in a temp folder, removed afterwards. */
export async function withChromium(tag, use) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `mam-${tag}-`));
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    env: { ...process.env, HOME: scratch, XDG_CONFIG_HOME: scratch, XDG_CACHE_HOME: scratch },
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    return await use(browser);
  } finally {
    await browser.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
