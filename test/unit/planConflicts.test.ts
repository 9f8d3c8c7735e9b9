import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { namedPaths, sharedPath } from '../../src/core/plan/planConflicts';
import { tempDir } from '../support/helpers';

describe('plan tasks predicted to conflict: the files their texts name', () => {
  let repo: string;
  before(() => {
    repo = tempDir('named');
    fs.mkdirSync(path.join(repo, 'src', 'lib'), { recursive: true });
    for (const f of ['src/signup.js', 'src/lib/util.ts', 'README.md']) fs.writeFileSync(path.join(repo, f), '');
  });

  it('names the paths a task mentions that exist in the checkout, however they are quoted or punctuated', () => {
    assert.deepEqual(namedPaths('Add validate(email) to src/signup.js, with a test', repo), ['src/signup.js']);
    assert.deepEqual(namedPaths('Document validate() in `README.md`.', repo), ['README.md']);
    assert.deepEqual(namedPaths('Tidy src/lib/ and (src/lib/util.ts)', repo), ['src/lib', 'src/lib/util.ts']);
  });

  it('leaves out what does not exist, what leaves the checkout, and words that are not paths', () => {
    assert.deepEqual(namedPaths('Create src/new.js and read ../outside.txt or /etc/passwd; e.g. and i.e. are words', repo), []);
    assert.deepEqual(namedPaths('Make signup() return { ok: false, error } for invalid input', repo), []);
  });

  it('two tasks share a file when they name it, or one names a folder holding it', () => {
    assert.equal(sharedPath(['src/signup.js'], ['README.md', 'src/signup.js']), 'src/signup.js');
    assert.equal(sharedPath(['src/lib'], ['src/lib/util.ts']), 'src/lib/util.ts');
    assert.equal(sharedPath(['src/lib'], ['src/library.ts']), undefined);
    assert.equal(sharedPath([], ['README.md']), undefined);
  });
});
