import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { INITIAL_FILES, SIGNUP_FILE, TEST_FILE } from '../../src/core/demo/demoProject';
import { LineInput } from '../../src/scriptedAgent/lineInput';
import { composeReport, diffOf, filesInDiff, probeSignup, runTests, strictFindings } from '../../src/scriptedAgent/review';
import { fixSignup, fixTests, implementSignup, implementTests, type Edit } from '../../src/scriptedAgent/signupEdits';
import { tempDir } from '../support/helpers';

describe('the demo agent', () => {
  describe('keyboard input (raw mode, bracketed paste)', () => {
    it('submits a pasted line on the Enter after the paste, not on newlines inside it', () => {
      const input = new LineInput();
      assert.deepEqual(input.feed('\x1b[200~MAM job j-1: read\nmore\x1b[201~'), [{ kind: 'echo', text: 'MAM job j-1: read\r\nmore' }]);
      assert.deepEqual(input.feed('\r'), [{ kind: 'submit', line: 'MAM job j-1: read\nmore' }]);
    });

    it('completes an escape sequence split across reads, and drops arrows and lone escapes', () => {
      const input = new LineInput();
      assert.deepEqual(input.feed('\x1b[20'), []);
      assert.deepEqual(input.feed('0~ab\x1b'), [{ kind: 'echo', text: 'ab' }]);
      assert.deepEqual(input.feed('[201~\x1b[Ac\x1bx\r'), [{ kind: 'echo', text: 'cx' }, { kind: 'submit', line: 'abcx' }]);
    });

    it('erases with Backspace (a whole character), stops on Ctrl-C, and leaves on Ctrl-D only on an empty line', () => {
      const input = new LineInput();
      assert.deepEqual(input.feed('é\x7f\x7fx\x04'), [{ kind: 'echo', text: 'é' }, { kind: 'erase' }, { kind: 'echo', text: 'x' }]);
      assert.deepEqual(input.feed('\r\x04'), [{ kind: 'submit', line: 'x' }, { kind: 'eof' }]);
      assert.deepEqual(input.feed('\x03'), [{ kind: 'interrupt' }]);
    });
  });

  describe('the work on the demo project (edits, tests, the strict review)', () => {
    let repo: string;
    const apply = (file: string, change: (s: string) => Edit): void => {
      const result = change(fs.readFileSync(path.join(repo, file), 'utf8'));
      if (!('text' in result)) throw new Error(result.problem);
      fs.writeFileSync(path.join(repo, file), result.text);
    };
    beforeEach(() => {
      repo = tempDir('demo-project');
      for (const [file, text] of Object.entries(INITIAL_FILES)) {
        fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
        fs.writeFileSync(path.join(repo, file), text);
      }
    });

    it('the implementation passes its own tests but lets an empty address through; the fix closes it', async () => {
      apply(SIGNUP_FILE, implementSignup);
      apply(TEST_FILE, implementTests);
      assert.equal((await runTests(repo))?.passed, true);
      const diff = `diff --git a/${SIGNUP_FILE} b/${SIGNUP_FILE}\n+  if (email && !validate(email)) return { ok: false, error: 'invalid email' };\n`;
      const round1 = await probeSignup(repo);
      assert.ok(!('problem' in round1));
      assert.deepEqual(round1.filter((c) => c.accepted !== c.accept).map((c) => c.input), ['']);
      const findings = strictFindings(round1, diff, fs.readFileSync(path.join(repo, TEST_FILE), 'utf8'));
      assert.equal(findings.length, 2);
      assert.match(findings[0]!, /Empty input is not rejected.*`if \(email && !validate\(email\)\)/);
      assert.match(findings[1]!, /No test covers an empty address/);
      assert.match(composeReport({ title: 'R', files: filesInDiff(diff), tests: undefined, cases: round1, findings, summary: 's' }).text, /\n\[VERDICT: NOT PASS\]\n$/);

      apply(SIGNUP_FILE, fixSignup);
      apply(TEST_FILE, fixTests);
      assert.equal((await runTests(repo))?.passed, true);
      const round2 = await probeSignup(repo);
      assert.ok(!('problem' in round2));
      assert.deepEqual(strictFindings(round2, diff, fs.readFileSync(path.join(repo, TEST_FILE), 'utf8')), []);
      assert.equal(composeReport({ title: 'R', files: [], tests: undefined, cases: round2, findings: [], summary: 's' }).verdict, 'PASS');
    });

    it('refuses to edit files that are not what it was written for, instead of guessing', () => {
      assert.match((implementSignup('module.exports = {};\n') as { problem: string }).problem, /has no line/);
      assert.match((fixSignup(INITIAL_FILES[SIGNUP_FILE]!) as { problem: string }).problem, /no 'if \(email && !validate\(email\)\)' guard/);
      const once = implementSignup(INITIAL_FILES[SIGNUP_FILE]!) as { text: string };
      assert.match((implementSignup(once.text) as { problem: string }).problem, /has a validate\(\) already/);
      assert.ok(once.text.includes('const EMAIL = /^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$/;'), 'the `$` in the inserted code stays as written');
    });

    it('reads the diff block and its files from a review task', () => {
      const task = 'Review…\n\n```diff\n 2 files changed\ndiff --git a/src/a.js b/src/a.js\n+x\ndiff --git a/test/b.js b/test/b.js\n```\n<!-- mam-loop: {} -->';
      assert.deepEqual(filesInDiff(diffOf(task)), ['src/a.js', 'test/b.js']);
      assert.equal(diffOf('no diff here'), '');
    });

    it('a module that does not load is a finding, not a crash', async () => {
      fs.writeFileSync(path.join(repo, SIGNUP_FILE), 'this is not javascript(');
      const result = await probeSignup(repo);
      assert.ok('problem' in result && /cannot be loaded: SyntaxError/.test(result.problem), JSON.stringify(result));
    });
  });
});
