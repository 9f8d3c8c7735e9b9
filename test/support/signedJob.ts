import * as os from 'node:os';
import { newJobId } from '../../src/core/base/ids';
import type { JobLedger } from '../../src/core/jobs/jobLedger';
import { signatureOf, type EventPayload } from '../../src/core/messaging/protocol';
import { newJobRecord } from '../../src/core/store/newJobRecord';

export interface SignedJob {
  id: string;
  /** One of the job's events as ann's `mam event` sends it: numbered `seq`, stamped now, signed. */
  event(seq: number, name: EventPayload['event'], detail: string): EventPayload;
}

/** A job for the person ann, signed with `token`, owned by this process, registered and dispatched on `ledger`. */
export async function dispatchedSignedJob(ledger: JobLedger, token: string): Promise<SignedJob> {
  const id = newJobId();
  await ledger.register(newJobRecord({ id, session: 'human:ann', type: 'direct', target: { kind: 'human', name: 'ann' }, timers: { start_timeout_s: 10, heartbeat_s: 5, idle_timeout_s: 20, timeout_s: 600 }, owner: { pid: process.pid, host: os.hostname(), token: 'me' } }), token);
  await ledger.transition(id, 'dispatched', null);
  return {
    id,
    event(seq, name, detail) {
      const p: EventPayload = { v: 1, job_id: id, event: name, seq, ts: new Date().toISOString(), sender: 'ann', detail };
      return { ...p, sig: signatureOf(p, token) };
    },
  };
}
