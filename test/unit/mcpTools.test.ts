/**
 * The pieces of `mam mcp` that need no process: each tool's inputs declared once (the JSON Schema a
 * client sees, and the reader with one line per problem), the shaping of answers (control
 * characters shown, secrets redacted, a job record given field by field), and docs/mcp.md naming
 * every tool with every input it takes.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SchemaError } from '../../src/core/base/schema';
import { publicJob, visibleText, visibleValue } from '../../src/mcp/records';
import { TOOLS } from '../../src/mcp/server';
import { arg, input } from '../../src/mcp/toolInput';
import { jobRecord } from '../support/rows';

describe('mam mcp: tool inputs and answers', () => {
  const sample = input({
    session: arg.text.required({ description: 'the session', max: 64 }),
    timeout_s: arg.seconds({ description: 'seconds' }),
    jobs: arg.texts({ description: 'IDs', max: 3 }),
    any: arg.flag({ description: 'any' }),
    mux: arg.text({ description: 'mux', enum: ['tmux', 'herdr'] }),
  });

  it('one declaration gives the JSON Schema a client sees', () => {
    assert.deepEqual(sample.json.required, ['session']);
    assert.equal(sample.json.additionalProperties, false);
    assert.deepEqual(sample.json.properties.timeout_s, { type: 'number', description: 'seconds', exclusiveMinimum: 0 });
    assert.deepEqual(sample.json.properties.mux, { type: 'string', enum: ['tmux', 'herdr'], description: 'mux' });
    assert.deepEqual(sample.json.properties.jobs, { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, minItems: 1, maxItems: 3, description: 'IDs' });
  });

  it('and the reader: a typed value, or one line naming the input', () => {
    assert.deepEqual(sample.schema.read({ session: 'w1', timeout_s: 2.5, any: true }, ''), { session: 'w1', timeout_s: 2.5, any: true });
    const problem = (value: unknown): string => {
      try {
        sample.schema.read(value, '');
      } catch (err) {
        assert.ok(err instanceof SchemaError);
        return err.message;
      }
      return 'read';
    };
    assert.equal(problem({}), 'session is required');
    assert.equal(problem({ session: '' }), 'session must be a non-empty string of at most 64 characters');
    assert.equal(problem({ session: 'w1', timeout_s: 0 }), 'timeout_s must be a number > 0');
    assert.equal(problem({ session: 'w1', jobs: ['a', 'b', 'c', 'd'] }), 'jobs must be a list of 1 to 3 strings');
    assert.equal(problem({ session: 'w1', mux: 'screen' }), "mux must be one of tmux, herdr (got 'screen')");
    assert.equal(problem({ session: 'w1', sesion: 'typo' }), 'sesion is not an input of this tool');
    assert.equal(problem('w1'), 'must be an object of named inputs');
  });

  it("agent text is shown, never obeyed: control characters visible, newlines and tabs kept, secrets redacted, however deep", () => {
    assert.equal(visibleText('a\u001b[31mred\u0007\n\tb\u009b'), 'a\\x1b[31mred\\x07\n\tb\\x9b');
    assert.equal(visibleText('pw=hunter2-secret-xyz!', ['hunter2-secret-xyz']), 'pw=[redacted]!');
    assert.deepEqual(visibleValue({ a: [{ b: 'x\u001by' }], n: 3, z: null }, []), { a: [{ b: 'x\\x1by' }], n: 3, z: null });
  });

  it('a job record is given field by field: no claim token, no dispatch nonce, nothing a newer MAM adds', () => {
    const job = { ...jobRecord({ id: 'j-20260101T000000Z-00000001' }), owner: { pid: 7, host: 'h', token: 'claim-token-123456' }, remote: { runner: 'R', workspace_id: 'w', nonce: 'n0nce', dispatched_ts: 't' }, future_secret: 'x' };
    const shown = publicJob(job);
    assert.deepEqual(shown.owner, { pid: 7, host: 'h' });
    assert.deepEqual(shown.remote, { runner: 'R' });
    assert.equal('future_secret' in shown, false);
    assert.ok(!JSON.stringify(shown).includes('claim-token-123456') && !JSON.stringify(shown).includes('n0nce'));
  });

  it('every tool has a unique name, and docs/mcp.md names it with every input it takes', () => {
    const names = TOOLS.map((t) => t.name);
    assert.equal(new Set(names).size, names.length);
    const doc = fs.readFileSync(path.resolve(__dirname, '../../docs/mcp.md'), 'utf8');
    for (const t of TOOLS) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${t.name}\` |`));
      assert.ok(row, `docs/mcp.md has no row for ${t.name}`);
      for (const name of Object.keys(t.input.json.properties)) assert.ok(row.includes(`\`${name}\``), `docs/mcp.md: ${t.name}'s row does not name its input ${name}`);
    }
  });
});
