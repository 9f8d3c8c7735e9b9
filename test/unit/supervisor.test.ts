import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import { MemoryLogger } from '../../src/core/base/log';
import { JobLedger } from '../../src/core/jobs/jobLedger';
import { JobSupervisor, nextDeadline } from '../../src/core/jobs/supervisor';
import type { EventName, EventPayload } from '../../src/core/messaging/protocol';
import { JobOutbox } from '../../src/core/messaging/outbox';
import type { MuxFactory } from '../../src/core/mux';
import type { PaneInfo } from '../../src/core/mux/multiplexer';
import type { ControlPlane } from '../../src/core/store/controlPlane';
import type { JobRecord, JobTimers } from '../../src/core/store/jobSchema';
import FakeTimers from '@sinonjs/fake-timers';
import { clockOf, type FakeClock } from '../support/clock';
import { controlPlane, jobRecord, tempWorkspace } from '../support/helpers';

const S = 1000;
const TIMERS: JobTimers = { start_timeout_s: 10, heartbeat_s: 5, idle_timeout_s: 20, timeout_s: 60 };
const iso = (ms: number) => new Date(ms).toISOString();
const T0 = Date.UTC(2030, 0, 1);

describe('nextDeadline: the next deadline of a job, from its record alone', () => {
  const job = (over: Partial<JobRecord>) => jobRecord({ timers: TIMERS, dispatched_at: iso(T0), delivered_at: iso(T0 + 2 * S), ...over });
  const due = (over: Partial<JobRecord>) => {
    const d = nextDeadline(job(over));
    return d && { at: d.at, state: d.state, reason: d.reason };
  };

  it('none without timers, before dispatch, or once the job is registered only or finished', () => {
    assert.equal(nextDeadline(job({ state: 'dispatched', timers: undefined })), undefined);
    assert.equal(nextDeadline(job({ state: 'dispatched', dispatched_at: null })), undefined);
    for (const state of ['registered', 'completed', 'failed', 'timeout', 'cancelled'] as const) assert.equal(due({ state }), undefined, state);
  });

  it('dispatched: T from delivery → failed agent_blocked, with a note naming T', () => {
    assert.deepEqual(due({ state: 'dispatched' }), { at: T0 + 2 * S + 10 * S, state: 'failed', reason: 'agent_blocked' });
    assert.equal(nextDeadline(job({ state: 'dispatched' }))!.note, 'no started within 10 s of delivery');
  });

  it('dispatched, never confirmed delivered (its submitter died midway): T from dispatch plus the delivery bound (120 s)', () => {
    assert.deepEqual(due({ state: 'dispatched', delivered_at: null }), { at: T0 + 120 * S + 10 * S, state: 'failed', reason: 'agent_blocked' });
  });

  it('started: K×N after the last event → timeout deadline_timeout; without an event yet, from delivery', () => {
    assert.deepEqual(due({ state: 'started', last_event_at: iso(T0 + 7 * S) }), { at: T0 + 7 * S + 20 * S, state: 'timeout', reason: 'deadline_timeout' });
    assert.deepEqual(due({ state: 'started', last_event_at: null }), { at: T0 + 2 * S + 20 * S, state: 'timeout', reason: 'deadline_timeout' });
    assert.equal(nextDeadline(job({ state: 'started' }))!.note, 'no event for 20 s');
  });

  it('the budget wins when it comes first: from delivery, in either open state', () => {
    const budget = { at: T0 + 2 * S + 60 * S, state: 'timeout', reason: 'wall_clock_timeout' };
    assert.deepEqual(due({ state: 'started', last_event_at: iso(T0 + 50 * S) }), budget);
    assert.deepEqual(due({ state: 'dispatched', timers: { ...TIMERS, timeout_s: 5 } }), { ...budget, at: T0 + 2 * S + 5 * S });
    assert.equal(nextDeadline(job({ state: 'started', last_event_at: iso(T0 + 50 * S) }))!.note, 'the wall-clock budget of 60 s ran out');
  });

  it('a tie goes to the liveness deadline', () => {
    assert.deepEqual(due({ state: 'started', last_event_at: iso(T0 + 42 * S) }), { at: T0 + 62 * S, state: 'timeout', reason: 'deadline_timeout' });
    assert.deepEqual(due({ state: 'dispatched', timers: { ...TIMERS, timeout_s: 10 } }), { at: T0 + 12 * S, state: 'failed', reason: 'agent_blocked' });
  });
});

