import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

/**
 * What the README, CONTRIBUTING.md and docs/ name must exist: every repository path they show (in
 * backticks or as a link), every `mam …` command (the built CLI is asked, `--help` exit 0), every
 * `npm run X` script. A doc that drifts from the code fails here, not in a reader's terminal.
 */

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'dist/cli.js');
/** Top-level folders of the repository whose paths a doc may name in backticks. */
const CHECKED_ROOTS = ['src', 'scripts', 'test', 'docs', 'bench', 'media', '.ci'];
const run = promisify(execFile);
/** References about another project: herdr's own source files, which are not ours to check. */
const FOREIGN = ['docs/herdr-socket-api.md'];

export interface DocRefs {
  /** Paths relative to the repository root, with the line that names them. */
  paths: Array<{ path: string; line: number }>;
  /** `mam` command words, e.g. ['session', 'create'] (alternatives `a|b` already split). */
  commands: Array<{ words: string[]; line: number }>;
  scripts: Array<{ name: string; line: number }>;
}

export function docFiles(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs.sort()].filter((f) => !FOREIGN.includes(f));
}

/** The code a markdown text shows: fenced blocks and inline spans, each with its line number. */
function codeOf(text: string): Array<{ code: string; line: number }> {
  const found: Array<{ code: string; line: number }> = [];
  let fenced = false;
  text.split('\n').forEach((lineText, i) => {
    if (/^\s*```/.test(lineText)) {
      fenced = !fenced;
      return;
    }
    if (fenced) found.push({ code: lineText, line: i + 1 });
    else for (const m of lineText.matchAll(/`([^`]+)`/g)) found.push({ code: m[1]!, line: i + 1 });
  });
  return found;
}

/** `mam a b`, `node dist/cli.js a b`: up to two lowercase words, each possibly `x|y|z`. */
function commandsIn(code: string): string[][] {
  const out: string[][] = [];
  for (const m of code.matchAll(/(?:^|[\s(;&|])(?:mam|\S*dist\/cli\.js)((?:\s+[a-z][a-z|-]*)*)/g)) {
    const words = m[1]!.trim().split(/\s+/).filter(Boolean).slice(0, 2);
    if (words.length === 0) continue;
    const firsts = words[0]!.split('|');
    const seconds = words[1]?.split('|') ?? [undefined];
    for (const a of firsts) for (const b of seconds) out.push(b === undefined ? [a] : [a, b]);
  }
  return out;
}

/** A path token, cleaned of line numbers and trailing punctuation; undefined if it is no repository path. */
function repoPath(token: string, fromDir: string, isLink: boolean): string | undefined {
  let p = token.trim().replace(/#.*$/, '').replace(/:\d+(-\d+)?$/, '').replace(/[.,;:)]+$/, '');
  if (!p || /^[a-z]+:/i.test(p) || p.startsWith('#')) return undefined; // a URL or an anchor
  if (/[<>{}…$]|\s/.test(p)) return undefined; // a placeholder or a command line, not a path
  if (isLink) return path.posix.normalize(path.posix.join(fromDir, p));
  const first = p.split('/')[0]!;
  return p.includes('/') && CHECKED_ROOTS.includes(first) ? path.posix.normalize(p) : undefined;
}

export function refsOf(file: string, text: string): DocRefs {
  const refs: DocRefs = { paths: [], commands: [], scripts: [] };
  const fromDir = path.posix.dirname(file);
  text.split('\n').forEach((lineText, i) => {
    for (const m of lineText.matchAll(/\]\(([^)\s]+)\)/g)) {
      const p = repoPath(m[1]!, fromDir, true);
      if (p) refs.paths.push({ path: p, line: i + 1 });
    }
  });
  for (const { code, line } of codeOf(text)) {
    // A quoted argument is text for an agent or a shell (`--task "Edit src/signup.js"`), not a path of ours.
    for (const token of code.replace(/"[^"]*"/g, ' ').split(/\s+/)) {
      const p = repoPath(token.replace(/^[("']+|["']+$/g, ''), fromDir, false);
      if (p) refs.paths.push({ path: p, line });
    }
    for (const words of commandsIn(code)) refs.commands.push({ words, line });
    for (const m of code.matchAll(/\bnpm run ([\w:.-]+)/g)) refs.scripts.push({ name: m[1]!, line });
    if (/\bnpm test\b/.test(code)) refs.scripts.push({ name: 'test', line });
  }
  return refs;
}

/** Whether a path exists; `*` in its last part must match at least one entry. */
function exists(p: string): boolean {
  const abs = path.join(ROOT, p);
  if (!p.includes('*')) return fs.existsSync(abs);
  const dir = path.dirname(abs);
  const pattern = new RegExp(`^${path.basename(abs).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  return !path.dirname(p).includes('*') && fs.existsSync(dir) && fs.readdirSync(dir).some((f) => pattern.test(f));
}

describe('the docs name only what exists', function () {
  this.timeout(120_000);
  const files = docFiles();
  const all = files.map((file) => ({ file, refs: refsOf(file, fs.readFileSync(path.join(ROOT, file), 'utf8')) }));

  it('reads the README, CONTRIBUTING.md and docs/, and finds references in them', () => {
    assert.ok(files.includes('docs/protocol.md') && files.includes('docs/control-plane.md') && files.includes('docs/recovery-and-locks.md'));
    const readme = all.find((d) => d.file === 'README.md')!.refs;
    assert.ok(readme.paths.length > 0 && readme.commands.length > 0 && readme.scripts.length > 0, 'the README names paths, commands and scripts');
  });

  it('the README is at most 250 lines', () => {
    assert.ok(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length <= 250);
  });

  it('every repository path they name exists', () => {
    const missing = all.flatMap(({ file, refs }) => refs.paths.filter((r) => !exists(r.path)).map((r) => `${file}:${r.line}: ${r.path}`));
    assert.deepEqual(missing, []);
  });

  it('every `npm run` script they name is in package.json', () => {
    const scripts = Object.keys(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>);
    const missing = all.flatMap(({ file, refs }) => refs.scripts.filter((r) => !scripts.includes(r.name)).map((r) => `${file}:${r.line}: npm run ${r.name}`));
    assert.deepEqual(missing, []);
  });

  it('every `mam` command they show is one the CLI knows (`--help` exits 0)', async () => {
    assert.ok(fs.existsSync(CLI), 'dist/cli.js is missing: npm run build');
    const distinct = new Map<string, string[]>();
    for (const { file, refs } of all) for (const c of refs.commands) {
      const key = c.words.join(' ');
      distinct.set(key, [...(distinct.get(key) ?? []), `${file}:${c.line}`]);
    }
    const unknown: string[] = [];
    for (const [command, where] of distinct) {
      try {
        await run(process.execPath, [CLI, ...command.split(' '), '--help'], { cwd: ROOT, timeout: 30_000 });
      } catch {
        unknown.push(`mam ${command} (${where.join(', ')})`);
      }
    }
    assert.deepEqual(unknown, []);
  });
});

describe('the docs check itself', () => {
  it('finds paths, links, commands with alternatives, and scripts, and skips placeholders', () => {
    const text = [
      'See [the protocol](protocol.md#topics) and `src/core/base/ids.ts:12`, not `.mam/jobs/<id>.json`.',
      '```sh',
      'mam session create --agent claude ; mam loop status|list ID --task "edit src/nowhere.js"',
      'node dist/cli.js demo --keep && npm run bench',
      '```',
    ].join('\n');
    const refs = refsOf('docs/x.md', text);
    assert.deepEqual(refs.paths.map((p) => p.path), ['docs/protocol.md', 'src/core/base/ids.ts']);
    assert.deepEqual(refs.commands.map((c) => c.words.join(' ')), ['session create', 'loop status', 'loop list', 'demo']);
    assert.deepEqual(refs.scripts.map((s) => s.name), ['bench']);
  });
});
