import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The core keeps time on a `Clock` (src/core/base/clock.ts) that its owner hands it — the job
 * engine's, which tests replace with a fake — not on the globals. These are the places still on
 * the globals, each with why, and how many uses each holds; a new use (a file not listed, or one
 * more in a listed file) fails, and so does a count that fell (lower it here).
 */
const ALLOWED: Readonly<Record<string, { uses: number; why: string }>> = {
  'base/process.ts': { uses: 3, why: 'sleep() and the kill grace: process-level waits on real OS processes' },
  'base/git.ts': { uses: 1, why: "a process-wide cache of git's hardening flags, aged in real time" },
  'store/lock.ts': { uses: 6, why: "lock staleness is compared with another process's writes (file mtime, wall clock); the retry waits on other processes, and the wait for this process's earlier callers is bounded by the same timeout" },
  'store/sessionRegistry.ts': { uses: 2, why: "session rows' updated_at is read by other processes (reconcile, recovery); a corrupt file's name" },
  'store/jobStore.ts': { uses: 1, why: 'update() is on no engine path (the ledger stamps what it writes with the engine clock); the store has no clock' },
  'mux/inject.ts': { uses: 19, why: "typing into a real pane: polls a real program's screen, in real time" },
  'mux/herdr.ts': { uses: 7, why: "starting, stopping and asking a real herdr server over its socket" },
  'messaging/publisher.ts': { uses: 3, why: "`mam event` (its own lean bundle): the event's ts is read against other processes' clocks; retries on a real socket" },
  'messaging/quickPublish.ts': { uses: 1, why: "`mam event`'s socket timeout" },
  'messaging/mqttProbe.ts': { uses: 1, why: 'a socket timeout (CONNACK) on a real broker' },
  'messaging/mqttClient.ts': { uses: 1, why: 'a socket timeout connecting to a real broker' },
  'messaging/embeddedBroker.ts': { uses: 7, why: "starting and probing the broker daemon (another process); the daemon's log and a corrupt file's name" },
  'messaging/brokerDaemon.ts': { uses: 5, why: 'the daemon process itself: watching its record and folder, the close bound, its record and stats stamps' },
  'sessions/sessionService.ts': { uses: 5, why: "waits on real panes and agents' stores; rows' times are read against the agents' own stores" },
  'sessions/conversationLearning.ts': { uses: 2, why: "waits, bounded, for a conversation to appear in an agent's own store (another process's files)" },
  'sessions/sessionStatus.ts': { uses: 2, why: 'reconcile reads rows other processes stamped (the placement grace)' },
  'sessions/orchestrators.ts': { uses: 1, why: 'registered_at of an orchestrator conversation, read by people and other processes' },
  'init/manifest.ts': { uses: 1, why: "`mam init`'s manifest stamp: no engine runs there" },
  'demo/demo.ts': { uses: 2, why: "the demo's duration as a person waits it out, with real agents" },
  'demo/narration.ts': { uses: 2, why: 'the narration shows the real seconds since the demo began' },
  'recovery.ts': { uses: 1, why: 'resume --all reads rows another process stamped (the placement grace)' },
};

const CORE = path.resolve(__dirname, '../../src/core');
/** Where the globals belong: the system clock itself. */
const CLOCK_FILE = 'base/clock.ts';

