import * as fs from 'node:fs';
import * as path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { toDisposable, type Disposable } from '../base/disposable';
import { printableLines } from '../base/ids';
import { writeFileAtomic } from '../store/atomicFile';
import type { ControlPlanePaths } from '../store/paths';
import type { JobRecord } from '../store/jobSchema';
import type { JobEngine } from './jobEngine';
import { errorMessage } from '../base/errors';

/** A job's pane text keeps at most this many of its last lines. */
export const PANE_TEXT_LINES = 5000;

/** `delegate_job_logs/<id>/pane.txt`: what the job's pane showed while it ran. */
export function paneTextFile(paths: ControlPlanePaths, jobId: string): string {
  return path.join(paths.auditJobDir(jobId), 'pane.txt');
}

/** The saved pane text of a job, or undefined when none was kept (not a local job, its pane was gone). */
export function readPaneText(paths: ControlPlanePaths, jobId: string): string | undefined {
  try {
    return fs.readFileSync(paneTextFile(paths, jobId), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The seeds' snapshot rule, kept by MAM itself: a long run of output scrolls out of an agent's pane
 * and is lost with it. When a local job ends here, the pane's text since the job's line was typed
 * is saved beside its audit log — colours and other control sequences removed, the last 5,000
 * lines at most — for `mam job logs ID --pane` and the extension. Only the process that ended the
 * job saves it (once); a pane already gone leaves nothing to save. Never decides anything.
 */
export function keepPaneText(engine: JobEngine): Disposable {
  const sub = engine.ledger.onDidEndJob((job) => void savePaneText(engine, job));
  return toDisposable(() => sub.dispose());
}

export async function savePaneText(engine: JobEngine, job: JobRecord): Promise<string | undefined> {
  const target = job.target;
  if (target?.kind !== 'local' || !target.pane || !target.server || !job.dispatched_at) return undefined;
  try {
    const raw = await engine.deps.muxFactory(target.mux ?? 'tmux', target.server).captureRecent(target.pane, PANE_TEXT_LINES * 2);
    const text = sinceJobLine(printableLines(stripVTControlCharacters(raw)), job.id);
    const file = paneTextFile(engine.deps.controlPlane.paths, job.id);
    writeFileAtomic(file, text);
    return file;
  } catch (err) {
    engine.deps.logger.debug(`job ${job.id}: its pane text was not kept: ${errorMessage(err)}`);
    return undefined;
  }
}

/**
 * The lines from the job's own line (the last time it shows: an agent echoes what it was typed) up
 * to the next job's line, if the session already took another; bounded to the last lines. Without
 * the job's line on record (scrolled out, redrawn), the whole capture, bounded.
 */
export function sinceJobLine(text: string, jobId: string): string {
  const lines = text.replace(/\s+$/, '').split('\n');
  const own = `MAM job ${jobId}:`;
  let from = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]!.includes(own)) {
      from = i;
      break;
    }
  }
  let to = lines.length;
  if (from >= 0) {
    const next = lines.findIndex((l, i) => i > from && /MAM job \S+: read the brief at /.test(l) && !l.includes(own));
    if (next >= 0) to = next;
  }
  const kept = lines.slice(Math.max(from, 0), to);
  return `${kept.slice(-PANE_TEXT_LINES).join('\n').replace(/\s+$/, '')}\n`;
}
