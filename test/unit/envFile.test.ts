import { strict as assert } from 'node:assert';
import { parseEnvFile } from '../../src/core/config/envFile';
import { ConfigError } from '../../src/core/base/errors';

describe('.mam.env parsing', () => {
  it('reads bare, quoted and exported values, comments and blank lines', () => {
    const values = parseEnvFile(
      [
        '# broker',
        'MQTT_BROKER=broker.internal',
        '',
        'export MQTT_PORT=8883  # TLS port',
        "MQTT_PASSWORD='p@ss $(not run) #x'",
        'MAM_NOTE="line\\none \\"q\\""',
        'EMPTY=',
      ].join('\n'),
    );
    assert.deepEqual(Object.fromEntries(values), {
      MQTT_BROKER: 'broker.internal',
      MQTT_PORT: '8883',
      MQTT_PASSWORD: 'p@ss $(not run) #x',
      MAM_NOTE: 'line\none "q"',
      EMPTY: '',
    });
  });

  const bad: Array<[string, RegExp]> = [
    ['OK=1\njust words', /\.mam\.env:2: expected KEY=VALUE, got 'just words'/],
    ['1BAD=x', /\.mam\.env:1: '1BAD' is not a valid variable name/],
    ['A=1\nA=2', /\.mam\.env:2: A is set twice/],
    ["A='open", /\.mam\.env:1: unterminated single-quoted value/],
    ['A="open', /\.mam\.env:1: unterminated double-quoted value/],
    ['A=two words', /\.mam\.env:1: a value with spaces must be quoted/],
    ['A="x" trailing', /\.mam\.env:1: unexpected text after the closing quote/],
    ['A="\\q"', /\.mam\.env:1: unknown escape/],
    ['=value', /\.mam\.env:1: expected KEY=VALUE/],
  ];
  for (const [text, message] of bad) {
    it(`names the line for ${JSON.stringify(text)}`, () => {
      assert.throws(() => parseEnvFile(text), (err: unknown) => err instanceof ConfigError && message.test(err.message) && !err.message.includes('\n'));
    });
  }
});
