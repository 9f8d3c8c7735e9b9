// Colour themes and text contrast inside a webview, for scripts/vscode/run.mjs (--theme, --contrast):
// switch VS Code's colour theme through its theme picker, then read the computed colours
// of elements in the webview's frame and check them against WCAG 2.x: text at least 4.5:1 on
// what is behind it, and in a high-contrast theme every button drawn with a border (3:1).
export const MIN_TEXT_CONTRAST = 4.5;
export const MIN_BORDER_CONTRAST = 3;

/** `#hex`, `rgb(…)`, `rgba(…)` or `color(srgb r g b / a)` (how Chromium gives computed colours) as [r, g, b, a] in 0–255 and 0–1. */
export function parseColor(css) {
  const text = String(css).trim();
  if (text === 'transparent') return [0, 0, 0, 0];
  const h = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.exec(text)?.[1];
  if (h) {
    const digits = h.length <= 4 ? [...h].map((d) => d + d) : h.match(/../g);
    const [r, g, b, a = 255] = digits.map((d) => parseInt(d, 16));
    return [r, g, b, a / 255];
  }
  let m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/.exec(text);
  if (m) return [Number(m[1]), Number(m[2]), Number(m[3]), alpha(m[4])];
  m = /^color\(srgb\s+([\d.e+-]+)\s+([\d.e+-]+)\s+([\d.e+-]+)(?:\s*\/\s*([\d.]+%?))?\s*\)$/.exec(text);
  if (m) return [Number(m[1]) * 255, Number(m[2]) * 255, Number(m[3]) * 255, alpha(m[4])];
  throw new Error(`cannot read the colour ${JSON.stringify(text)}`);
}

function alpha(a) {
  if (a === undefined) return 1;
  return a.endsWith('%') ? Number(a.slice(0, -1)) / 100 : Number(a);
}

/** `top` painted over the opaque `bottom`. */
export function composite(top, bottom) {
  const a = top[3];
  return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1);
}

/** What is behind an element: its own and its ancestors' backgrounds (innermost first) over `base`, down to the first opaque one. */
export function effectiveBackground(layers, base) {
  const stack = [];
  for (const layer of layers) {
    stack.push(layer);
    if (layer[3] >= 1) break;
  }
  let colour = stack.at(-1)?.[3] >= 1 ? stack.pop() : base;
  for (const layer of stack.reverse()) colour = composite(layer, colour);
  return colour;
}

