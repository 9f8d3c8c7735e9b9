import { strict as assert } from 'node:assert';
import { parseArgs } from 'node:util';
import { parseStrictArgs, StrictArgsError, type OptionSpec } from '../../src/cli/strictArgs';

/** `mam event`'s options, and a string option with a short name, which `mam event` has none of. */
const OPTIONS: Record<string, OptionSpec> = {
  job: { type: 'string' },
  event: { type: 'string' },
  detail: { type: 'string' },
  heartbeat: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  file: { type: 'string', short: 'f' },
};

type Outcome = { values: Record<string, unknown>; positionals: string[] } | { code: string; message: string };

function ours(args: string[]): Outcome {
  try {
    const { values, positionals } = parseStrictArgs(args, OPTIONS);
    return { values: { ...values }, positionals };
  } catch (err) {
    assert.ok(err instanceof StrictArgsError, String(err));
    return { code: err.code, message: err.message };
  }
}

function node(args: string[]): Outcome {
  try {
    const { values, positionals } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true });
    return { values: { ...values }, positionals };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { code: e.code!, message: e.message };
  }
}

describe("mam event's argument parser (strictArgs.ts) parses as node:util's parseArgs does", () => {
  it('the same values, positionals and errors, word for word, for each kind of argument', () => {
    const cases: string[][] = [
      [],
      ['progress', '--job', 'j-1', '--detail', 'half way'],
      ['--job=j-1', 'started', '--heartbeat', '30', '--json'],
      ['--job'],
      ['--json=1'],
      ['--help=true'],
      ['--detail', '-x'],
      ['--detail', '--'],
      ['--detail', '-'],
      ['--detail=-x'],
      ['-x'],
      ['-hx'],
      ['-h=1'],
      ['-hh'],
      ['-5'],
      ['-'],
      ['--', '--job', '-h'],
      ['--job=', 'x'],
      ['--=x'],
      ['---x'],
      ['--Job', 'x'],
      ['--job', '--json'],
      ['--json', '--no-json'],
      ['--job', 'a', '--job', 'b'],
      ['-f', 'x'],
      ['-fx'],
      ['-hfx'],
      ['-f', '-x'],
      ['-f'],
      ['--constructor', 'x'],
      ['--__proto__=x'],
      ['progress', '--job', 'j-1', '--detail', 'a $(b) `c` \u001b[2J'],
    ];
    for (const args of cases) assert.deepEqual(ours(args), node(args), JSON.stringify(args));
  });

  it('the same for 3,000 argument lists built from the pieces that make parsers differ', () => {
    const pieces = ['--job', 'j-1', '--json', '-h', '-hx', '-hh', '--detail=-a', '--detail', '-', '--', '--job=', '-5', '--no-json', 'progress', '-x', '---y', '--=z', '--help=1', '-h=1', '-f', '-fv', '-hf', '--heartbeat', '30', ''];
    let seed = 42;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let i = 0; i < 3000; i++) {
      const args = Array.from({ length: next(7) }, () => pieces[next(pieces.length)]!);
      assert.deepEqual(ours(args), node(args), JSON.stringify(args));
    }
  });
});