/**
 * The supervisor on a fake clock: every deadline fires exactly when it is due, never a millisecond
 * before, and late events are applied before any timer judges (SPEC §5, §6). The ledgers keep the
 * same clock, so they stamp events with its time.
 */
describe('the job supervisor on a fake clock', () => {
  let clock: FakeClock;
  let cp: ControlPlane;
  let ledger: JobLedger;
  let panes: PaneInfo[];
  let judged: string[];
  const supervisors: JobSupervisor[] = [];
  /** What each supervisor logged: it logs each decision it made. */
  const logs: MemoryLogger[] = [];
  const me = { pid: process.pid, host: os.hostname(), token: 'me' };
  const muxFactory: MuxFactory = () => ({ listPanes: async () => panes, capture: async () => 'the last screen' }) as never;

  beforeEach(() => {
    clock = FakeTimers.createClock(Date.now());
    cp = controlPlane(tempWorkspace());
    ledger = new JobLedger(cp, new MemoryLogger(), clockOf(clock));
    panes = [{ id: '%1', alive: true, pid: 4242, command: 'node' } as PaneInfo];
    judged = [];
  });
  afterEach(() => {
    for (const s of supervisors.splice(0)) s.dispose();
    logs.length = 0;
    ledger.dispose();
  });

  /** Judgements held at the start until this many have begun (two supervisors deciding at once). */
  let barrier = 0;
  const held: Array<() => void> = [];

  function supervise(scope: { ownerToken: string } | 'orphans' = { ownerToken: 'me' }, own = ledger): JobSupervisor {
    const logger = new MemoryLogger();
    logs.push(logger);
    const s = new JobSupervisor({
      controlPlane: cp, ledger: own, muxFactory, logger, scope, clock: clockOf(clock), paneCheckMs: S,
      // Called at once when a timer is about to judge: a record of every judgement that began.
      beforeJudge: async (id) => {
        judged.push(id);
        if (barrier) {
          await new Promise<void>((go) => {
            held.push(go);
            if (held.length === barrier) for (const release of held.splice(0)) release();
          });
        }
        await own.applyOutbox(id);
      },
    });
    supervisors.push(s);
    return s;
  }

  /** A job delivered now, to pane %1 of tmux server `srv`. */
  async function delivered(over: Partial<JobRecord> = {}): Promise<JobRecord> {
    const now = iso(clock.now);
    const record = jobRecord({
      state: 'dispatched', timers: TIMERS, owner: me, dispatched_at: now, delivered_at: now,
      target: { kind: 'local', name: 'w1', mux: 'tmux', server: 'srv', pane: '%1', pane_pid: 4242 }, ...over,
    });
    return ledger.register(record, undefined);
  }

  /** Resolves with the job once it is in `state`; waits on the ledger's change event, at most 5 s of real time. */
  function reaches(id: string, state: JobRecord['state']): Promise<JobRecord> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        sub.dispose();
        reject(new Error(`job ${id} did not reach ${state}; it is ${cp.jobs.get(id)?.state}`));
      }, 5_000);
      const done = (job: JobRecord) => {
        clearTimeout(timer);
        sub.dispose();
        resolve(job);
      };
      const sub = ledger.onDidChangeJob(({ job }) => job.id === id && job.state === state && done(job));
      const now = cp.jobs.get(id);
      if (now?.state === state) done(now);
    });
  }

  /** Moves the clock 1 ms short of `ms` on (no timer judges, the job is still open), then to `ms`: it ends in `to`. */
  async function endsAfter(id: string, ms: number, to: JobRecord['state']): Promise<JobRecord> {
    const before = state(id);
    await clock.tickAsync(ms - 1);
    assert.deepEqual(judged, [], 'no timer judged a millisecond early');
    assert.equal(state(id), before);
    await clock.tickAsync(1);
    return reaches(id, to);
  }

  /** A job delivered now, watched by this process's supervisor, whose agent said `started`. */
  async function startedJob(): Promise<JobRecord> {
    supervise();
    const job = await delivered();
    await send(job.id, 'started');
    return job;
  }

  let seq = 0;
  const payload = (id: string, event: EventName): EventPayload => ({ v: 1, job_id: id, event, seq: ++seq, ts: iso(clock.now), sender: 'w1', detail: null });
  const send = (id: string, event: EventName) => ledger.applyEvent(payload(id, event));
  const state = (id: string) => cp.jobs.require(id).state;
  beforeEach(() => {
    seq = 0;
    barrier = 0;
  });

  it('T: no started within T of delivery → failed agent_blocked, at T and not a millisecond before', async () => {
    supervise();
    const job = await delivered();
    const ended = await endsAfter(job.id, 10 * S, 'failed');
    assert.deepEqual([ended.reason, ended.why], ['agent_blocked', 'no started within 10 s of delivery']);
    const entry = cp.audit.readEntries(job.id).entries.find((e) => e.type === 'transition' && e.to === 'failed')!;
    assert.equal(entry.screen, 'the last screen', "the pane's last screen is kept for diagnosis");
  });

  it('started in time: T no longer applies; K×N counts from the last event', async () => {
    supervise();
    const job = await delivered();
    await clock.tickAsync(9 * S);
    await send(job.id, 'started');
    const ended = await endsAfter(job.id, 20 * S, 'timeout'); // 29 s after delivery: long past T
    assert.deepEqual([ended.reason, ended.why], ['deadline_timeout', 'no event for 20 s']);
  });

  it('N: every event restarts the liveness deadline (heartbeat, progress, permission_required)', async () => {
    const job = await startedJob();
    for (const event of ['heartbeat', 'progress', 'permission_required'] as const) {
      await clock.tickAsync(15 * S);
      await send(job.id, event);
    }
    await clock.tickAsync(20 * S - 1); // 65 s after delivery: only the budget (60 s) could have judged
    assert.deepEqual(judged, [job.id], 'only the budget judged');
    assert.equal((await reaches(job.id, 'timeout')).reason, 'wall_clock_timeout');
  });

  it('K×N: heartbeats every N keep the job alive until the wall-clock budget, which ends it at 60 s exactly', async () => {
    const job = await startedJob();
    for (let t = 5; t < 60; t += 5) {
      await clock.tickAsync(5 * S);
      await send(job.id, 'heartbeat');
    }
    const ended = await endsAfter(job.id, 5 * S, 'timeout');
    assert.deepEqual([ended.reason, ended.why], ['wall_clock_timeout', 'the wall-clock budget of 60 s ran out']);
  });

  it('late events are applied before any timer judges: a completion waiting in the outbox wins over T', async () => {
    supervise();
    const job = await delivered();
    const outbox = new JobOutbox(cp.paths.jobDir(job.id));
    for (const event of ['started', 'completed'] as const) {
      outbox.allocateSeq();
      await outbox.append(payload(job.id, event));
    }
    await clock.tickAsync(10 * S);
    assert.deepEqual(judged, [job.id], 'the timer came due');
    const ended = await reaches(job.id, 'completed');
    assert.equal(ended.late_events, undefined, 'applied as a normal completion, not a late one');
    assert.ok(!cp.audit.readEntries(job.id).entries.some((e) => e.type === 'transition' && e.to === 'failed'));
  });

  it('late events are applied before any timer judges: a heartbeat waiting in the outbox re-arms K×N from when it is applied', async () => {
    const job = await startedJob();
    const outbox = new JobOutbox(cp.paths.jobDir(job.id));
    outbox.allocateSeq(); // seq 1: the `started` above, which the broker brought
    outbox.allocateSeq();
    await outbox.append(payload(job.id, 'heartbeat')); // seq 2, never seen by a subscriber
    await clock.tickAsync(20 * S);
    assert.deepEqual(judged, [job.id], 'the timer came due');
    await until(() => cp.jobs.require(job.id).seq === 2);
    assert.equal(state(job.id), 'started', 'no deadline_timeout while an event waited');
    judged.length = 0;
    assert.equal((await endsAfter(job.id, 20 * S, 'timeout')).reason, 'deadline_timeout');
  });

  it('a completion after the timeout is kept as late, and the outcome stays timeout', async () => {
    const job = await startedJob();
    await clock.tickAsync(20 * S);
    await reaches(job.id, 'timeout');
    const outcome = await send(job.id, 'completed');
    assert.equal(outcome.status === 'applied' && outcome.late, true);
    const after = cp.jobs.require(job.id);
    assert.deepEqual([after.state, after.reason, after.late_events?.map((e) => e.event)], ['timeout', 'deadline_timeout', ['completed']]);
  });

  it("the agent's pane gone → failed agent_exited at the next pane check, long before K×N", async () => {
    const job = await startedJob();
    await clock.tickAsync(3 * S);
    assert.equal(state(job.id), 'started', 'its pane is alive');
    panes = [{ ...panes[0]!, pid: 999 }]; // the pane's process was replaced
    await clock.tickAsync(S);
    assert.equal((await reaches(job.id, 'failed')).reason, 'agent_exited');
    assert.deepEqual(judged, [], 'no timer was needed');
  });

  it('two supervisors (two processes) judging one job at the same moment decide once', async () => {
    const other = new JobLedger(cp, new MemoryLogger(), clockOf(clock));
    // Each judgement ends in a transition, done or found decided: count those that returned.
    let decided = 0;
    for (const l of [ledger, other]) {
      const transition = l.transition.bind(l);
      l.transition = async (...args) => {
        try {
          return await transition(...args);
        } finally {
          decided++;
        }
      };
    }
    supervise();
    const second = supervise({ ownerToken: 'me' }, other);
    barrier = 2;
    const job = await delivered();
    second.scan(); // the other process finds the job on disk
    await clock.tickAsync(10 * S);
    await reaches(job.id, 'failed');
    await until(() => judged.length === 2 && decided === 2); // both supervisors judged
    const ends = cp.audit.readEntries(job.id).entries.filter((e) => e.type === 'transition' && e.to === 'failed');
    assert.equal(ends.length, 1);
    const decisions = logs.flatMap((l) => l.lines).filter((l) => l.message.startsWith(`job ${job.id}: failed`));
    assert.equal(decisions.length, 1, 'one supervisor decided; the other found it decided under the lock');
    other.dispose();
  });

  it('a job of another live submitter is not judged: it judges its own; an orphan watcher looks again every 5 s', async () => {
    supervise({ ownerToken: 'someone else' });
    supervise('orphans');
    const job = await delivered();
    await clock.tickAsync(10 * S + 5 * S * 3);
    assert.deepEqual(judged, [], 'its submitter (this process) is alive');
    assert.equal(state(job.id), 'dispatched');
  });

  it('an orphan watcher judges a job once its submitter is gone, at the next look', async () => {
    supervise('orphans');
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    const job = await delivered({ owner: { ...me, pid: gone } });
    assert.equal((await endsAfter(job.id, 10 * S, 'failed')).reason, 'agent_blocked');
  });

  it("an orphan watcher leaves other hosts' jobs alone", async () => {
    supervise('orphans');
    const job = await delivered({ owner: { ...me, host: `not-${os.hostname()}`, pid: 1 } });
    await clock.tickAsync(60 * S);
    assert.deepEqual(judged, []);
    assert.equal(state(job.id), 'dispatched');
  });

  it('enforceDue (monitor --once) judges every job already past its deadline, now, and only those', async () => {
    const past = await delivered({ delivered_at: iso(clock.now - 11 * S) });
    const future = await delivered({ target: { kind: 'local', name: 'w2', mux: 'tmux', server: 'srv', pane: '%1', pane_pid: 4242 } });
    await supervise().enforceDue();
    assert.equal(state(past.id), 'failed');
    assert.equal(state(future.id), 'dispatched');
  });

  it('disposed, it arms nothing and judges nothing', async () => {
    const s = supervise();
    const job = await delivered();
    s.dispose();
    assert.equal(clock.countTimers(), 0, 'no timer left armed');
    await clock.tickAsync(120 * S);
    assert.deepEqual(judged, []);
    assert.equal(state(job.id), 'dispatched');
  });
});

/** Waits on real time, checking every 5 ms, at most 5 s. */
async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !predicate(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(predicate(), 'timed out');
}
