// What scripts/vscode/run.mjs does in the workbench page (playwright-core): open a view container,
// run a command, find a webview. Names and titles come from the extension's package.json.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './install.mjs';

const log = (line) => console.log(`[vscode] ${line}`);
const manifest = () => JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));

/** Clicks the container's activity-bar entry (unless it is open) and waits for its views to render. */
export async function openViewContainer(page, id) {
  const pkg = manifest();
  const container = pkg.contributes?.viewsContainers?.activitybar?.find((c) => c.id === id);
  if (!container) throw new Error(`package.json has no activity-bar view container ${id}`);
  const views = (pkg.contributes.views?.[id] ?? []).map((v) => v.name);
  const entry = page.locator(`.part.activitybar .action-item:has(> a[aria-label^="${container.title}"])`).first();
  await entry.waitFor({ timeout: 60_000 });
  if ((await entry.getAttribute('class'))?.split(/\s+/).includes('checked') !== true) await entry.click();
  // Done when each view shows its tree rows, its welcome text or its message (or is collapsed) and nothing in the
  // container is loading (no progress bar, no progress badge), and that has held for SETTLED_MS: the
  // welcome text shows while the extension is still activating, before its tree has data.
  const SETTLED_MS = 500;
  const deadline = Date.now() + 30_000;
  let settledSince;
  let state;
  for (;;) {
    state = await page.evaluate(viewState, { viewletId: `workbench.view.extension.${id}`, names: views });
    if (!state.ready) settledSince = undefined;
    else if ((settledSince ??= Date.now()) <= Date.now() - SETTLED_MS) break;
    if (Date.now() > deadline) throw new Error(`view container ${id} did not settle within 30 s: ${state.summary}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  log(`view container ${id} ("${container.title}") rendered: ${state.summary}`);
}

/** In the page: what each named view of the viewlet shows, and whether all are rendered and idle. */
function viewState({ viewletId, names }) {
  const viewlet = document.getElementById(viewletId);
  if (!viewlet || viewlet.offsetParent === null) return { ready: false, summary: 'not visible' };
  const panes = [...viewlet.querySelectorAll('.pane')];
  const shown = names.map((name) => {
    const pane = panes.find((p) => p.querySelector('.pane-header .title')?.textContent?.trim().toLowerCase() === name.toLowerCase());
    if (!pane) return [name, undefined];
    if (!pane.querySelector('.pane-header')?.classList.contains('expanded')) return [name, 'collapsed'];
    if (pane.querySelector('.welcome-view-content')?.textContent?.trim()) return [name, 'welcome text'];
    const message = pane.querySelector('.message');
    if (message && message.offsetParent !== null && message.textContent?.trim()) return [name, 'message'];
    const rows = pane.querySelectorAll('.monaco-list-row').length;
    return [name, rows > 0 ? `${rows} rows` : undefined];
  });
  const loading = viewlet.querySelector('.monaco-progress-container.active') !== null || document.querySelector('.part.activitybar .progress-badge') !== null;
  return {
    ready: !loading && shown.every(([, s]) => s !== undefined),
    summary: shown.map(([name, s]) => `${name} (${s ?? 'empty'})`).join(', ') + (loading ? ', loading' : ''),
  };
}

/** The side-bar pane of the view titled `name` (its header and its body). */
export function viewPane(page, name) {
  return page.locator('.part.sidebar .pane').filter({ has: page.locator('.pane-header .title', { hasText: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'i') }) }).first();
}

/** Collapses or expands the side-bar view titled `name` (a click on its header, as a person does) unless it already is. */
export async function setViewExpanded(page, name, expanded) {
  const header = viewPane(page, name).locator('.pane-header').first();
  await header.waitFor({ timeout: 10_000 });
  if ((await header.getAttribute('class'))?.split(/\s+/).includes('expanded') !== expanded) await header.locator('.title').first().click();
  await page.waitForFunction(([el, want]) => el.classList.contains('expanded') === want, [await header.elementHandle(), expanded], { timeout: 5_000 });
  log(`${expanded ? 'expanded' : 'collapsed'} the ${name} view`);
}

/** Runs a contributed command through the command palette, by its "Category: Title". */
export async function runCommand(page, id) {
  const pkg = manifest();
  const command = pkg.contributes?.commands?.find((c) => c.command === id);
  if (!command) throw new Error(`package.json contributes no command ${id}`);
  await runPaletteCommand(page, command.category ? `${command.category}: ${command.title}` : command.title);
  log(`ran ${id}`);
}

/** Runs any command, VS Code's own too, through the command palette by the label it lists (`MCP: List Servers`). */
export async function runPaletteCommand(page, label) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 10_000 });
  await input.fill(`>${label}`);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: label }).first();
  await row.waitFor({ timeout: 10_000 });
  await row.click();
  log(`ran "${label}" from the command palette`);
}

/** Waits until the open quick pick lists a row holding each of `texts`; fails naming those it does not within 30 s. */
export async function expectPickRows(page, texts) {
  const deadline = Date.now() + 30_000;
  for (const text of texts) {
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first();
    await row.waitFor({ timeout: Math.max(1, deadline - Date.now()) }).catch(() => {
      throw new Error(`the quick pick lists no row holding "${text}" within 30 s`);
    });
  }
  log(`the quick pick lists ${texts.map((t) => `"${t}"`).join(', ')}`);
}

/** Answers the quick pick a command opened: the row whose text holds `text`, clicked as a person would. */
export async function answerPick(page, text) {
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first();
  await row.waitFor({ timeout: 10_000 });
  await row.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
  log(`picked "${text}"`);
}

/** Webviews live two iframes deep; returns the text of the first frame matching the selector. */
export async function waitForWebview(page, selector, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (frame === page.mainFrame()) continue;
      const text = await frame.locator(selector).first().innerText({ timeout: 200 }).catch(() => undefined);
      if (text?.trim()) return text.trim();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no webview showed ${selector} within ${timeoutMs / 1000} s`);
}

/** Waits until every text is visible in the side bar or the status bar (tree rows, descriptions, items). */
export async function expectVisible(page, texts) {
  const deadline = Date.now() + 30_000;
  let missing = texts;
  for (;;) {
    missing = await page.evaluate((wanted) => {
      const shown = ['.part.sidebar', '.part.statusbar'].map((sel) => document.querySelector(sel)?.innerText ?? '').join('\n');
      return wanted.filter((t) => !shown.includes(t));
    }, texts);
    if (missing.length === 0) break;
    if (Date.now() > deadline) throw new Error(`not visible within 30 s: ${missing.map((t) => JSON.stringify(t)).join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  log(`visible: ${texts.map((t) => JSON.stringify(t)).join(', ')}`);
}

/**
 * Clicks an inline action of a side-bar tree row, as a user does: hover the row whose text holds
 * `rowText`, click the action titled `title` (it shows once the row's context allows it, so this
 * waits, up to 30 s), and type `input` into the input box it opens.
 */
export async function clickRowAction(page, rowText, title, input) {
  const row = page.locator('.part.sidebar .monaco-list-row', { hasText: rowText }).first();
  const action = row.locator(`.actions a.action-label[aria-label^="${title}"]`).first();
  // The action shows only while its row is hovered, and a tree that re-renders (elapsed times tick)
  // drops the hover between two steps: hover and click again until one click lands.
  const deadline = Date.now() + 30_000;
  for (;;) {
    await row.hover({ timeout: 30_000 });
    const clicked = (await action.isVisible()) && (await action.click({ timeout: 2_000 }).then(() => true, () => false));
    if (clicked) break;
    if (Date.now() > deadline) throw new Error(`the row "${rowText}" shows no "${title}" action that takes a click within 30 s`);
    await page.mouse.move(0, 0);
    await new Promise((r) => setTimeout(r, 200));
  }
  log(`clicked "${title}" on the row "${rowText}"`);
  if (input === undefined) return;
  const box = page.locator('.quick-input-widget input');
  await box.waitFor({ state: 'visible', timeout: 10_000 });
  await box.fill(input);
  // Pressed on the box itself: an editor the previous action opens may take the focus meanwhile.
  await box.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
  log(`answered its input box with ${JSON.stringify(input)}`);
}
