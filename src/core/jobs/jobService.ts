import * as fs from 'node:fs';
import type { AuditEntry } from '../store/auditLog';
import type { JobRecord } from '../store/jobSchema';
import { cancelJob, verifyJob, type VerifyResult } from './jobActions';
import type { JobEngine } from './jobEngine';
import type { JobIndex } from './jobIndex';
import { onboardSession, type OnboardResult } from './onboard';
import { paneTextFile } from './paneText';
import { actAsPerson, type PersonAction } from './personJobs';
import { submitJob, type SubmitRequest, type SubmitResult } from './submit';

/**
 * The jobs of one workspace as a long-lived host (the extension) uses them: every action is the
 * CLI's own function (submit.ts, jobActions.ts, personJobs.ts, onboard.ts), each checking the
 * workspace's trust; the jobs in memory; their changes and applied events.
 */
export class JobService {
  constructor(readonly engine: JobEngine) {}

  get index(): JobIndex {
    return this.engine.index;
  }

  get onDidChange(): JobEngine['ledger']['onDidChangeJob'] {
    return this.engine.ledger.onDidChangeJob;
  }

  get onDidApplyEvent(): JobEngine['ledger']['onDidApplyEvent'] {
    return this.engine.ledger.onDidApplyEvent;
  }

  /** Delegates a job and returns once it is delivered (or refused); this engine then watches its timers. */
  submit(request: Omit<SubmitRequest, 'wait' | 'baseDir'> & { baseDir?: string }): Promise<SubmitResult> {
    return submitJob(this.engine, { ...request, wait: false, baseDir: request.baseDir ?? this.engine.deps.controlPlane.workspace });
  }

  cancel(jobId: string): Promise<{ job: JobRecord; changed: boolean }> {
    return cancelJob(this.engine, jobId);
  }

  verify(jobId: string, command: string): Promise<VerifyResult> {
    return verifyJob(this.engine, jobId, command);
  }

  /** A person (`human:NAME`) starts, completes or gives up on a job assigned to them. */
  actAsPerson(jobId: string, action: PersonAction): Promise<JobRecord> {
    return actAsPerson(this.engine, jobId, action);
  }

  /** The session's onboarding job, waited for; its origin tells views the caller reports its end. */
  onboard(session: string): Promise<OnboardResult> {
    return onboardSession(this.engine, session);
  }

  /** The job's audit log. */
  log(jobId: string): AuditEntry[] {
    return this.engine.deps.controlPlane.audit.readEntries(jobId).entries;
  }

  /** The job's pane.txt (paneText.ts), when one was kept. */
  paneTextFile(jobId: string): string | undefined {
    const file = paneTextFile(this.engine.deps.controlPlane.paths, jobId);
    return fs.existsSync(file) ? file : undefined;
  }
}
