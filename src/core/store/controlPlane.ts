import type { Logger } from '../base/log';
import { AuditLog } from './auditLog';
import { JobStore } from './jobStore';
import { ControlPlanePaths } from './paths';
import { SessionRegistry } from './sessionRegistry';

export interface ControlPlaneOptions {
  logger: Logger;
  lockTimeoutMs?: number;
}

/** The stores of one workspace's `.mam/` folder, built once per workspace by the CLI or the extension. */
export class ControlPlane {
  readonly paths: ControlPlanePaths;
  readonly sessions: SessionRegistry;
  readonly jobs: JobStore;
  readonly audit: AuditLog;

  constructor(
    readonly workspace: string,
    readonly options: ControlPlaneOptions,
  ) {
    this.paths = new ControlPlanePaths(workspace);
    this.sessions = new SessionRegistry(this.paths, { logger: options.logger, lockTimeoutMs: options.lockTimeoutMs });
    this.jobs = new JobStore(this.paths, options.logger);
    this.audit = new AuditLog(this.paths);
  }
}
