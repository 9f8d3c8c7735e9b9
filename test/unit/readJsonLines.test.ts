// The tests' reader of JSON-lines files that another process appends to (the model server's logs, the
// fake agent's, the stub MCP server's). CI at stop 37 read the model server's log in the middle of
// a long append and failed on the half line.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readJsonLines, tempDir } from '../support/helpers';

describe('readJsonLines (a file another process is appending to)', () => {
  it('reads the complete lines and leaves a line still being written for the next read', () => {
    const file = path.join(tempDir('jsonl'), 'log.jsonl');
    assert.deepEqual(readJsonLines(file), [], 'not written yet: nothing');
    fs.writeFileSync(file, '{"n":1}\n{"n":2}\n{"at');
    assert.deepEqual(readJsonLines(file), [{ n: 1 }, { n: 2 }]);
    fs.appendFileSync(file, '":3}\n');
    assert.deepEqual(readJsonLines(file), [{ n: 1 }, { n: 2 }, { at: 3 }]);
  });

  it('a broken complete line is still an error, not skipped', () => {
    const file = path.join(tempDir('jsonl'), 'log.jsonl');
    fs.writeFileSync(file, '{"n":1}\nnot json\n');
    assert.throws(() => readJsonLines(file), SyntaxError);
  });
});
