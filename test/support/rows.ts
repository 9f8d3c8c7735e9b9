import { newJobId } from '../../src/core/base/ids';
import type { JobRecord } from '../../src/core/store/jobSchema';
import type { SessionRow } from '../../src/core/store/sessionSchema';

export function sessionRow(name: string, overrides: Partial<SessionRow> = {}): SessionRow {
  const now = new Date().toISOString();
  return {
    name,
    agent: 'shell',
    role: 'worker',
    mux: 'tmux',
    server: 'mam-test',
    target: null,
    cwd: '/tmp',
    status: 'running',
    resumable: false,
    conversation_id: null,
    pid: null,
    created_at: now,
    updated_at: now,
    current_job: null,
    command: null,
    ...overrides,
  };
}

export function jobRecord(overrides: Partial<JobRecord> = {}): JobRecord {
  const now = new Date().toISOString();
  return { id: newJobId(), session: 'tmux:w1', type: 'direct', role: 'worker', state: 'registered', reason: null, created_at: now, updated_at: now, seq: 0, parent_job: null, detail: null, ...overrides };
}
