/**
 * Reading a job from the agent's side: the one-line prompt `injectedLine` types and the brief
 * `writeBrief` writes (core/jobs/brief.ts), taken apart again. Scripted agents (the demo agent and
 * the test fixtures' fake agent, through kit.ts) use this instead of their own regular
 * expressions, and a round-trip test keeps the two sides in step. Pure functions, no I/O: the
 * scripted agents bundle this without pulling in the engine.
 */

import { splitWords } from '../core/base/shellWords';
import { parseLoopHint, type LoopHint } from '../core/loop/loopHint';

export { parseLoopHint, type LoopHint };

/** What the typed line names: the job and where its brief is. */
export interface JobLine {
  jobId: string;
  briefPath: string;
}

export interface ParsedBrief {
  jobId: string;
  role: string;
  type: string;
  /** The task section as written (the appendix included), without the protocol. */
  task: string;
  /** The bundled CLI the brief's event commands run (`node "<cli>" event …`). */
  cliPath: string;
  workspace: string;
  /** The heartbeat period `started --heartbeat N` asks for. */
  heartbeatS: number;
  loop: LoopHint | null;
}

export class BriefFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BriefFormatError';
  }
}

const JOB_LINE = /^MAM job (\S+): read the brief at (.+) and follow it exactly\.$/;

/** The inverse of `injectedLine`; undefined for any other line. */
export function parseJobLine(text: string): JobLine | undefined {
  const m = JOB_LINE.exec(text.trim());
  return m ? { jobId: m[1]!, briefPath: m[2]! } : undefined;
}

/** Takes a brief apart; throws BriefFormatError naming what is missing. */
export function parseBrief(text: string): ParsedBrief {
  const normalized = text.replace(/\r\n/g, '\n');
  const started = normalized
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('node '))
    .map(commandWords)
    .find((words) => words[2] === 'event' && words[3] === 'started');
  if (!started) throw new BriefFormatError('the brief has no `node "<cli>" event started …` command');
  const flag = (name: string): string | undefined => {
    const i = started.indexOf(name);
    return i >= 0 ? started[i + 1] : undefined;
  };
  const jobId = flag('--job');
  const workspace = flag('--workspace');
  if (!jobId || !workspace) throw new BriefFormatError('the started command names no --job or --workspace');
  const heartbeat = Number(flag('--heartbeat') ?? '30');
  const task = /\n## Task\n\n([\s\S]*?)\n## Protocol\n/.exec(normalized)?.[1]?.trim();
  if (task === undefined) throw new BriefFormatError('the brief has no "## Task" section');
  return {
    jobId,
    role: /^- role: (.+)$/m.exec(normalized)?.[1]?.trim() ?? 'worker',
    type: /^- type: (.+)$/m.exec(normalized)?.[1]?.trim() ?? 'direct',
    task,
    cliPath: started[1]!,
    workspace,
    heartbeatS: Number.isFinite(heartbeat) && heartbeat > 0 ? heartbeat : 30,
    loop: parseLoopHint(task),
  };
}

/**
 * The argument list (after `node`) of one of the brief's event commands: the same CLI, job and
 * workspace as its `started` line, then the event's own flags. Run it with an argument array.
 */
export function eventArgs(brief: Pick<ParsedBrief, 'cliPath' | 'jobId' | 'workspace'>, event: string, extra: readonly string[] = []): string[] {
  return [brief.cliPath, 'event', event, '--job', brief.jobId, '--workspace', brief.workspace, ...extra];
}

/** A brief's command line in words, as writeBrief quoted it; no words for a line that is not one. */
function commandWords(line: string): string[] {
  try {
    return splitWords(line);
  } catch {
    return [];
  }
}
