import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { doubleQuote, shellLine, shellQuote, splitWords } from '../../src/core/base/shellWords';
import { tempDir } from '../support/helpers';

/**
 * What a shell makes of a quoted line: the line goes to the shell on stdin, as typing it into a
 * pane would, and `printf` prints every word it received NUL-terminated.
 */
function throughShell(shell: readonly string[], words: string[], cwd: string): string[] {
  const line = `exec printf '%s\\0' ${shellQuote(words)}\n`;
  const r = spawnSync(shell[0]!, shell.slice(1), { input: line, cwd, encoding: 'utf8', timeout: 10_000 });
  assert.equal(r.status, 0, `${shell.join(' ')} failed: ${r.stderr}`);
  const out = r.stdout.split('\0');
  assert.equal(out.pop(), '', 'output ends with a NUL');
  return out;
}

/** The shells a pane may run; bash also interactive, as in a pane, where `!` means history expansion. */
const SHELLS = [['/bin/sh'], ['/bin/bash'], ['/bin/bash', '--norc', '-i'], ['/usr/bin/zsh', '-f'], ['/usr/bin/fish', '--no-config']].filter((s) => fs.existsSync(s[0]!));

const cases: Record<string, string[]> = {
  'plain words': ['node', '/usr/bin/env', 'a'],
  spaces: ['with space', '  leading and trailing  '],
  quotes: ["it's", '"double"', "''", "'", "a'b'c", `mixed "'" quotes`],
  'command substitution': ['$(touch PWNED)', '${HOME}', '$HOME', '$((1+2))'],
  backticks: ['`touch PWNED`', 'a`b'],
  newlines: ['line1\nline2', '\n', 'trailing\n'],
  Korean: ['한국어 텍스트', '끝'],
  backslashes: ['\\', 'a\\b', '\\\\', "\\'", 'C:\\path\\n', 'end\\'],
  'empty strings': ['', 'between', ''],
  'shell syntax': [';', '&&', '|', '>', '<', '&', '*', '?', '[a]', '{b,c}', '~', '#', '!', '!!', 'a=b', '-n', '--'],
};

/** Every ASCII character, control characters included. */
const ASCII = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join('');

/** What `sh -c` makes of a line holding `quoted`: the words printf receives, NUL-terminated. */
function throughShC(quoted: string, cwd: string): string[] {
  const out = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${quoted}`], { cwd, encoding: 'utf8', timeout: 10_000 }).split('\0');
  assert.equal(out.pop(), '', 'output ends with a NUL');
  return out;
}

describe('splitWords', () => {
  it('splits a command line into words without interpreting anything', () => {
    assert.deepEqual(splitWords('node  /x/agent.js --as claude'), ['node', '/x/agent.js', '--as', 'claude']);
    assert.deepEqual(splitWords(`say 'it''s' "a \\"b\\" \\\\c" d\\ e`), ['say', 'its', 'a "b" \\c', 'd e']);
    assert.deepEqual(splitWords('echo $(rm -rf ~) | cat > x; `y` *'), ['echo', '$(rm', '-rf', '~)', '|', 'cat', '>', 'x;', '`y`', '*']);
    assert.deepEqual(splitWords(`'' ""`), ['', '']);
    // What brief.ts writes: double quotes in which a backslash escapes " \ $ and `.
    assert.deepEqual(splitWords('node "/a b/c.js" event started --workspace "/x\\"y\\$z\\`w\\\\v"'), ['node', '/a b/c.js', 'event', 'started', '--workspace', '/x"y$z`w\\v']);
    assert.deepEqual(splitWords('"a\\nb"'), ['a\\nb'], 'other backslashes in double quotes stay');
    assert.deepEqual(splitWords('  '), []);
    assert.throws(() => splitWords("echo 'open"), /unterminated '/);
    assert.throws(() => splitWords('echo "open'), /unterminated "/);
    assert.throws(() => splitWords('trailing\\'), /cannot end with a backslash/);
  });

  for (const [name, words] of Object.entries(cases)) {
    it(`reads back ${name} as shellQuote, shellLine and doubleQuote wrote them`, () => {
      assert.deepEqual(splitWords(shellQuote(words)), words);
      assert.deepEqual(splitWords(shellLine(words)), words);
      assert.deepEqual(splitWords(words.map(doubleQuote).join(' ')), words);
    });
  }

  it('reads back every ASCII character from each quoting', () => {
    const words = [ASCII, `x${ASCII}x`, ''];
    assert.deepEqual(splitWords(shellQuote(words)), words);
    assert.deepEqual(splitWords(shellLine(words)), words);
    assert.deepEqual(splitWords(words.map(doubleQuote).join(' ')), words);
  });
});

describe('each quoting through sh -c', () => {
  for (const [name, words] of Object.entries(cases)) {
    it(`gives back ${name}, running nothing`, () => {
      const cwd = tempDir('quote');
      assert.deepEqual(throughShC(shellQuote(words), cwd), words);
      assert.deepEqual(throughShC(words.map(doubleQuote).join(' '), cwd), words);
      assert.deepEqual(throughShC(shellLine(words), cwd), words);
      assert.deepEqual(fs.readdirSync(cwd), [], 'nothing in the words ran');
    });
  }

  it('double-quote with a backslash before " \\ $ and ` only, and leave plain words bare in a printed line', () => {
    assert.equal(doubleQuote('/a b/c.js'), '"/a b/c.js"');
    assert.equal(doubleQuote('x"y$z`w\\v'), '"x\\"y\\$z\\`w\\\\v"');
    assert.equal(shellLine(['tmux', '-L', 'mam-demo-1', 'attach-session', '-t', '%3', 'a b', '']), "tmux -L mam-demo-1 attach-session -t %3 'a b' ''");
  });
});

describe('shellQuote', () => {

  for (const shell of SHELLS) {
    for (const [name, words] of Object.entries(cases)) {
      it(`round-trips ${name} through ${shell.join(' ')}`, () => {
        const cwd = tempDir('quote');
        assert.deepEqual(throughShell(shell, words, cwd), words);
        assert.deepEqual(fs.readdirSync(cwd), [], 'nothing in the words ran');
      });
    }
  }

  // A line editor (bash's readline here) acts on control characters typed into it — a tab
  // completes — so herdr.ts refuses them in a typed line; a shell reading a script takes them as is.
  it('round-trips every ASCII character, control characters included, through a non-interactive shell', () => {
    const word = ASCII;
    for (const shell of SHELLS.filter((s) => !s.includes('-i'))) {
      assert.deepEqual(throughShell(shell, [word, `x${word}x`, 'tab\there'], tempDir('quote')), [word, `x${word}x`, 'tab\there']);
    }
  });

  it('quotes an empty word as an empty string and keeps plain words in single quotes', () => {
    assert.equal(shellQuote(['']), "''");
    assert.equal(shellQuote(['a b', "it's"]), "'a b' 'it'\\''s'");
    assert.equal(shellQuote(['a\\b']), "'a'\\\\'b'");
    assert.equal(shellQuote([]), '');
  });
});
