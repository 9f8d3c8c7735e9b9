import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

type Rgba = number[];
interface Contrast {
  parseColor(css: string): Rgba;
  composite(top: Rgba, bottom: Rgba): Rgba;
  effectiveBackground(layers: Rgba[], base: Rgba): Rgba;
  contrastRatio(a: Rgba, b: Rgba): number;
  hex(c: Rgba): string;
}

describe('the contrast check of the UI harness (scripts/vscode/contrast.mjs) computes WCAG ratios', () => {
  let c: Contrast;
  before(async () => {
    // A plain .mjs script of the harness (no types of its own), loaded as run.mjs loads it.
    c = (await import(pathToFileURL(path.join(__dirname, '../../scripts/vscode/contrast.mjs')).href)) as Contrast;
  });

  it('reads the colours Chromium computes', () => {
    assert.deepEqual(c.parseColor('rgb(204, 204, 204)'), [204, 204, 204, 1]);
    assert.deepEqual(c.parseColor('rgba(0, 0, 0, 0.5)'), [0, 0, 0, 0.5]);
    assert.deepEqual(c.parseColor('transparent'), [0, 0, 0, 0]);
    assert.deepEqual(c.parseColor('#1f1f1f'), [31, 31, 31, 1]);
    assert.deepEqual(c.parseColor('#fff'), [255, 255, 255, 1]);
    assert.deepEqual(c.parseColor('#00000080'), [0, 0, 0, 128 / 255]);
    assert.deepEqual(c.parseColor('color(srgb 1 0.5 0 / 0.16)'), [255, 127.5, 0, 0.16]);
    assert.throws(() => c.parseColor('oklch(0.7 0.1 120)'), /cannot read the colour/);
  });

  it('gives the WCAG reference ratios', () => {
    const black = [0, 0, 0, 1];
    const white = [255, 255, 255, 1];
    assert.equal(c.contrastRatio(black, white).toFixed(2), '21.00');
    assert.equal(c.contrastRatio(white, white).toFixed(2), '1.00');
    assert.equal(c.contrastRatio([0x77, 0x77, 0x77, 1], white).toFixed(2), '4.48', '#777 on white just fails AA');
    assert.equal(c.contrastRatio([0x76, 0x76, 0x76, 1], white).toFixed(2), '4.54', '#767676 on white just passes');
    // The case: white on Dark Modern's testing.iconPassed (#73c991).
    assert.ok(c.contrastRatio(white, [0x73, 0xc9, 0x91, 1]) < 2.1);
  });

  it('composites translucent layers down to the first opaque one, else over the editor background', () => {
    const base = [31, 31, 31, 1];
    assert.deepEqual(c.effectiveBackground([[0, 0, 0, 0], [0, 0, 0, 0]], base), base, 'all transparent: the editor background');
    assert.deepEqual(c.effectiveBackground([[255, 255, 255, 0.5], [0, 0, 0, 1], [255, 0, 0, 1]], base).map(Math.round), [128, 128, 128, 1], 'stops at the first opaque layer');
    assert.equal(c.hex(c.composite([115, 201, 145, 0.16], base)), '#2c3a31');
  });
});
