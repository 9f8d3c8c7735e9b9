import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { ExitCode, UsageError } from '../../src/core/base/errors';
import { MemoryLogger } from '../../src/core/base/log';
import { cancelJob } from '../../src/core/jobs/jobActions';
import { JobEngine } from '../../src/core/jobs/jobEngine';
import { JobTargets, type JobTarget } from '../../src/core/jobs/jobTarget';
import { buildCore } from '../../src/core/core';
import type { TargetKind } from '../../src/core/jobs/targetAddress';
import { localTarget } from '../../src/core/jobs/localTarget';
import { personTarget } from '../../src/core/jobs/personTarget';
import { submitJob } from '../../src/core/jobs/submit';
import { parseTarget } from '../../src/core/jobs/targetAddress';
import { MAX_TASK_BYTES } from '../../src/core/remote/dispatchMessage';
import { remoteTarget } from '../../src/core/remote/remoteTarget';
import type { JobRecord } from '../../src/core/store/jobSchema';
import { newJobRecord } from '../../src/core/store/newJobRecord';
import { tempDir } from '../support/helpers';

const SECRET = 'a'.repeat(32);

/** A jobs engine over a fresh workspace; nothing here connects to a broker. */
function engineWith(targets: JobTarget[] | 'default', env: NodeJS.ProcessEnv = {}): JobEngine {
  const workspace = tempDir('targets');
  return buildCore(workspace, { env, logger: new MemoryLogger(), cliPath: '/nonexistent/cli.js', ...(targets === 'default' ? {} : { targets }) }).jobs;
}

/** A target that only records what it was asked to do. */
function recordingTarget(kind: TargetKind, calls: string[]): JobTarget {
  return {
    kind,
    check: () => void calls.push(`check ${kind}`),
    deliver: () => Promise.reject(new Error('not delivered in these tests')),
    cancel: async (_engine, job) => void calls.push(`cancel ${kind} ${job.id} ${job.state}`),
    afterEnd: async (_engine, job) => void calls.push(`afterEnd ${kind} ${job.id}`),
  };
}

function usageError(message: RegExp, code = 'usage') {
  return (err: unknown) => err instanceof UsageError && err.exitCode === ExitCode.usage && err.code === code && message.test(err.message);
}

const engines: JobEngine[] = [];
afterEach(() => {
  for (const e of engines.splice(0)) e.dispose();
});
function track(engine: JobEngine): JobEngine {
  engines.push(engine);
  return engine;
}

