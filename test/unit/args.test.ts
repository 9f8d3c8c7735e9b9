import { strict as assert } from 'node:assert';
import { isOneOf, parseCommandArgs, type OptionSpecs, type PositionalSpec } from '../../src/cli/args';
import { UsageError } from '../../src/core/base/errors';

const SPEC = {
  task: { kind: 'string', required: true, description: 'the task' },
  title: { kind: 'string', description: 'a title' },
  pace: { kind: 'string', default: 'normal', description: 'how fast' },
  timeout: { kind: 'seconds', description: 'a budget' },
  interval: { kind: 'seconds', default: 5, description: 'a period' },
  'max-iter': { kind: 'count', description: 'rounds at most' },
  'no-wait': { kind: 'boolean', description: 'do not wait' },
  session: { kind: 'string', aliases: ['agent-session'], description: 'the target' },
  reviewer: { kind: 'string', aliases: ['reviewer-session'], besideAlias: 'reviewer-agent', description: 'the reviewer' },
} as const satisfies OptionSpecs;

const ONE_OPTIONAL: readonly PositionalSpec[] = [{ name: 'job', description: 'the job' }];

function parse(...argv: string[]) {
  return parseCommandArgs('job submit', argv, SPEC, ONE_OPTIONAL);
}

/** The usage error `argv` is refused with: one line, exit 64. */
function refusal(argv: string[], positionals: readonly PositionalSpec[] = ONE_OPTIONAL): string {
  try {
    parseCommandArgs('job submit', argv, SPEC, positionals);
  } catch (err) {
    assert.ok(err instanceof UsageError, String(err));
    assert.equal(err.exitCode, 64);
    assert.ok(!err.message.includes('\n'), err.message);
    return err.message;
  }
  assert.fail(`accepted: ${argv.join(' ')}`);
}

describe('CLI options: parsed against the command spec, typed by it', () => {
  it('converts each kind: text, seconds and counts as numbers, flags as booleans', () => {
    const { options, positionals } = parse('--task', 'fix it', '--timeout', '1.5', '--max-iter', '3', '--no-wait', 'J1');
    // The types follow the spec: these lines compile only because they do. (Before deepEqual, which narrows.)
    const task: string = options.task;
    const timeout: number | undefined = options.timeout;
    const maxIter: number | undefined = options['max-iter'];
    const noWait: boolean | undefined = options['no-wait'];
    const workspace: string | undefined = options.workspace;
    assert.deepEqual([task, timeout, maxIter, noWait, workspace], ['fix it', 1.5, 3, true, undefined]);
    assert.deepEqual(options, { task: 'fix it', pace: 'normal', timeout: 1.5, interval: 5, 'max-iter': 3, 'no-wait': true });
    assert.deepEqual(positionals, ['J1']);
  });

  it('fills defaults when an option is not given and keeps what is given', () => {
    const given = parse('--task', 't', '--pace', 'fast', '--interval', '0.5').options;
    assert.equal(given.pace, 'fast');
    assert.equal(given.interval, 0.5);
    const defaults = parse('--task', 't').options;
    // A default makes the option always present: no `?? 5` at the use.
    const interval: number = defaults.interval;
    const pace: string = defaults.pace;
    assert.deepEqual([interval, pace], [5, 'normal']);
    // Optional ones stay optional.
    // @ts-expect-error: --title may be missing
    const title: string = defaults.title;
    assert.equal(title, undefined);
    // @ts-expect-error: --timeout is seconds, a number
    const timeoutText: string | undefined = defaults.timeout;
    assert.equal(timeoutText, undefined);
    // @ts-expect-error: not an option of this command
    assert.equal(defaults.nonsense, undefined);
  });

  it('reads an alias into its option and says which alias was used', () => {
    const viaAlias = parse('--task', 't', '--agent-session', 'herdr:w1');
    assert.equal(viaAlias.options.session, 'herdr:w1');
    assert.deepEqual(viaAlias.aliasUsed, { session: 'agent-session' });
    const viaName = parse('--task', 't', '--session', 'w1');
    assert.equal(viaName.options.session, 'w1');
    assert.deepEqual(viaName.aliasUsed, {});
  });

  it("keeps the seeds' --reviewer AGENT aside when --reviewer-session names the session", () => {
    const { options, aliasUsed } = parse('--task', 't', '--reviewer', 'codex', '--reviewer-session', 'herdr:r1');
    assert.equal(options.reviewer, 'herdr:r1');
    const agent: string | undefined = options['reviewer-agent'];
    assert.equal(agent, 'codex');
    assert.deepEqual(aliasUsed, { reviewer: 'reviewer-session' });
    assert.equal(parse('--task', 't', '--reviewer', 'r1').options['reviewer-agent'], undefined);
  });

  it('refuses an option given twice under its names', () => {
    assert.equal(refusal(['--task', 't', '--session', 'a', '--agent-session', 'b']), 'mam job submit: --session and --agent-session are the same option; give it once');
    assert.equal(refusal(['--task', 't', '--agent-session', 'a', '--agent-session', 'b']), 'mam job submit: --agent-session is given twice; give it once');
  });

  it('refuses bad numbers, missing values and unknown options with one line each', () => {
    assert.equal(refusal(['--task', 't', '--timeout=-1']), "mam job submit: --timeout must be a non-negative number of seconds (got '-1')");
    assert.equal(refusal(['--task', 't', '--timeout', 'soon']), "mam job submit: --timeout must be a non-negative number of seconds (got 'soon')");
    assert.equal(refusal(['--task', 't', '--timeout', '1e3']), "mam job submit: --timeout must be a non-negative number of seconds (got '1e3')");
    assert.equal(refusal(['--task', 't', '--timeout=']), 'mam job submit: --timeout needs a value');
    assert.equal(refusal(['--task', 't', '--max-iter', '0']), "mam job submit: --max-iter must be a whole number ≥ 1 (got '0')");
    assert.equal(refusal(['--task', 't', '--max-iter', '2.5']), "mam job submit: --max-iter must be a whole number ≥ 1 (got '2.5')");
    assert.equal(refusal(['--task', 't', '--title']), "--title needs a value; see 'mam job submit --help'");
    assert.equal(refusal(['--task', 't', '--no-wait=yes']), "--no-wait takes no value; see 'mam job submit --help'");
    assert.equal(refusal(['--task', 't', '--bogus']), "unknown option --bogus; see 'mam job submit --help'");
  });

  it('refuses a missing required option or positional and an extra argument, except under --help', () => {
    assert.equal(refusal([]), 'mam job submit: --task is required');
    assert.equal(refusal(['--task', 't', 'J1', 'J2']), "mam job submit: unexpected argument 'J2'");
    assert.equal(refusal(['--task', 't'], [{ name: 'job', description: 'the job', required: true }]), "mam job submit: missing JOB; see 'mam job submit --help'");
    assert.equal(parseCommandArgs('job submit', ['-h'], SPEC, [{ name: 'job', description: 'the job', required: true }]).options.help, true);
  });
});

describe('isOneOf', () => {
  it("narrows an option's text to the values it may take", () => {
    const paces = ['fast', 'normal'] as const;
    const given: string = 'fast';
    assert.ok(isOneOf(paces, given));
    const pace: 'fast' | 'normal' = given;
    assert.equal(pace, 'fast');
    assert.ok(!isOneOf(paces, 'slow'));
  });
});
