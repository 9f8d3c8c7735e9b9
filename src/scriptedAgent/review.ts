/**
 * How the demo reviewers judge: not from a script of verdicts but by looking — the diff in the
 * brief, the project's own tests, and (the strict one) signup() run on the edge cases of
 * demoProject.ts. Round 1 finds the flaw because the code has it; round 2 passes because the fix
 * removed it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SIGNUP_CASES, SIGNUP_FILE, TEST_FILE } from '../core/demo/demoProject';
import { run, type RunResult } from './kit';
import { bool, list, obj, optional, parse, str } from '../core/base/schema';

export interface CaseResult {
  input: string;
  label: string;
  accept: boolean;
  /** What signup() returned, or the error it threw. */
  outcome: string;
  accepted: boolean;
}

export interface TestRun {
  command: string[];
  passed: boolean;
  output: string;
}

/** The ```diff block of a review task, or '' when the task has none. */
export function diffOf(task: string): string {
  return /```diff\n([\s\S]*?)\n```/.exec(task)?.[1] ?? '';
}

/** The files a diff touches, in order. */
export function filesInDiff(diff: string): string[] {
  return [...diff.matchAll(/^diff --git a\/(\S+) b\/\S+$/gm)].map((m) => m[1]!);
}

const packageJson = obj({ scripts: optional(obj({ test: optional(str()) })) });

/** The project's test script (package.json `scripts.test`), or undefined when it has none or no readable package.json. */
export function testScriptOf(cwd: string): string | undefined {
  try {
    return parse(packageJson, JSON.parse(fs.readFileSync(path.join(cwd, 'package.json'), 'utf8'))).scripts?.test;
  } catch {
    return undefined;
  }
}

/** Runs the project's test script (package.json `scripts.test`) with an argument array. */
export async function runTests(cwd: string): Promise<TestRun | undefined> {
  const words = testScriptOf(cwd)?.trim().split(/\s+/).filter(Boolean) ?? [];
  if (words.length === 0) return undefined;
  // The script is the demo project's own `node file`; run it with the node running us, no shell.
  const file = words[0] === 'node' ? process.execPath : words[0]!;
  const r: RunResult = await run(file, words.slice(1), { cwd });
  return { command: words, passed: r.code === 0, output: `${r.stdout}${r.stderr}`.trim() };
}

const PROBE = `
const { signup } = require(process.argv[1]);
const cases = JSON.parse(process.argv[2]);
const out = cases.map((c) => {
  try {
    const r = signup([], c.input);
    return { accepted: Boolean(r && r.ok), outcome: JSON.stringify(r) };
  } catch (e) {
    return { accepted: false, outcome: 'threw ' + (e && e.message) };
  }
});
process.stdout.write(JSON.stringify(out));
`;

/** signup() of the checkout, run in a child process on each edge case. */
export async function probeSignup(cwd: string): Promise<CaseResult[] | { problem: string }> {
  const file = path.join(cwd, SIGNUP_FILE);
  if (!fs.existsSync(file)) return { problem: `${SIGNUP_FILE} does not exist` };
  const r = await run(process.execPath, ['-e', PROBE, file, JSON.stringify(SIGNUP_CASES)], { cwd });
  if (r.code !== 0) {
    // Node prints the source line and a stack around the error; its `XxxError: …` line is the one that says why.
    const lines = r.stderr.trim().split('\n');
    return { problem: `${SIGNUP_FILE} cannot be loaded: ${lines.find((l) => /^\w*Error\b/.test(l)) ?? lines[0] ?? ''}` };
  }
  const results = parse(list(obj({ accepted: bool(), outcome: str() }), { min: SIGNUP_CASES.length }), JSON.parse(r.stdout), undefined, 'the probe\'s answer');
  return SIGNUP_CASES.map((c, i) => ({ ...c, ...results[i]! }));
}

/** The strict reviewer's findings: every case signup() gets wrong, with where it comes from, and missing tests. */
export function strictFindings(cases: CaseResult[], diff: string, testSource: string): string[] {
  const findings: string[] = [];
  for (const c of cases.filter((x) => x.accepted !== x.accept)) {
    const what = c.accept ? `${capitalize(c.label)} is refused` : `${capitalize(c.label)} is not rejected`;
    let text = `**${what}.** \`signup(users, ${JSON.stringify(c.input)})\` returned \`${c.outcome}\`${c.accept ? '' : ' and stored the user'}.`;
    const guard = diff.split('\n').find((l) => l.startsWith('+') && /\w+ && !validate\(/.test(l));
    if (!c.accept && c.input === '' && guard) {
      text += ` In ${SIGNUP_FILE} the guard \`${guard.slice(1).trim()}\` skips validate() when the address is empty; call validate() unconditionally.`;
    }
    findings.push(text);
  }
  if (!/signup\(users, ''\)/.test(testSource)) findings.push(`**No test covers an empty address.** Add one to ${TEST_FILE}.`);
  return findings;
}

export function composeReport(input: {
  title: string;
  files: string[];
  tests: TestRun | undefined;
  cases?: CaseResult[] | { problem: string };
  findings: string[];
  summary: string;
}): { text: string; verdict: 'PASS' | 'NOT PASS' } {
  const verdict = input.findings.length === 0 ? 'PASS' : 'NOT PASS';
  const checked = [
    `- read the diff: ${input.files.length ? input.files.join(', ') : 'no files changed'}`,
    input.tests ? `- ran \`${input.tests.command.join(' ')}\`: ${input.tests.passed ? 'passed' : `FAILED\n\n  \`\`\`\n  ${input.tests.output.split('\n').slice(-6).join('\n  ')}\n  \`\`\``}` : '- found no test script to run',
  ];
  if (input.cases) {
    checked.push(
      'problem' in input.cases
        ? `- could not run signup(): ${input.cases.problem}`
        : `- ran signup() on ${input.cases.length} inputs: ${input.cases.map((c) => `${JSON.stringify(c.input)} ${c.accepted ? 'accepted' : 'refused'}${c.accepted === c.accept ? '' : ' ✗'}`).join(', ')}`,
    );
  }
  const findings = input.findings.length ? input.findings.map((f, i) => `${i + 1}. ${f}`).join('\n') : 'None.';
  const text = `# ${input.title}\n\n${input.summary}\n\n## What I checked\n\n${checked.join('\n')}\n\n## Findings\n\n${findings}\n\n[VERDICT: ${verdict}]\n`;
  return { text, verdict };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
