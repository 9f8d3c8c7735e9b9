import { strict as assert } from 'node:assert';
import * as os from 'node:os';
import { MemoryLogger } from '../../src/core/base/log';
import { JobLedger } from '../../src/core/jobs/jobLedger';
import { JobSupervisor } from '../../src/core/jobs/supervisor';
import { topicMatches } from '../../src/core/jobs/jobBus';
import { signatureOf, topics } from '../../src/core/messaging/protocol';
import type { MuxFactory } from '../../src/core/mux';
import { RefusedDispatch } from '../../src/core/remote/dispatchMessage';
import { presenceVerdict, readPresence, RunnerPresence, type PresencePayload } from '../../src/core/remote/presence';
import type { JobRecord } from '../../src/core/store/jobSchema';
import { controlPlane, jobRecord, tempWorkspace } from '../support/helpers';

const SECRET = 'b'.repeat(32);

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof RefusedDispatch) return err.reason;
    throw err;
  }
  assert.fail('accepted');
}

describe('runner presence messages (mam/remote/<runner>/presence)', () => {
  const run = new RunnerPresence('R', SECRET);
  const read = (text: string, topic = topics.presence('R'), secret = SECRET) => readPresence(Buffer.from(text), topic, secret);

  it('each state of one run reads back signed, with the same instance and start', () => {
    for (const state of ['online', 'stopped', 'offline'] as const) {
      const p = read(run.message(state));
      assert.deepEqual([p.runner, p.state, p.instance, p.since], ['R', state, run.instance, run.since]);
    }
    assert.notEqual(new RunnerPresence('R', SECRET).instance, run.instance, 'each run is an instance of its own');
  });

  it('unsigned, mis-signed, on another runner\'s topic, off-schema or not JSON: refused with its reason', () => {
    const unsigned = JSON.parse(run.message('offline')) as PresencePayload;
    delete unsigned.sig;
    assert.equal(refusal(() => read(JSON.stringify(unsigned))), 'missing_signature');
    assert.equal(refusal(() => read(new RunnerPresence('R', 'c'.repeat(32)).message('offline'))), 'bad_signature');
    assert.equal(refusal(() => read(run.message('offline'), topics.presence('R2'))), 'schema', 'it names R: not the runner of that topic');
    assert.equal(refusal(() => read(run.message('offline'), 'mam/remote/R/elsewhere')), 'wrong_topic');
    const extra: Record<string, unknown> = { ...(JSON.parse(run.message('offline')) as Record<string, unknown>), jobs: ['all'] };
    assert.equal(refusal(() => read(JSON.stringify({ ...extra, sig: signatureOf(extra, SECRET) }))), 'schema');
    const state = { ...(JSON.parse(run.message('offline')) as PresencePayload), state: 'gone' };
    assert.equal(refusal(() => read(JSON.stringify({ ...state, sig: signatureOf(state, SECRET) }))), 'schema');
    assert.equal(refusal(() => read('offline')), 'malformed_json');
  });

  it('the presence filter matches every runner\'s presence and nothing else', () => {
    assert.ok(topicMatches(topics.allPresence, topics.presence('gpu-box')));
    for (const t of ['mam/remote/R/dispatch/j-1', 'mam/remote/R/presence/x', 'mam/remote/presence', 'mam/ws/jobs/j/state']) assert.ok(!topicMatches(topics.allPresence, t), t);
    assert.ok(topicMatches('mam/#', 'mam/remote/R/presence'));
  });
});

