import { spawnSync } from 'node:child_process';

/**
 * A test that needs something a machine may lack (`.ci/run` installs all of it): `it` when
 * `missing` is undefined, else a pending test whose title says what is missing — never a test that
 * skips itself halfway without saying why.
 */
export function itNeeds(missing: string | undefined, title: string, fn: Mocha.AsyncFunc): Mocha.Test {
  return missing === undefined ? it(title, fn) : it.skip(`${title} — skipped: ${missing}`);
}

/** Why `program` cannot be run here (`program --version`-style probe `args`), or undefined. */
export function programMissing(program: string, args: string[], install: string): string | undefined {
  return spawnSync(program, args, { stdio: 'ignore' }).status === 0 ? undefined : `${program} is not installed (${install})`;
}
