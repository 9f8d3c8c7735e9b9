import { dateOn, systemClock } from '../base/clock';
import type { JobRecord } from './jobSchema';

/** What a new job's record must be told; everything else starts empty. */
export type NewJobFields = Pick<JobRecord, 'id' | 'session' | 'type'> & Partial<Omit<JobRecord, 'id' | 'session' | 'type' | 'state' | 'seq' | 'created_at' | 'updated_at'>>;

/**
 * A job's record as it is registered: state `registered`, seq 0, signed, created now, nothing
 * delivered, started or finished yet. The submitter, a parent of child jobs and a runner's mirror
 * job all start here and pass only what differs.
 */
export function newJobRecord(fields: NewJobFields, now: Date = dateOn(systemClock)): JobRecord {
  const at = now.toISOString();
  return {
    role: null,
    reason: null,
    parent_job: null,
    detail: null,
    signed: true,
    delivery: null,
    dispatched_at: null,
    started_at: null,
    last_event_at: null,
    finished_at: null,
    missing: [],
    ...fields,
    state: 'registered',
    seq: 0,
    created_at: at,
    updated_at: at,
  };
}