describe('presenceVerdict: what a runner\'s word ends', () => {
  const at = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s)).toISOString();
  const msg = (state: PresencePayload['state'], instance = 'aaaaaaaa', since = at(0)): PresencePayload => ({ v: 1, runner: 'R', state, instance, since });
  const LIVE = false;
  const RETAINED = true;

  it('the run we knew online goes offline → all its jobs; so does a live offline of a runner never heard of', () => {
    assert.equal(presenceVerdict(msg('online'), msg('offline'), LIVE), 'all');
    assert.equal(presenceVerdict(msg('online'), msg('offline'), RETAINED), 'all', 'it went while we were away from the broker');
    assert.equal(presenceVerdict(undefined, msg('offline'), LIVE), 'all');
  });

  it('only the retained word that it is offline, since some time → the jobs it had started; dispatched ones may wait for it', () => {
    assert.equal(presenceVerdict(undefined, msg('offline'), RETAINED), 'started');
  });

  it('online and stopped end nothing', () => {
    assert.equal(presenceVerdict(undefined, msg('online'), RETAINED), 'none');
    assert.equal(presenceVerdict(msg('online'), msg('stopped'), LIVE), 'none');
    assert.equal(presenceVerdict(msg('offline'), msg('online'), LIVE), 'none', 'the same run back after its will (a reconnect that replaced its connection)');
  });

  it('stale: a word of an earlier run (a replay, an old will), the same word again, or a will after a goodbye', () => {
    const now = msg('online', 'bbbbbbbb', at(10));
    assert.equal(presenceVerdict(now, msg('offline', 'aaaaaaaa', at(0)), LIVE), 'stale');
    assert.equal(presenceVerdict(now, msg('online', 'aaaaaaaa', at(0)), LIVE), 'stale', 'a replayed online of an old run cannot set up its offline');
    assert.equal(presenceVerdict(msg('offline'), msg('offline'), LIVE), 'stale', 'judged once');
    assert.equal(presenceVerdict(msg('stopped'), msg('offline'), LIVE), 'stale');
  });

  it('a newer run\'s offline after an older run\'s word → all (we missed its online)', () => {
    assert.equal(presenceVerdict(msg('offline', 'aaaaaaaa', at(0)), msg('offline', 'bbbbbbbb', at(10)), LIVE), 'all');
  });
});

describe('JobSupervisor.failNow: a fact heard (a lost runner) ends jobs at once, within the supervisor\'s scope', () => {
  const muxFactory: MuxFactory = () => ({ listPanes: async () => [], capture: async () => '' }) as never;
  let ledger: JobLedger;
  let supervisors: JobSupervisor[];
  beforeEach(() => (supervisors = []));
  afterEach(() => {
    for (const s of supervisors) s.dispose();
    ledger.dispose();
  });

  it('fails the jobs it picks that it may judge, after reading their outboxes; others, and ended ones, stay', async () => {
    const cp = controlPlane(tempWorkspace());
    ledger = new JobLedger(cp, new MemoryLogger());
    const read: string[] = [];
    const supervise = (scope: { ownerToken: string } | 'orphans') => {
      const s = new JobSupervisor({ controlPlane: cp, ledger, muxFactory, logger: new MemoryLogger(), scope, paneCheckMs: 60_000, beforeJudge: async (id) => void read.push(id) });
      supervisors.push(s);
      return s;
    };
    const now = new Date().toISOString();
    const remote = (over: Partial<JobRecord>) =>
      ledger.register(jobRecord({ state: 'started', dispatched_at: now, delivered_at: now, target: { kind: 'remote', name: 'R' }, ...over }), undefined);
    const mine = await remote({ owner: { pid: process.pid, host: os.hostname(), token: 'me' } });
    const nobodys = await remote({ owner: null });
    const otherRunner = await remote({ owner: null, target: { kind: 'remote', name: 'R2' } });
    const done = await remote({ owner: null, state: 'completed' });
    const alive = { pid: process.pid, host: os.hostname(), token: 'someone' };
    const waitedOn = await remote({ owner: alive });
    const ofR = (j: JobRecord) => j.target?.kind === 'remote' && j.target.name === 'R';

    const owner = await supervise({ ownerToken: 'me' }).failNow(ofR, 'runner_lost', 'R went');
    assert.deepEqual(owner.map((j) => j.id), [mine.id], "an owner judges its own job only");
    const orphans = await supervise('orphans').failNow(ofR, 'runner_lost', 'R went');
    assert.deepEqual(orphans.map((j) => j.id), [nobodys.id], 'the warden judges the job nobody waits on, not one a live submitter waits on');
    assert.deepEqual(read.sort(), [mine.id, nobodys.id].sort(), 'each outbox was read before its judgement');
    const job = cp.jobs.require(nobodys.id);
    assert.deepEqual([job.state, job.reason, job.why], ['failed', 'runner_lost', 'R went']);
    for (const j of [otherRunner, waitedOn]) assert.equal(cp.jobs.require(j.id).state, 'started');
    assert.equal(cp.jobs.require(done.id).state, 'completed');
  });
});