export function relativeLuminance([r, g, b]) {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

export function contrastRatio(a, b) {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

export const hex = (c) => `#${c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;

/** In the webview's frame: the raw computed colours of every element each selector matches (at most 40 each). */
function readColours(selectors) {
  const base = getComputedStyle(document.documentElement).getPropertyValue('--vscode-editor-background').trim();
  const highContrast = document.body.classList.contains('vscode-high-contrast') || document.body.classList.contains('vscode-high-contrast-light');
  return {
    base,
    highContrast,
    theme: document.body.dataset.vscodeThemeName || document.body.dataset.vscodeThemeId || '',
    matches: selectors.map((selector) => ({
      selector,
      elements: [...document.querySelectorAll(selector)].filter((e) => e.getClientRects().length > 0).slice(0, 40).map((e) => {
        const style = getComputedStyle(e);
        const layers = [];
        for (let n = e; n; n = n.parentElement) layers.push(getComputedStyle(n).backgroundColor);
        return {
          text: (e.innerText || e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40),
          button: e.tagName === 'BUTTON',
          color: style.color,
          layers,
          borderWidth: parseFloat(style.borderTopWidth) || 0,
          borderStyle: style.borderTopStyle,
          borderColor: style.borderTopColor,
        };
      }),
    })),
  };
}

/**
 * Measures `selectors` in the frame: returns one line per selector (its lowest ratio) and the
 * failures (text below 4.5:1, a selector that matches nothing, a button without a border in a
 * high-contrast theme).
 */
export async function measureContrast(frame, selectors) {
  const seen = await frame.evaluate(readColours, selectors);
  const base = parseColor(seen.base || 'rgb(255, 255, 255)');
  const lines = [];
  const failures = [];
  for (const { selector, elements } of seen.matches) {
    if (elements.length === 0) {
      failures.push(`${selector}: matches nothing visible`);
      continue;
    }
    let worst;
    for (const e of elements) {
      const bg = effectiveBackground(e.layers.map(parseColor), base);
      const fg = composite(parseColor(e.color), bg);
      const ratio = contrastRatio(fg, bg);
      if (!worst || ratio < worst.ratio) worst = { ratio, fg, bg, text: e.text };
      if (ratio < MIN_TEXT_CONTRAST) failures.push(`${selector} "${e.text}": ${ratio.toFixed(2)}:1 (${hex(fg)} on ${hex(bg)}), below ${MIN_TEXT_CONTRAST}:1`);
      if (seen.highContrast && e.button) {
        const border = e.borderWidth >= 1 && e.borderStyle !== 'none' ? composite(parseColor(e.borderColor), bg) : undefined;
        const outside = effectiveBackground(e.layers.slice(1).map(parseColor), base);
        const borderRatio = border ? contrastRatio(border, outside) : 0;
        if (borderRatio < MIN_BORDER_CONTRAST) failures.push(`${selector} "${e.text}": a button without a visible border in a high-contrast theme (${border ? `${hex(border)} on ${hex(outside)}, ${borderRatio.toFixed(2)}:1` : 'none'})`);
      }
    }
    lines.push(`${selector}: ${elements.length} measured, lowest ${worst.ratio.toFixed(2)}:1 ("${worst.text}", ${hex(worst.fg)} on ${hex(worst.bg)})`);
  }
  return { theme: seen.theme, lines, failures };
}

/** The frame of the webview that shows `selector`. */
export async function webviewFrame(page, selector, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (frame === page.mainFrame()) continue;
      if ((await frame.locator(selector).count().catch(() => 0)) > 0) return frame;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no webview showed ${selector} within ${timeoutMs / 1000} s`);
}

/**
 * Switches the colour theme as a user does — Preferences: Color Theme, then the theme by its label
 * (`Light Modern`, `Dark High Contrast` …) — and waits until the webview in `frame` has been
 * restyled: its `data-vscode-theme-name` is that label; without a frame, until the workbench shows
 * the theme's kind (its `vs`, `vs-dark`, `hc-black` or `hc-light` class: switch between kinds, as
 * two themes of one kind look the same to this wait). (Writing
 * workbench.colorTheme into the run's settings.json works at startup only: code-server does not
 * pick up later edits of it.)
 */
export async function pickColorTheme(page, frame, label, timeoutMs = 30_000) {
  await page.evaluate(() => document.activeElement?.blur?.()); // keys go to the workbench, not the webview
  await page.keyboard.press('F1');
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('input');
  await input.waitFor({ timeout: 10_000 });
  await input.fill('>Preferences: Color Theme');
  await widget.locator('.monaco-list-row', { hasText: 'Preferences: Color Theme' }).first().click({ timeout: 10_000 });
  await input.fill(label);
  const row = widget.locator('.monaco-list-row').filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) }).first();
  await row.click({ timeout: 10_000 });
  await widget.waitFor({ state: 'hidden', timeout: 10_000 });
  const deadline = Date.now() + timeoutMs;
  // The workbench names only the theme's kind: a dark, light or high-contrast class on its root.
  const kind = /high contrast/i.test(label) ? (/light/i.test(label) ? 'hc-light' : 'hc-black') : /light/i.test(label) ? 'vs' : 'vs-dark';
  const probe = frame
    ? () => frame.evaluate(() => document.body.dataset.vscodeThemeName ?? '').catch(() => undefined)
    : () => page.evaluate((k) => (document.querySelector('.monaco-workbench')?.classList.contains(k) ? k : [...(document.querySelector('.monaco-workbench')?.classList ?? [])].join(' ')), kind);
  const wanted = frame ? label : kind;
  let shown;
  for (;;) {
    shown = await probe();
    if (shown === wanted) break;
    if (Date.now() > deadline) throw new Error(`the theme did not change to ${label} within ${timeoutMs / 1000} s (the webview shows ${JSON.stringify(shown)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // The page restyles when the webview gets the new variables: give layout two frames to settle.
  await (frame ?? page).evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}
