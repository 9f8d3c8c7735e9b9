import * as path from 'node:path';

/** Where each part of the control plane lives under `<workspace>/.mam/` (SPEC §3). */
export class ControlPlanePaths {
  readonly dir: string;

  constructor(readonly workspace: string) {
    this.dir = path.join(workspace, '.mam');
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
    return path.join(this.jobsDir, `${jobId}.json`);
  }
  jobDir(jobId: string): string {
    return path.join(this.jobsDir, jobId);
  }
  get auditDir(): string {
    return path.join(this.dir, 'delegate_job_logs');
  }
  auditJobDir(jobId: string): string {
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
  get locksDir(): string {
    return path.join(this.dir, 'locks');
  }
  lock(name: string): string {
    return path.join(this.locksDir, `${name}.lock`);
  }
}
