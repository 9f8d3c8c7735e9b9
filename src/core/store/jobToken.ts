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
  const file = tokenFile(paths, jobId);
  writeFileAtomic(file, token, { mode: 0o600 });
  remember(file, token);
}

/** The job's token, or undefined when it has none (an unsigned job, or one not written yet). */
export function readJobToken(paths: ControlPlanePaths, jobId: string): string | undefined {
  const file = tokenFile(paths, jobId);
  const known = tokens.get(file);
  if (known !== undefined) return known;
  const token = readIfExists(file)?.toString('utf8').trim() || undefined;
  if (token !== undefined) remember(file, token);
  return token;
}

/**
 * Tokens this process read or wrote, by file. A token never changes once written, and the
 * processes that sign and check events (the heartbeat service, a runner, the subscriber) do so for
 * the same jobs again and again: each event read it from disk before. A job without one is asked
 * again (its token may not be written yet). The oldest go first past 1,024.
 */
const tokens = new Map<string, string>();

function remember(file: string, token: string): void {
  if (tokens.size >= 1024) tokens.delete(tokens.keys().next().value!);
  tokens.set(file, token);
}
