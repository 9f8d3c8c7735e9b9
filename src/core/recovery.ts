import { errorMessage, MamError } from './base/errors';
import type { ControlPlane } from './store/controlPlane';
import { isTerminal } from './store/jobSchema';
import type { JobLedger } from './jobs/jobLedger';
import { REASONS } from './jobs/lifecycle';
import type { SessionService } from './sessions/sessionService';
import { NeedsAttentionError } from './sessions/sessionAttention';
import { sessionStatus } from './sessions/sessionStatus';
import type { SessionRow } from './store/sessionSchema';

/** What became of one session in `resume --all`. */
export interface RecoveredSession {
  name: string;
  agent: string;
  outcome: 'resumed' | 'needs_attention' | 'not_resumable' | 'failed';
  /** The conversation it continues (resumed), or why not. */
  detail: string;
  conversation_id: string | null;
  /** Jobs that were open on the dead agent, now `failed (agent_exited)`. */
  failed_jobs: string[];
}

export interface RecoveryDeps {
  controlPlane: ControlPlane;
  sessions: SessionService;
  ledger: JobLedger;
}

/** A session being created or resumed right now is not a casualty. */
const PLACEMENT_GRACE_MS = 120_000;

/**
 * After a crash or a reboot (the multiplexer server is gone): brings back every session that was
 * running, each in its own conversation and folder. A session the user stopped stays stopped.
 * First, jobs still open on a dead agent end `failed (agent_exited)`; a conversation never
 * recorded (codex names its own) is looked up in the agent's store, unambiguous matches only.
 */
export async function resumeAll(deps: RecoveryDeps): Promise<RecoveredSession[]> {
  const { controlPlane, sessions } = deps;
  const rows = await controlPlane.sessions.list();
  const states = await sessionStatus(sessions, rows, { attention: false });
  const casualties = states
    .map((s) => s.session)
    .filter((row): row is SessionRow => row !== null)
    .filter((row) => {
      const state = states.find((s) => s.session?.name === row.name)!;
      if (row.status === 'terminated') return !state.pane?.alive;
      if (row.status === 'running') return state.drift.includes('pane_gone');
      return row.status === 'starting' && state.drift.includes('pane_gone') && Date.now() - Date.parse(row.updated_at) > PLACEMENT_GRACE_MS;
    });

  const out: RecoveredSession[] = [];
  for (const row of casualties) {
    const failedJobs = await failOpenJobs(deps, row);
    await sessions.learnConversation(row.name, { boundMs: 0, onlyIfUnique: true, quiet: true });
    const gone = await sessions.markGone(row.name);
    const base = { name: row.name, agent: row.agent, failed_jobs: failedJobs };
    if (!(await sessions.resumableNow(gone))) {
      const why = gone.conversation_id ? `its conversation ${gone.conversation_id} is not in ${gone.agent}'s store` : `its ${gone.agent} conversation was never recorded and cannot be told apart in the store`;
      out.push({ ...base, outcome: 'not_resumable', detail: why, conversation_id: gone.conversation_id });
      continue;
    }
    try {
      const resumed = await sessions.resume(row.name, { baseDir: gone.cwd });
      out.push({ ...base, outcome: 'resumed', detail: resumed.conversation_id ? `in conversation ${resumed.conversation_id}` : 'restarted', conversation_id: resumed.conversation_id });
    } catch (err) {
      const attention = err instanceof NeedsAttentionError;
      out.push({ ...base, outcome: attention ? 'needs_attention' : 'failed', detail: errorMessage(err), conversation_id: gone.conversation_id });
      if (!attention && !(err instanceof MamError)) throw err;
    }
  }
  return out;
}

/** Ends the jobs a dead agent can no longer finish: `failed (agent_exited)`, released from the session. */
async function failOpenJobs(deps: RecoveryDeps, row: SessionRow): Promise<string[]> {
  const failed: string[] = [];
  for (const job of deps.controlPlane.jobs.list().jobs) {
    if (isTerminal(job.state) || job.target?.kind !== 'local' || job.target.name !== row.name) continue;
    if (job.state !== 'dispatched' && job.state !== 'started') continue;
    await deps.ledger.applyOutbox(job.id); // a completion waiting on disk wins over the verdict below
    const done = await deps.ledger.transition(job.id, 'failed', REASONS.agentExited, {
      when: (j) => !isTerminal(j.state) && j.target?.kind === 'local' && j.target.name === row.name,
      note: `the agent's pane (${row.target ?? 'unknown'} on ${row.mux} server ${row.server}) is gone: its server stopped`,
    });
    if (done) failed.push(job.id);
  }
  return failed;
}
