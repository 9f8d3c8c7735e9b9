import * as path from 'node:path';
import { readIfExists, writeFileAtomic } from './atomicFile';
import type { ControlPlanePaths } from './paths';

/**
 * A job's token, `.mam/jobs/<id>/token` (0600): the key its events (and its submitter's state
 * messages to a remote runner) are signed with. Written once, when the job is registered.
 */
function tokenFile(paths: ControlPlanePaths, jobId: string): string {
  return path.join(paths.jobDir(jobId), 'token');
}

export function writeJobToken(paths: ControlPlanePaths, jobId: string, token: string): void {
  writeFileAtomic(tokenFile(paths, jobId), token, { mode: 0o600 });
}

/** The job's token, or undefined when it has none (an unsigned job, or one not written yet). */
export function readJobToken(paths: ControlPlanePaths, jobId: string): string | undefined {
  return readIfExists(tokenFile(paths, jobId))?.toString('utf8').trim() || undefined;
}
