import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { shellQuote } from '../../src/core/mux/shellQuote';
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

describe('shellQuote', () => {
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
    let word = '';
    for (let c = 1; c < 128; c++) word += String.fromCharCode(c);
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
