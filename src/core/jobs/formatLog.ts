import { printable, printableLines } from '../base/ids';
import type { AuditEntry } from '../store/auditLog';
import type { JobRecord } from '../store/jobSchema';

/** One job as one line: `ID STATE (reason): detail` — what `job submit` and `job wait` print, and an MCP result's text. */
export function describeJob(job: JobRecord): string {
  const said = job.detail ? printable(job.detail, 2000) : job.why ? printable(job.why, 2000) : '';
  return `${job.id} ${job.state}${job.reason ? ` (${job.reason})` : ''}${said ? `: ${said}` : ''}`;
}

/** One audit-log entry as one line of text: `mam job logs` and the job-log document in VS Code. */
export function formatEntry(e: AuditEntry): string {
  switch (e.type) {
    case 'event':
      // Sender and detail come from the agent: shown, never obeyed, and never a line of their own.
      return `${e.at}  ${e.event.padEnd(19)} seq=${e.seq}${e.sender ? ` from ${printable(e.sender, 120)}` : ''}${e.detail ? `  ${printable(e.detail, 2000)}` : ''}${e.late ? '  (late: the job had already ended)' : ''}`;
    case 'transition':
      return `${e.at}  ${'→ ' + e.to}${' '.repeat(Math.max(1, 18 - e.to.length))}${e.from ? `from ${e.from}` : ''}${e.reason ? `  (${e.reason})` : ''}${typeof e.note === 'string' ? `: ${printable(e.note, 2000)}` : ''}${screenOf(e)}`;
    case 'note':
      return `${e.at}  note                ${printable(String(e.note), 2000)}${screenOf(e)}`;
    default:
      return JSON.stringify(e);
  }
}

/** The pane's screen recorded with an entry (a job that timed out, an agent that was blocked), indented. */
function screenOf(e: AuditEntry): string {
  if (typeof e.screen !== 'string' || e.screen.trim() === '') return '';
  // Screen text came from an agent's pane: never hand its control characters to a terminal.
  const lines = printableLines(e.screen).split('\n');
  return `\n${' '.repeat(22)}the pane's last screen:\n${lines.map((l) => `${' '.repeat(22)}│ ${l}`).join('\n')}`;
}
