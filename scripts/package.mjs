#!/usr/bin/env node
/**
 * `npm run package` (after the build): the VSIX, made by vsce. Options go to `vsce package`
 * (e.g. `--out FILE`).
 *
 * The README's pictures (docs/images/) are relative links. vsce turns those into absolute ones for
 * a repository on GitHub or GitLab, and refuses to package otherwise; and VS Code's Extensions view
 * does not resolve them against the installed extension, so a relative picture shows as a broken
 * image there. Until package.json names such a repository, the VSIX's README is README.md without
 * those pictures, its other relative links (docs/, CONTRIBUTING.md: not in the VSIX) kept as their
 * text (dist/readme.md); once it does, vsce rewrites them and they show everywhere.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const repository = typeof manifest.repository === 'string' ? manifest.repository : (manifest.repository?.url ?? '');
// The hosts whose repository URL vsce turns into a base for relative links (its guessBaseUrls).
const hosted = /(^|[/@.])(github|gitlab)(\.com[/:]|:)/.test(repository);

const args = ['package', '--no-dependencies', ...process.argv.slice(2)];
if (!hosted) {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  // A picture of docs/images/ alone on its line, and the blank line after it.
  const stripped = readme
    .replace(/^!\[[^\]]*\]\(docs\/images\/[^)\s]+\)[ \t]*\n(\n)?/gm, '')
    .replace(/\[([^\]]+)\]\((?![a-z]+:|#)[^)\s]+\)/g, '$1');
  fs.mkdirSync(path.join(ROOT, 'dist'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'dist/readme.md'), stripped);
  args.push('--readme-path', 'dist/readme.md');
}
const vsce = spawnSync(path.join(ROOT, 'node_modules/.bin/vsce'), args, { cwd: ROOT, stdio: 'inherit' });
process.exit(vsce.status ?? 1);
