import type { AuditEntry } from '../store/auditLog';

/** One audit-log entry as one line of text: `mam job logs` and the job-log document in VS Code. */
export function formatEntry(e: AuditEntry): string {
  switch (e.type) {
    case 'event':
      return `${e.at}  ${e.event.padEnd(19)} seq=${e.seq}${e.sender ? ` from ${e.sender}` : ''}${e.detail ? `  ${e.detail}` : ''}${e.late ? '  (late: the job had already ended)' : ''}`;
    case 'transition':
      return `${e.at}  ${'→ ' + e.to}${' '.repeat(Math.max(1, 18 - e.to.length))}${e.from ? `from ${e.from}` : ''}${e.reason ? `  (${e.reason})` : ''}`;
    case 'note':
      return `${e.at}  note                ${e.note}`;
    default:
      return JSON.stringify(e);
  }
}
