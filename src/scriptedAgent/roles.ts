/**
 * What each demo role does with a job. Every flow acknowledges first (`started`), narrates its
 * steps in the pane and as `progress` events, and ends with exactly one `completed` or `error` —
 * after its last line of output, so that the pane is quiet (ready) by the time MAM could type the
 * next job into it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NOTES_DIR, SIGNUP_FILE, TEST_FILE, type DemoRole } from '../core/demo/demoProject';
import { style, type JobContext } from './jobContext';
import { composeReport, diffOf, filesInDiff, probeSignup, runTests, strictFindings, testScriptOf } from './review';
import { fixSignup, fixTests, implementSignup, implementTests, type Edit } from './signupEdits';

/** The end of a job: what to tell MAM, said after `done` has redrawn the prompt. */
export type Outcome = { completed: string; report?: string } | { error: string };

export async function doJob(role: DemoRole, ctx: JobContext): Promise<Outcome> {
  const step = ctx.brief.loop?.step;
  if (role === 'creator' && step === 'implement') return implement(ctx);
  if (role === 'creator' && step === 'fix') return fix(ctx);
  if (step === 'challenge') return { completed: 'The plan is sound; nothing to add.\n[AGREE]' };
  if (role === 'reviewer-strict' || role === 'reviewer-easy') return review(ctx, role === 'reviewer-strict');
  return survey(ctx);
}

/** worker (and any role given a plain job): a survey of the project, written to the scratch folder. */
async function survey(ctx: JobContext): Promise<Outcome> {
  await ctx.step('reading the brief: survey the project for the team', 1500);
  const files = (await ctx.git(['ls-files'])).split('\n').filter(Boolean);
  await ctx.step(`listing the project's files: ${files.length} tracked`, 1500);
  const exportsOf = files
    .filter((f) => f.startsWith('src/') && f.endsWith('.js'))
    .map((f) => {
      const source = fs.readFileSync(path.join(ctx.cwd, f), 'utf8');
      const names = /module\.exports\s*=\s*\{([^}]*)\}/.exec(source)?.[1]?.split(',').map((n) => n.trim()).filter(Boolean) ?? [];
      return { file: f, names };
    });
  await ctx.step(`reading the sources: ${exportsOf.map((e) => `${e.file} exports ${e.names.join(', ') || 'nothing'}`).join('; ')}`, 2000);
  // No package.json: the survey says so.
  const testScript = testScriptOf(ctx.cwd) ?? '';
  const target = /notes\/[\w.-]+\.md/.exec(ctx.brief.task)?.[0] ?? `${NOTES_DIR}/${ctx.brief.jobId}.md`;
  const text = [
    '# Project survey',
    '',
    `Written by ${process.env.MAM_SESSION ?? 'the demo worker'} for job ${ctx.brief.jobId}.`,
    '',
    '## Files',
    '',
    ...files.map((f) => `- \`${f}\``),
    '',
    '## Exports',
    '',
    ...exportsOf.map((e) => `- \`${e.file}\`: ${e.names.map((n) => `\`${n}\``).join(', ') || 'nothing'}`),
    '',
    '## Tests',
    '',
    testScript ? `\`npm test\` runs \`${testScript}\`.` : 'No test script in package.json.',
    '',
  ].join('\n');
  fs.mkdirSync(path.dirname(path.join(ctx.cwd, target)), { recursive: true });
  fs.writeFileSync(path.join(ctx.cwd, target), text);
  await ctx.step(`writing ${target}`, 1000);
  ctx.say(style.green(`wrote ${target} (${files.length} files, ${exportsOf.length} module${exportsOf.length === 1 ? '' : 's'})`));
  return { completed: `wrote ${target}: ${files.length} files, ${exportsOf.length} module(s), tests: ${testScript || 'none'}` };
}

/** creator, implement: validate(email) in src/signup.js, tests, commit. */
async function implement(ctx: JobContext): Promise<Outcome> {
  await ctx.step(`reading ${SIGNUP_FILE} and ${TEST_FILE}`, 1500);
  const code = edit(ctx, SIGNUP_FILE, implementSignup);
  if ('problem' in code) return { error: code.problem };
  await ctx.step(`adding validate(email) to ${SIGNUP_FILE} and using it in signup()`, 2500);
  const tests = edit(ctx, TEST_FILE, implementTests);
  if ('problem' in tests) return { error: tests.problem };
  await ctx.step(`covering validate() in ${TEST_FILE}`, 1500);
  return testAndCommit(ctx, 'Add validate(email) and refuse invalid addresses in signup()', 'implemented validate(email)');
}