describe('where a job goes: the target chosen for --session', () => {
  // The targets the composition root registers (built once the run-wide guard has made the temp root).
  let targets: JobTargets;
  before(() => {
    targets = engineWith('default').deps.targets;
  });

  for (const [session, target] of [
    ['w1', localTarget],
    ['tmux:w1', localTarget],
    ['herdr:w1', localTarget],
    ['remote:R', remoteTarget],
    ['remote:R/w1', remoteTarget],
    ['human:ann', personTarget],
  ] as const) {
    it(`${session} → the ${target.kind} target`, () => {
      assert.equal(targets.of(parseTarget(session).kind), target);
    });
  }

  for (const [session, message] of [
    ['remote:R/w1/x', /^--session remote:R\/w1\/x: use remote:RUNNER or remote:RUNNER\/SESSION$/],
    ['remote:', /^--session remote:: .*runner name/],
    ['remote:R/', /^--session remote:R\/: .*session name/],
    ['human:', /^--session human:: .*person's name/],
    ['tmux:a b', /^--session tmux:a b: .*session name/],
  ] as const) {
    it(`${JSON.stringify(session)} is no target → UsageError, exit 64`, () => {
      assert.throws(() => parseTarget(session), usageError(message));
    });
  }

  it('an engine built without a kind of target says so rather than sending the job elsewhere', () => {
    const local = engineWith([localTarget]).deps.targets;
    assert.throws(() => local.of('remote'), /without a target for remote jobs/);
    assert.equal(local.of('local'), localTarget);
  });

  it('a later target of the same kind replaces an earlier one', () => {
    const own = recordingTarget('local', []);
    assert.equal(new JobTargets([localTarget, own]).of('local'), own);
  });
});

describe('the remote target checks before anything is written', () => {
  const check = (env: NodeJS.ProcessEnv, task: string, appendix?: string) => remoteTarget.check(track(engineWith('default', env)), { task, ...(appendix !== undefined ? { appendix } : {}) });

  it('no MAM_DISPATCH_SECRET → exit 64 (no_dispatch_secret)', () => {
    assert.throws(() => check({}, 'fix it'), usageError(/need MAM_DISPATCH_SECRET/, 'no_dispatch_secret'));
  });

  it('a short MAM_DISPATCH_SECRET → exit 64 (weak_dispatch_secret)', () => {
    assert.throws(() => check({ MAM_DISPATCH_SECRET: 'short' }, 'fix it'), usageError(/is 5 characters long/, 'weak_dispatch_secret'));
  });

  it('a task (with its appendix) too large for a dispatch → exit 64; one at the limit passes', () => {
    const half = 'x'.repeat(MAX_TASK_BYTES / 2);
    assert.doesNotThrow(() => check({ MAM_DISPATCH_SECRET: SECRET }, half, half));
    assert.throws(() => check({ MAM_DISPATCH_SECRET: SECRET }, half, `${half}y`), usageError(new RegExp(`^the task is ${MAX_TASK_BYTES + 1} bytes`)));
  });

  it('local sessions and people have nothing to check', () => {
    const engine = track(engineWith('default'));
    assert.doesNotThrow(() => localTarget.check(engine, { task: 'x'.repeat(MAX_TASK_BYTES + 1) }));
    assert.doesNotThrow(() => personTarget.check(engine, { task: 'x'.repeat(MAX_TASK_BYTES + 1) }));
  });

  it('submitJob to remote:R without a secret: exit 64 before the broker or the job folder is touched', async () => {
    const engine = track(engineWith('default'));
    await assert.rejects(submitJob(engine, { session: 'remote:R', prompt: 'fix it', wait: true, baseDir: engine.deps.controlPlane.workspace }), usageError(/need MAM_DISPATCH_SECRET/, 'no_dispatch_secret'));
    assert.equal(engine.endpoint, undefined, 'never connected');
    assert.equal(fs.existsSync(engine.deps.controlPlane.paths.jobsDir), false, 'no job written');
  });

  it('submitJob asks the target of the kind --session names, and only it', async () => {
    const calls: string[] = [];
    const refusing: JobTarget = { ...recordingTarget('remote', calls), check: () => void (calls.push('check remote'), assert.fail('refused')) };
    const engine = track(engineWith([recordingTarget('local', calls), recordingTarget('human', calls), refusing]));
    await assert.rejects(submitJob(engine, { session: 'remote:R/w1', prompt: 'fix it', wait: true, baseDir: engine.deps.controlPlane.workspace }), /refused/);
    assert.deepEqual(calls, ['check remote']);
  });
});

describe('cancelJob tells the job\'s target, after the ledger cancelled it', () => {
  async function registered(engine: JobEngine, id: string, target: JobRecord['target']): Promise<JobRecord> {
    return engine.ledger.register(newJobRecord({ id, session: 'x', type: 'direct', ...(target ? { target } : {}) }), undefined);
  }

  it('a remote job: its runner is told, once, of the cancelled job; a local one goes to the local target', async () => {
    const calls: string[] = [];
    const engine = track(engineWith([recordingTarget('local', calls), recordingTarget('remote', calls)]));
    await registered(engine, 'j-20260101T000000Z-0000000a', { kind: 'remote', name: 'R' });
    await registered(engine, 'j-20260101T000000Z-0000000b', { kind: 'local', name: 'w1' });
    const first = await cancelJob(engine, 'j-20260101T000000Z-0000000a');
    const second = await cancelJob(engine, 'j-20260101T000000Z-0000000b');
    assert.deepEqual([first.changed, first.job.state, second.changed], [true, 'cancelled', true]);
    assert.deepEqual(calls, ['cancel remote j-20260101T000000Z-0000000a cancelled', 'cancel local j-20260101T000000Z-0000000b cancelled']);
  });

  it('an ended job is left as it is and nobody is told', async () => {
    const calls: string[] = [];
    const engine = track(engineWith([recordingTarget('remote', calls)]));
    await registered(engine, 'j-20260101T000000Z-0000000c', { kind: 'remote', name: 'R' });
    await cancelJob(engine, 'j-20260101T000000Z-0000000c');
    const again = await cancelJob(engine, 'j-20260101T000000Z-0000000c');
    assert.equal(again.changed, false);
    assert.equal(calls.length, 1);
  });
});
