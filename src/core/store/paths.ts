import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkId } from '../base/ids';
import { isErrnoException } from '../base/errors';

/** `.mam/.gitignore`: the folder ignores itself, as tool caches do, so `git status` stays clean. */
const SELF_IGNORE = '# Multi-Agent Mux: agent sessions, jobs, logs and broker credentials; none of it belongs in git.\n*\n';
const ensured = new Set<string>();

/** Where each part of the control plane lives under `<workspace>/.mam/` (SPEC §3). */
export class ControlPlanePaths {
  readonly dir: string;

  constructor(readonly workspace: string) {
    this.dir = path.join(workspace, '.mam');
  }

  /**
   * Creates `.mam/` if needed, with a `.gitignore` of `*` inside (written once, never overwritten:
   * a user who wants to track part of it may edit it). Every writer calls this before writing.
   */
  ensureDir(): void {
    if (ensured.has(this.dir) && fs.existsSync(this.dir)) return;
    fs.mkdirSync(this.dir, { recursive: true });
    try {
      fs.writeFileSync(this.gitignoreFile, SELF_IGNORE, { flag: 'wx' });
    } catch (err) {
      if (!isErrnoException(err, 'EEXIST')) throw err;
    }
    ensured.add(this.dir);
  }

  get gitignoreFile(): string {
    return path.join(this.dir, '.gitignore');
  }
  get registryDb(): string {
    return path.join(this.dir, 'agent-sessions.db');
  }
  get registryYaml(): string {
    return path.join(this.dir, 'agent-sessions.yaml');
  }
  get jobsDir(): string {
    return path.join(this.dir, 'jobs');
  }
  jobFile(jobId: string): string {
    checkId(jobId);
    return path.join(this.jobsDir, `${jobId}.json`);
  }
  jobDir(jobId: string): string {
    checkId(jobId);
    return path.join(this.jobsDir, jobId);
  }
  get auditDir(): string {
    return path.join(this.dir, 'delegate_job_logs');
  }
  auditJobDir(jobId: string): string {
    checkId(jobId);
    return path.join(this.auditDir, jobId);
  }
  get loopsDir(): string {
    return path.join(this.dir, 'loops');
  }
  get reportsDir(): string {
    return path.join(this.dir, 'reports');
  }
  get brokerFile(): string {
    return path.join(this.dir, 'broker.json');
  }
  get orchestratorsFile(): string {
    return path.join(this.dir, 'orchestrators.json');
  }
  /** The local merge queue (src/core/merge): `queue.json`, a log per entry, scratch worktrees. */
  get mergeDir(): string {
    return path.join(this.dir, 'merge');
  }
  get mergeQueueFile(): string {
    return path.join(this.mergeDir, 'queue.json');
  }
  mergeLog(entryId: string): string {
    checkId(entryId);
    return path.join(this.mergeDir, 'logs', `${entryId}.log`);
  }
  mergeScratch(entryId: string): string {
    checkId(entryId);
    return path.join(this.mergeDir, 'scratch', entryId);
  }
  get locksDir(): string {
    return path.join(this.dir, 'locks');
  }
  lock(name: string): string {
    return path.join(this.locksDir, `${name}.lock`);
  }
}
