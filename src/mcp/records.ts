import { printableText } from '../core/base/printable';
import type { JobRecord } from '../core/store/jobSchema';

/**
 * What a tool may hand back, made safe to hand back. A job record is given field by field — the
 * fields jobSchema.ts names, without its owner's claim token, a mirror's dispatch nonce, or any
 * field a newer MAM may keep that this one does not know — and every string of every answer has
 * its control characters shown (`\x1b`), newlines and tabs kept: agent text is data, never obeyed.
 * Job tokens live only in `.mam/jobs/<id>/token` and are never read here.
 */
const JOB_FIELDS = [
  'id', 'session', 'type', 'role', 'state', 'reason', 'title', 'created_at', 'updated_at', 'seq', 'parent_job', 'origin', 'detail', 'target', 'timers',
  'signed', 'brief', 'delivery', 'dispatched_at', 'delivered_at', 'started_at', 'last_event_at', 'finished_at', 'last_event', 'missing', 'late_events',
  'report', 'why', 'usage', 'verify',
] as const satisfies ReadonlyArray<keyof JobRecord>;

export function publicJob(job: JobRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of JOB_FIELDS) if (job[field] !== undefined) out[field] = job[field];
  // Who waits on it, without the token that lets a process claim it.
  out.owner = job.owner ? { pid: job.owner.pid, host: job.owner.host } : null;
  if (job.remote) out.remote = { runner: job.remote.runner };
  return out;
}

/** Text with its control characters shown (newlines and tabs kept), and each of `secrets` replaced. */
export function visibleText(text: string, secrets: readonly string[] = []): string {
  let shown = printableText(text);
  for (const s of secrets) if (shown.includes(s)) shown = shown.split(s).join('[redacted]');
  return shown;
}

/** Every string in `value`, however deep, made visible as `visibleText` does. */
export function visibleValue(value: unknown, secrets: readonly string[] = []): unknown {
  if (typeof value === 'string') return visibleText(value, secrets);
  if (Array.isArray(value)) return value.map((v) => visibleValue(v, secrets));
  if (value !== null && typeof value === 'object') return visibleRecord(Object.fromEntries(Object.entries(value)), secrets);
  return value;
}

export function visibleRecord(value: Record<string, unknown>, secrets: readonly string[] = []): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visibleValue(v, secrets)]));
}