/** creator, fix: reads the findings and fixes what they name (the empty-address flaw), or says it cannot. */
async function fix(ctx: JobContext): Promise<Outcome> {
  const findings = ctx.brief.task.split('### Findings')[1] ?? '';
  const reviewers = [...findings.matchAll(/^#### (\S+)$/gm)].map((m) => m[1]!);
  await ctx.step(`reading the findings of round ${ctx.brief.loop?.round ?? '?'} from ${reviewers.join(', ') || 'the reviewers'}`, 2000);
  if (!/empty/i.test(findings)) {
    ctx.say(style.yellow('no finding I know how to fix'));
    return { completed: 'I found nothing in the findings that I can change; please be more specific.' };
  }
  const code = edit(ctx, SIGNUP_FILE, fixSignup);
  if ('problem' in code) return { error: code.problem };
  await ctx.step('empty input: calling validate() unconditionally in signup()', 2000);
  const tests = edit(ctx, TEST_FILE, fixTests);
  if ('problem' in tests) return { error: tests.problem };
  await ctx.step(`covering empty and blank addresses in ${TEST_FILE}`, 1500);
  return testAndCommit(ctx, `Refuse empty and blank addresses (review round ${ctx.brief.loop?.round ?? '?'})`, 'fixed: empty and blank addresses are refused');
}

async function testAndCommit(ctx: JobContext, message: string, summary: string): Promise<Outcome> {
  const tests = await runTests(ctx.cwd);
  if (tests && !tests.passed) return { error: `the tests fail after my change: ${tests.output.split('\n').slice(-1)[0]}` };
  await ctx.step(`running the tests: ${tests ? 'passed' : 'none found'}`, 1000);
  await ctx.git(['add', '--', SIGNUP_FILE, TEST_FILE]);
  await ctx.git(['commit', '-q', '-m', message]);
  const sha = (await ctx.git(['rev-parse', '--short', 'HEAD'])).trim();
  ctx.say(style.green(`committed ${sha} ${message}`));
  return { completed: `${summary}; committed ${sha}` };
}

/** A reviewer: reads the diff, runs the tests, and (strict) runs signup() on the edge cases. */
async function review(ctx: JobContext, strict: boolean): Promise<Outcome> {
  const round = ctx.brief.loop?.round;
  const diff = diffOf(ctx.brief.task);
  const files = filesInDiff(diff);
  await ctx.step(`reading the diff${round ? ` of round ${round}` : ''}: ${files.length ? files.join(', ') : 'no changes'}`, 2000);
  const tests = await runTests(ctx.cwd);
  await ctx.step(`running the tests: ${tests ? (tests.passed ? 'passed' : 'FAILED') : 'none found'}`, 1500);
  const findings: string[] = [];
  if (tests && !tests.passed) findings.push(`**The tests fail.** \`${tests.command.join(' ')}\`: ${tests.output.split('\n').slice(-1)[0]}`);
  let cases: Awaited<ReturnType<typeof probeSignup>> | undefined;
  if (strict) {
    cases = await probeSignup(ctx.cwd);
    if ('problem' in cases) findings.push(`**signup() cannot be run.** ${cases.problem}`);
    else {
      const wrong = cases.filter((c) => c.accepted !== c.accept);
      await ctx.step(`trying signup() on edge cases: ${wrong.length ? wrong.map((c) => `${c.label} ${c.accepted ? 'accepted' : 'refused'}`).join(', ') : 'all as expected'}`, 2000);
      findings.push(...strictFindings(cases, diff, readOr(path.join(ctx.cwd, TEST_FILE))));
    }
  }
  const who = `${process.env.MAM_SESSION ?? 'demo reviewer'} (${strict ? 'strict' : 'easy-going'})`;
  const { text, verdict } = composeReport({
    title: `Review${round ? ` of round ${round}` : ''} by ${who}`,
    files,
    tests,
    ...(cases ? { cases } : {}),
    findings,
    summary: findings.length
      ? `The change does not do what the task asks yet: ${findings.length} finding${findings.length === 1 ? '' : 's'} below.`
      : strict ? 'The change does what the task asks, and the edge cases hold.' : 'Looks good to me: small, readable, and the tests pass.',
  });
  const report = ctx.reportPath(`review-${ctx.brief.jobId}.md`);
  fs.writeFileSync(report, text);
  await ctx.step(`writing the report: ${findings.length} finding${findings.length === 1 ? '' : 's'}`, 1000);
  ctx.say(verdict === 'PASS' ? style.green('[VERDICT: PASS]') : style.red('[VERDICT: NOT PASS]'));
  return { completed: `verdict ${verdict}: ${findings.length ? findings[0]!.replace(/\*\*/g, '').split('. ')[0] : 'no findings'}`, report };
}

function edit(ctx: JobContext, file: string, change: (source: string) => Edit): Edit {
  const full = path.join(ctx.cwd, file);
  const result = change(readOr(full));
  if ('text' in result) fs.writeFileSync(full, result.text);
  return result;
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
