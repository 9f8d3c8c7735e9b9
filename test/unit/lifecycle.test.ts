import { strict as assert } from 'node:assert';
import { canTransition, effectOf, TRANSITIONS, type EventEffect } from '../../src/core/jobs/lifecycle';
import { EVENT_NAMES, type EventName } from '../../src/core/messaging/protocol';
import { JOB_STATES, type JobState } from '../../src/core/store/jobSchema';

/** SPEC §5, edge by edge: registered → dispatched → started → completed | failed | timeout | cancelled. */
const ALLOWED = [
  'registered→dispatched', 'registered→cancelled', 'registered→failed',
  'dispatched→started', 'dispatched→completed', 'dispatched→failed', 'dispatched→timeout', 'dispatched→cancelled',
  'started→completed', 'started→failed', 'started→timeout', 'started→cancelled',
];

describe('the job lifecycle table (TRANSITIONS)', () => {
  it(`allows exactly the ${ALLOWED.length} moves of SPEC §5 among all ${JOB_STATES.length}×${JOB_STATES.length} pairs`, () => {
    let checked = 0;
    for (const from of JOB_STATES) {
      for (const to of JOB_STATES) {
        assert.equal(canTransition(from, to), ALLOWED.includes(`${from}→${to}`), `${from} → ${to}`);
        checked++;
      }
    }
    assert.equal(checked, 49);
    assert.deepEqual(Object.keys(TRANSITIONS).sort(), [...JOB_STATES].sort(), 'a row for every state, and no other');
  });

  it('a finished job never moves again, and nothing moves back to registered', () => {
    for (const end of ['completed', 'failed', 'timeout', 'cancelled'] as const) assert.deepEqual(TRANSITIONS[end], [], end);
    for (const from of JOB_STATES) assert.equal(canTransition(from, 'registered'), false, from);
    for (const from of JOB_STATES) assert.equal(canTransition(from, from), false, `${from} → itself`);
  });
});

/** What each event does in each open state (SPEC §5): the expected effect, written out case by case. */
const OPEN_EFFECTS: Record<'registered' | 'dispatched' | 'started', Record<EventName, Omit<EventEffect, 'late' | 'alive'>>> = {
  // Events can only arrive for a delivered job; one that does anyway never skips the delivery step,
  // except `error`, which fails it (registered → failed is allowed).
  registered: { started: {}, progress: {}, heartbeat: {}, permission_required: {}, completed: {}, error: { to: 'failed', reason: 'agent_error' } },
  // The first event starts the job; an agent that reports progress without `started` has started.
  dispatched: {
    started: { to: 'started' }, progress: { to: 'started' }, heartbeat: { to: 'started' }, permission_required: { to: 'started' },
    completed: { to: 'completed' }, error: { to: 'failed', reason: 'agent_error' },
  },
  // Running: the non-terminal events only keep it alive.
  started: { started: {}, progress: {}, heartbeat: {}, permission_required: {}, completed: { to: 'completed' }, error: { to: 'failed', reason: 'agent_error' } },
};

describe('what an event does to a job (effectOf)', () => {
  it(`every one of the ${EVENT_NAMES.length} events in every one of the ${JOB_STATES.length} states`, () => {
    let checked = 0;
    for (const state of JOB_STATES) {
      for (const event of EVENT_NAMES) {
        const got = effectOf(event, state);
        const open = state in OPEN_EFFECTS ? OPEN_EFFECTS[state as keyof typeof OPEN_EFFECTS][event] : undefined;
        // An open job: every event proves the agent alive (the liveness timer restarts).
        // A finished one: the event is late — kept and shown, never applied, and proves nothing.
        const expected: EventEffect = open ? { ...open, alive: true, late: false } : { alive: false, late: true };
        assert.deepEqual(got, expected, `${event} while ${state}`);
        checked++;
      }
    }
    assert.equal(checked, 42);
  });

  it('an effect only ever names a move the table allows', () => {
    for (const state of JOB_STATES) {
      for (const event of EVENT_NAMES) {
        const to = effectOf(event, state).to;
        if (to) assert.ok(canTransition(state, to), `${event} while ${state} → ${to}`);
      }
    }
  });

  it('a completion after a timeout is late: kept, not applied', () => {
    const late: JobState[] = ['completed', 'failed', 'timeout', 'cancelled'];
    for (const state of late) assert.deepEqual(effectOf('completed', state), { alive: false, late: true }, state);
  });
});
