import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/helpers';

/**
 * The VSIX holds only what `.vscodeignore` lets through (`**`, then `!dist/…` for each file). Every
 * bundle the shipped code loads or names beside itself (`path.join(__dirname, 'x.js')`,
 * `<dist>/delegate-job.js` in the skills) must be let through, or the installed extension fails
 * where the development build works (`mam mcp` did: its bundle was left out).
 */
describe('the VSIX holds every bundle the shipped code loads', () => {
  function sources(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const file = path.join(dir, e.name);
      return e.isDirectory() ? sources(file) : e.name.endsWith('.ts') ? [file] : [];
    });
  }

  it('each dist/*.js named in src is let through by .vscodeignore', () => {
    const named = new Set<string>();
    for (const file of sources(path.join(REPO_ROOT, 'src'))) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/path\.join\(__dirname, '([\w.-]+\.js)'\)/g)) named.add(m[1]!);
      for (const m of text.matchAll(/'(delegate-job\.js)'/g)) named.add(m[1]!);
    }
    assert.ok(named.has('mcp.js') && named.has('cli-event.js') && named.has('cli-event-publish.js') && named.has('delegate-job.js'), `found: ${[...named].join(', ')}`);
    const shipped = new Set(fs.readFileSync(path.join(REPO_ROOT, '.vscodeignore'), 'utf8').split('\n').filter((l) => l.startsWith('!dist/')).map((l) => l.slice('!dist/'.length).trim()));
    const missing = [...named].filter((name) => !shipped.has(name));
    assert.deepEqual(missing, [], `.vscodeignore leaves out ${missing.join(', ')}`);
  });
});
