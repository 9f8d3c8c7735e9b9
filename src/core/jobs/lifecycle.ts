import type { EventName } from '../messaging/protocol';
import { isTerminal, type JobState } from '../store/jobSchema';

/**
 * The job lifecycle as data (SPEC §5): which states may follow which, and what each event does.
 * Handlers elsewhere only look things up here.
 *
 *   registered → dispatched → started → completed | failed | timeout | cancelled
 */
export const TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  registered: ['dispatched', 'cancelled', 'failed'],
  dispatched: ['started', 'completed', 'failed', 'timeout', 'cancelled'],
  started: ['completed', 'failed', 'timeout', 'cancelled'],
  completed: [],
  failed: [],
  timeout: [],
  cancelled: [],
};

export function canTransition(from: JobState, to: JobState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** What an accepted event does to a job in `state`. */
export interface EventEffect {
  /** The new state, if the event moves the job. */
  to?: JobState;
  reason?: string;
  /** The event proves the agent is alive: the liveness timer restarts. */
  alive: boolean;
  /** It arrived after the job ended (e.g. a completion after a timeout): kept, shown, not applied. */
  late: boolean;
}

const EVENT_TARGET: Record<EventName, { to: JobState; reason?: string }> = {
  started: { to: 'started' },
  progress: { to: 'started' },
  heartbeat: { to: 'started' },
  permission_required: { to: 'started' },
  completed: { to: 'completed' },
  error: { to: 'failed', reason: 'agent_error' },
};

export function effectOf(event: EventName, state: JobState): EventEffect {
  if (isTerminal(state)) return { alive: false, late: true };
  const target = EVENT_TARGET[event];
  // An agent that reports progress without `started` has evidently started.
  if (target.to === 'started' && state === 'started') return { alive: true, late: false };
  if (!canTransition(state, target.to)) return { alive: true, late: false };
  return { to: target.to, ...(target.reason ? { reason: target.reason } : {}), alive: true, late: false };
}

/** Reasons a job ends without a terminal event from its agent. */
export const REASONS = {
  agentBlocked: 'agent_blocked',
  deadline: 'deadline_timeout',
  wallClock: 'wall_clock_timeout',
  agentExited: 'agent_exited',
  sessionBusy: 'session_busy',
  targetNotFound: 'target_not_found',
  notDelivered: 'not_delivered',
  claimed: 'claimed_by_another_attempt',
  cancelledByUser: 'cancelled_by_user',
  /** A remote runner's mirror job, cancelled because its submitter cancelled the job. */
  cancelledBySubmitter: 'cancelled_by_submitter',
  /** A remote job whose runner vanished from the broker (its MQTT will said offline): nobody relays its events. */
  runnerLost: 'runner_lost',
  /** A remote runner's mirror job, ended because its submitter had ended the job (e.g. runner_lost while the runner was away). */
  endedBySubmitter: 'ended_by_submitter',
} as const;
