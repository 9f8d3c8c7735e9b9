import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseJsonLines, readJsonLines } from '../../src/core/base/jsonLines';
import {
  anyObject, bool, either, int, list, lit, matches, nullable, num, obj, oneOf, optional, parse, record, refine, SchemaError, str, variant, type Schema,
} from '../../src/core/base/schema';

/** The problem `schema` finds in `value`, as parse reports it (root: 'the value'). */
function problem<T>(schema: Schema<T>, value: unknown): string {
  try {
    parse(schema, value);
  } catch (err) {
    assert.ok(err instanceof SchemaError);
    return err.message;
  }
  assert.fail(`${JSON.stringify(value)} was accepted`);
}

describe('schema kit (base/schema.ts)', () => {
  const entry = obj({
    id: str({ pattern: /^e-\d+$/, why: 'is not an entry ID' }),
    count: int({ min: 0 }),
    share: optional(num({ min: 0, max: 1 })),
    note: nullable(str()),
    state: oneOf(['queued', 'landed']),
    tags: list(str(), { min: 1 }),
  });
  const good = { id: 'e-1', count: 2, note: null, state: 'queued', tags: ['a'] };

  it('returns the value typed, keeps fields it does not name by default, and leaves absent optional ones absent', () => {
    const read = parse(entry, { ...good, extra: true });
    assert.deepEqual(read, { ...good, extra: true });
    assert.equal('share' in read, false);
    assert.equal(parse(obj({ a: str() }, { extra: 'strip' }), { a: 'x', b: 1 }).a, 'x');
    assert.deepEqual(parse(obj({ a: str() }, { extra: 'strip' }), { a: 'x', b: 1 }), { a: 'x' });
  });

  it('names the field by its path from the root, and says what is wrong in one line', () => {
    const file = obj({ version: lit(1), entries: list(entry) });
    const cases: Array<[unknown, string]> = [
      [[1], 'the value must be an object'],
      [{ version: 2, entries: [] }, 'version must be 1'],
      [{ version: 1, entries: {} }, 'entries must be a list'],
      [{ version: 1, entries: [good, { ...good, id: 'x' }] }, 'entries[1].id is not an entry ID'],
      [{ version: 1, entries: [{ ...good, count: -1 }] }, 'entries[0].count must be a whole number ≥ 0'],
      [{ version: 1, entries: [{ ...good, count: 1.5 }] }, 'entries[0].count must be a whole number ≥ 0'],
      [{ version: 1, entries: [{ ...good, share: 2 }] }, 'entries[0].share must be a number ≥ 0 ≤ 1'],
      [{ version: 1, entries: [{ ...good, note: 3 }] }, 'entries[0].note must be a string or null'],
      [{ version: 1, entries: [{ ...good, state: 'lost\u001b[2J' }] }, "entries[0].state must be one of queued, landed (got 'lost\\x1b[2J')"],
      [{ version: 1, entries: [{ ...good, tags: [] }] }, 'entries[0].tags must hold 1 or more items'],
      [{ version: 1, entries: [{ ...good, tags: ['a', 7] }] }, 'entries[0].tags[1] must be a string'],
      [{ version: 1, entries: [{ ...good, id: undefined }] }, 'entries[0].id is not an entry ID'],
    ];
    for (const [value, message] of cases) assert.equal(problem(file, value), message);
  });

  it('refuses fields it does not know where asked, and lets the caller word it', () => {
    assert.equal(problem(obj({ a: str() }, { extra: 'refuse' }), { a: 'x', b: 1 }), "the value has an unknown field 'b'");
    assert.equal(problem(obj({ a: str() }, { extra: 'refuse', unknown: (key) => [key, 'is not a session field'] }), { a: 'x', b: 1 }), 'b is not a session field');
  });

  it('tells variants apart by their tag, checks each by its own schema, and names an unknown tag', () => {
    const kinds = variant('kind', { file: obj({ kind: lit('file'), path: str() }), dir: obj({ kind: lit('dir'), depth: int() }) });
    assert.deepEqual(parse(kinds, { kind: 'dir', depth: 2 }), { kind: 'dir', depth: 2 });
    assert.equal(problem(kinds, { kind: 'file', path: 3 }), 'path must be a string');
    assert.equal(problem(kinds, { kind: 'link' }), "kind must be one of file, dir (got 'link')");
    assert.equal(problem(kinds, { kind: '__proto__' }), "kind must be one of file, dir (got '__proto__')");
  });

  it('maps, refinements, alternatives, booleans and nullable fields that may be absent', () => {
    assert.deepEqual(parse(record(int()), { a: 1, b: 2 }), { a: 1, b: 2 });
    assert.equal(problem(record(int()), { a: 1, b: 'x' }), 'b must be a whole number');
    const even = refine(int(), (n) => (n % 2 === 0 ? undefined : 'must be even'));
    assert.equal(problem(obj({ n: even }), { n: 3 }), 'n must be even');
    const idOrCount = either(str(), int(), 'must be a name or a count');
    assert.equal(parse(idOrCount, 3), 3);
    assert.equal(problem(obj({ x: idOrCount }), { x: true }), 'x must be a name or a count');
    assert.equal(problem(obj({ ok: bool() }), { ok: 'yes' }), 'ok must be true or false');
    assert.deepEqual(parse(obj({ pid: nullable(int(), { absent: true }) }), {}), { pid: null });
    assert.equal(problem(obj({ pid: nullable(int({ min: 1 }), { why: 'must be a process id' }) }), { pid: 0 }), 'pid must be a process id');
  });

  it('the caller makes its own error of the problem, with the file and the root named', () => {
    class FileError extends Error {}
    assert.throws(() => parse(entry, 'x', (p) => new FileError(`q.json: ${p}`), 'the entry'), (err: unknown) => err instanceof FileError && err.message === 'q.json: the entry must be an object');
    assert.ok(matches(entry, good));
    assert.ok(!matches(entry, { ...good, count: '2' }));
  });
});

describe('the JSON-lines reader (base/jsonLines.ts)', () => {
  const line = obj({ t: lit('event'), seq: int() });

  it('keeps the lines that read, counts the ones that do not, skips blank ones', () => {
    const text = ['{"t":"event","seq":1}', '', 'not json', '{"t":"other","seq":2}', '[1,2]', '{"t":"event","seq":3}'].join('\n');
    const read = parseJsonLines(text, line);
    assert.deepEqual(read.values.map((v) => v.seq), [1, 3]);
    assert.equal(read.bad, 3);
  });

  it('completeOnly leaves out a last line still being written; limit reads only the first lines', () => {
    const text = '{"t":"event","seq":1}\n{"t":"event","seq":2}\n{"t":"ev';
    assert.deepEqual(parseJsonLines(text, line, { completeOnly: true }), { values: [{ t: 'event', seq: 1 }, { t: 'event', seq: 2 }], bad: 0 });
    assert.equal(parseJsonLines(text, line).bad, 1);
    assert.deepEqual(parseJsonLines(text, line, { limit: 1 }).values, [{ t: 'event', seq: 1 }]);
  });

  it('reads a file (none when it cannot be read), any object where the caller looks into the fields itself', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-jsonl-'));
    try {
      const file = path.join(dir, 'store.jsonl');
      fs.writeFileSync(file, '{"a":1}\n"text"\n{"b":2}\n');
      assert.deepEqual(readJsonLines(file, anyObject), [{ a: 1 }, { b: 2 }]);
      assert.deepEqual(readJsonLines(path.join(dir, 'missing.jsonl'), anyObject), []);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
