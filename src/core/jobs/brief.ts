import * as fs from 'node:fs';
import * as path from 'node:path';
import { doubleQuote } from '../base/shellWords';
import { writeFileAtomic } from '../store/atomicFile';
import type { JobRecord } from '../store/jobSchema';

export interface BriefInput {
  job: JobRecord;
  /** The task: the prompt, or the contents of the brief file the user gave. */
  task: string;
  /** Absolute path of the bundled CLI the agent runs (`node "<cli>" event …`). */
  cliPath: string;
  workspace: string;
  heartbeatS: number;
  /** Extra sections (e.g. the states of child jobs for a reviewer). */
  appendix?: string;
}

/** Roles that hand in a report file with their completion. */
export function handsInReport(role: string | null): boolean {
  return role === 'reviewer' || role === 'planner';
}

/**
 * Where the agent writes its report: beside the brief, under `.mam/`, so writing it never changes
 * the tree under review (a report written into the checkout would void its own review round).
 */
export function reportPathOf(briefPath: string): string {
  return path.join(path.dirname(briefPath), 'report.md');
}

/**
 * Writes `.mam/jobs/<id>/brief.md`: the task, the role, and the exact commands for every event,
 * with the absolute path of the bundled CLI so no global install is needed. Long or non-ASCII
 * text lives here; the line typed into the agent only points at this file.
 */
export function writeBrief(input: BriefInput, file: string): void {
  const { job } = input;
  const mam = `node ${doubleQuote(input.cliPath)} event`;
  const report = handsInReport(job.role) ? reportPathOf(file) : undefined;
  const common = `--job ${job.id} --workspace ${doubleQuote(input.workspace)}`;
  const text = `# MAM job ${job.id}

You have been given a job by Multi-Agent Mux. Do the task below, and report on it with the commands
in "Protocol": MAM judges the job only by these events, never by your screen.

- job: \`${job.id}\`
- role: ${job.role ?? 'worker'}
- type: ${job.type}${job.parent_job ? `\n- parent job: \`${job.parent_job}\`` : ''}

## Task

${input.task.trim()}
${input.appendix ? `\n${input.appendix.trim()}\n` : ''}
## Protocol

1. Right now, before anything else, acknowledge the job (this also starts automatic heartbeats):

   \`\`\`sh
   ${mam} started ${common} --heartbeat ${input.heartbeatS}
   \`\`\`

2. While you work, report progress now and then (optional):

   \`\`\`sh
   ${mam} progress ${common} --detail "what you are doing"
   \`\`\`

3. If you need a human to approve something, say so before you wait:

   \`\`\`sh
   ${mam} permission_required ${common} --detail "what you need"
   \`\`\`

4. When you are done, report completion with a one-line summary${report ? ' and hand in your report' : ''}:
${report ? `\n   Write your report to this file, and nowhere else (it lies outside the code under review, so writing it\n   changes nothing that is being reviewed):\n\n   ${report}\n` : ''}
   \`\`\`sh
   ${mam} completed ${common} --detail "one-line summary"${report ? ` --report ${doubleQuote(report)}` : ''}
   \`\`\`
${job.role === 'reviewer' ? '\n   End the report with your verdict alone on its last line: `[VERDICT: PASS]` or `[VERDICT: NOT PASS]`.\n' : ''}
5. If you cannot do the job, report the error instead:

   \`\`\`sh
   ${mam} error ${common} --detail "what went wrong"
   \`\`\`

Run each command exactly once. If a command warns that the broker is unreachable, carry on: the event
is kept on disk and delivered later.
`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, text);
}

/** The short ASCII line typed into the agent: the job ID and where its brief is. */
export function injectedLine(jobId: string, briefPath: string): string {
  return `MAM job ${jobId}: read the brief at ${briefPath} and follow it exactly.`;
}
