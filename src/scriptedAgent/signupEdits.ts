/**
 * The demo creator's changes to the demo project (src/core/demo/demoProject.ts), as edits of the
 * files it finds rather than whole files written over them: each edit names the line it expects,
 * and refuses (returns a reason) when the file is not what it was written for. Replacements are
 * functions so that no `$` in the inserted code is read as a replacement pattern.
 *
 * The first implementation has a real flaw on purpose — an empty address skips validation — so
 * that the strict reviewer, which runs the code, finds it in round 1 and the fix closes it.
 */

export type Edit = { text: string } | { problem: string };

const SIGNUP_DOC = '/** Registers a new user by email address. */';
const SIGNUP_HEAD = 'function signup(users, email) {\n';
const EXPORTS = 'module.exports = { signup };';
export const FLAWED_GUARD = '  if (email && !validate(email)) return { ok: false, error: \'invalid email\' };\n';
const FIXED_GUARD = '  if (!validate(email)) return { ok: false, error: \'invalid email\' };\n';
const VALIDATE = `const EMAIL = /^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$/;

/** True when \`email\` is a well-formed address (surrounding spaces ignored). */
function validate(email) {
  return typeof email === 'string' && EMAIL.test(email.trim());
}

`;

/** implement: validate(email), used by signup() (with the flaw), and exported. */
export function implementSignup(source: string): Edit {
  if (source.includes('function validate(')) return { problem: 'src/signup.js has a validate() already' };
  for (const anchor of [SIGNUP_DOC, SIGNUP_HEAD, EXPORTS]) {
    if (!source.includes(anchor)) return { problem: `src/signup.js has no line '${anchor.trim()}'` };
  }
  return {
    text: source
      .replace(SIGNUP_DOC, () => `${VALIDATE}${SIGNUP_DOC}`)
      .replace(SIGNUP_HEAD, () => `${SIGNUP_HEAD}${FLAWED_GUARD}`)
      .replace(EXPORTS, () => 'module.exports = { signup, validate };'),
  };
}

const REQUIRE = "const { signup } = require('../src/signup');";
const DONE = "\nconsole.log('signup tests passed');";

/** implement: tests for a malformed and a well-formed address. */
export function implementTests(source: string): Edit {
  if (!source.includes(REQUIRE) || !source.includes(DONE)) return { problem: 'test/signup.test.js is not laid out as expected' };
  const cases = [
    "assert.deepEqual(signup(users, 'not-an-email'), { ok: false, error: 'invalid email' });",
    "assert.equal(validate('grace@example.org'), true);",
    "assert.equal(validate('grace@'), false);",
  ].join('\n');
  return { text: source.replace(REQUIRE, () => "const { signup, validate } = require('../src/signup');").replace(DONE, () => `${cases}\n${DONE}`) };
}

/** fix: an empty or blank address is refused like any other invalid one. */
export function fixSignup(source: string): Edit {
  if (!source.includes(FLAWED_GUARD)) return { problem: "src/signup.js has no 'if (email && !validate(email))' guard to fix" };
  return { text: source.replace(FLAWED_GUARD, () => FIXED_GUARD) };
}

/** fix: the edge cases the review found, covered. */
export function fixTests(source: string): Edit {
  if (!source.includes(DONE)) return { problem: 'test/signup.test.js is not laid out as expected' };
  const cases = [
    "assert.deepEqual(signup(users, ''), { ok: false, error: 'invalid email' });",
    "assert.deepEqual(signup(users, '   '), { ok: false, error: 'invalid email' });",
  ].join('\n');
  return { text: source.replace(DONE, () => `${cases}\n${DONE}`) };
}
