/**
 * The project `mam demo` works on: a tiny signup module with a test, small enough to read in the
 * reviewers' diff at a glance, real enough that the demo agents run its code and tests. The demo
 * agents (src/scriptedAgent/) edit these files, so what they expect to find is defined here, once.
 */

/** How fast the demo agents work: `normal` for people watching, `fast` for tests. */
export type DemoPace = 'fast' | 'normal';
export const DEMO_PACES: readonly DemoPace[] = ['normal', 'fast'];

/** The demo agent's roles (`--role`): one worker, one creator, a strict and an easy-going reviewer. */
export const DEMO_ROLES = ['worker', 'creator', 'reviewer-strict', 'reviewer-easy'] as const;
export type DemoRole = (typeof DEMO_ROLES)[number];

export const SIGNUP_FILE = 'src/signup.js';
export const TEST_FILE = 'test/signup.test.js';
/** Where the worker writes its survey: a scratch folder the repository ignores, so the loop's diff shows only the creator's work. */
export const NOTES_DIR = 'notes';

/** The files of the first commit, by path relative to the repository. */
export const INITIAL_FILES: Readonly<Record<string, string>> = {
  'README.md': `# signup-demo

A tiny signup module, the project \`mam demo\` hands to its team of scripted agents.

- \`src/signup.js\`: \`signup(users, email)\` registers a user.
- \`test/signup.test.js\`: its tests (\`npm test\`, or \`node test/signup.test.js\`).
- \`notes/\`: the team's scratch notes (not versioned).
`,
  'package.json': `${JSON.stringify({ name: 'signup-demo', version: '0.1.0', private: true, scripts: { test: 'node test/signup.test.js' } }, null, 2)}\n`,
  '.gitignore': `${NOTES_DIR}/\nnode_modules/\n`,
  [SIGNUP_FILE]: `'use strict';

/** Registers a new user by email address. */
function signup(users, email) {
  if (users.some((u) => u.email === email)) return { ok: false, error: 'already registered' };
  users.push({ email });
  return { ok: true };
}

module.exports = { signup };
`,
  [TEST_FILE]: `'use strict';
// Run with: node test/signup.test.js
const assert = require('node:assert/strict');
const { signup } = require('../src/signup');

const users = [];
assert.deepEqual(signup(users, 'ada@example.com'), { ok: true });
assert.deepEqual(signup(users, 'ada@example.com'), { ok: false, error: 'already registered' });

console.log('signup tests passed');
`,
};

/** The delegated job of part 1. */
export const WORKER_TASK = `Survey this project for the team: list its files, the functions each source file exports, and how to
run its tests. Write the survey to ${NOTES_DIR}/survey.md (the team's scratch folder, not versioned).`;

/** The task of the review loop in part 2. */
export const LOOP_TASK = `Add input validation to the signup module: a validate(email) function in ${SIGNUP_FILE} that accepts
only well-formed addresses (something@domain.tld, surrounding spaces ignored), used by signup() so that
an invalid address is refused with { ok: false, error: 'invalid email' }. Export validate, and cover it in
${TEST_FILE}.`;

/** The cases the strict reviewer runs through signup(): the input and whether it must be accepted. */
export const SIGNUP_CASES: ReadonlyArray<{ input: string; accept: boolean; label: string }> = [
  { input: 'ada@example.com', accept: true, label: 'a well-formed address' },
  { input: ' grace@example.org ', accept: true, label: 'an address with surrounding spaces' },
  { input: 'not-an-email', accept: false, label: 'an address without @' },
  { input: '   ', accept: false, label: 'blank input' },
  { input: '', accept: false, label: 'empty input' },
];