const USES: ReadonlyArray<[string, RegExp]> = [
  ['Date.now()', /(?<![\w$.])Date\s*\.\s*now\s*\(/g],
  ['new Date()', /(?<![\w$.])new\s+Date\s*\(\s*\)/g],
  ['setTimeout()', /(?<![\w$.])(?:globalThis\s*\.\s*)?setTimeout\s*\(/g],
  ['setInterval()', /(?<![\w$.])(?:globalThis\s*\.\s*)?setInterval\s*\(/g],
];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/**
 * The code alone: comments and the text of string, template and regex literals blanked (a
 * template's `${…}` stays code), newlines kept so that line numbers hold.
 */
export function codeOnly(source: string): string {
  let out = '';
  let i = 0;
  const braces: number[] = []; // per open template expression: the depth of `{` inside it
  let lastSignificant = '';
  const blank = (s: string): string => s.replace(/[^\n]/g, ' ');
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      const stop = end < 0 ? source.length : end;
      out += blank(source.slice(i, stop));
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out += blank(source.slice(i, stop));
      i = stop;
    } else if (c === '"' || c === "'" || (c === '/' && regexMayStart(lastSignificant, out))) {
      // A string, or a regex literal.
      let j = i + 1;
      let inClass = false;
      while (j < source.length && source[j] !== '\n') {
        if (source[j] === '\\') j += 2;
        else if (c === '/' && source[j] === '[') (inClass = true), j++;
        else if (c === '/' && source[j] === ']') (inClass = false), j++;
        else if (source[j] === c && !inClass) break;
        else j++;
      }
      out += c + blank(source.slice(i + 1, j)) + (source[j] ?? '');
      i = j + 1;
      lastSignificant = 'x';
    } else if (c === '`' || (c === '}' && braces.length > 0 && braces[braces.length - 1] === 0)) {
      // A template's text, from its start or from the end of a `${…}`, to its end or the next `${`.
      if (c === '}') braces.pop();
      let j = i + 1;
      while (j < source.length && source[j] !== '`' && !(source[j] === '$' && source[j + 1] === '{')) j += source[j] === '\\' ? 2 : 1;
      out += c + blank(source.slice(i + 1, j));
      if (source[j] === '$') {
        out += '${';
        braces.push(0);
        i = j + 2;
        lastSignificant = '{';
      } else {
        out += source[j] ?? '';
        i = j + 1;
        lastSignificant = 'x';
      }
    } else {
      if (braces.length > 0 && c === '{') braces[braces.length - 1]!++;
      if (braces.length > 0 && c === '}') braces[braces.length - 1]!--;
      out += c;
      if (!/\s/.test(c)) lastSignificant = c;
      i++;
    }
  }
  return out;
}

/** A `/` starts a regex literal, not a division, where no value has just ended. */
function regexMayStart(lastSignificant: string, before: string): boolean {
  return /^$|[(,=:[!&|?{};+\-*%<>~^]$/.test(lastSignificant) || /\b(?:return|typeof|case|of|in)\s*$/.test(before);
}

interface Use {
  file: string;
  line: number;
  what: string;
}

function globalTimeUses(): Use[] {
  const uses: Use[] = [];
  for (const full of sourceFiles(CORE)) {
    const file = path.relative(CORE, full).split(path.sep).join('/');
    if (file === CLOCK_FILE) continue;
    const code = codeOnly(fs.readFileSync(full, 'utf8'));
    for (const [what, pattern] of USES) {
      for (const m of code.matchAll(pattern)) uses.push({ file, line: code.slice(0, m.index).split('\n').length, what });
    }
  }
  return uses;
}

describe('time in src/core is kept on an injected Clock', () => {
  it('the scanner sees code only: not comments or strings, but template expressions and calls after a regex', () => {
    const src = [
      '// Date.now() in a comment',
      "const a = 'setTimeout(' + \"new Date()\";",
      '/* setInterval(f, 1) */ const b = `at ${new Date().toISOString()} setTimeout(`;',
      "const c = /'/.test(x) && Date.now();",
      'const d = clock.setTimeout(f, 1) + this.clock.now() + new Date(0).getTime();',
    ].join('\n');
    const code = codeOnly(src);
    assert.equal(code.split('\n').length, 5, 'lines are kept');
    const found = USES.flatMap(([what, p]) => [...code.matchAll(p)].map(() => what));
    assert.deepEqual(found.sort(), ['Date.now()', 'new Date()']);
  });

  it(`no Date.now(), new Date(), setTimeout() or setInterval() outside ${CLOCK_FILE} but the places allowed, each for its reason`, () => {
    const uses = globalTimeUses();
    const byFile = new Map<string, Use[]>();
    for (const u of uses) byFile.set(u.file, [...(byFile.get(u.file) ?? []), u]);
    const problems: string[] = [];
    for (const [file, found] of byFile) {
      const allowed = ALLOWED[file]?.uses ?? 0;
      if (found.length > allowed) {
        problems.push(`src/core/${file}: ${found.length} uses of the global clock, ${allowed} allowed: take a Clock (the engine's) instead, or add it to ALLOWED with why\n${found.map((u) => `    line ${u.line}: ${u.what}`).join('\n')}`);
      }
    }
    for (const [file, { uses: allowed }] of Object.entries(ALLOWED)) {
      const found = byFile.get(file)?.length ?? 0;
      if (found < allowed) problems.push(`src/core/${file}: ${found} uses of the global clock, ${allowed} allowed: lower its count in ALLOWED`);
    }
    assert.deepEqual(problems, []);
  });

  it('every allowed place says why', () => {
    for (const [file, { why }] of Object.entries(ALLOWED)) assert.ok(why.length > 20, `${file}: say why it keeps the global clock`);
  });
});
