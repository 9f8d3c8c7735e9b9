import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../core/base/errors';
import type { Core } from '../core/core';
import { planStatusRecord } from '../core/plan/planStatus';
import { publicJob } from './records';

/**
 * What a client may read without calling a tool: job records and logs, the reports agents handed
 * in (reviews among them), loops and plans, each at a `mam://` URI. Everything is read from
 * `.mam/` as it is now; nothing is started, so an untrusted workspace reads them too.
 */
export interface ResourceTemplate {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}

export const RESOURCE_TEMPLATES: readonly ResourceTemplate[] = [
  { uriTemplate: 'mam://job/{id}', name: 'job', title: 'Job record', description: "A job's record (as job_status gives it).", mimeType: 'application/json' },
  { uriTemplate: 'mam://job/{id}/log', name: 'job-log', title: 'Job log', description: "A job's audit log: every accepted event and state transition.", mimeType: 'application/json' },
  { uriTemplate: 'mam://report/{id}', name: 'report', title: 'Job report', description: 'The report a job handed in (a reviewer\'s review, a planner\'s plan), as its agent wrote it.', mimeType: 'text/markdown' },
  { uriTemplate: 'mam://loop/{id}', name: 'loop', title: 'Review loop', description: "A review loop's rounds, verdicts and steps (as loop_status gives it).", mimeType: 'application/json' },
  { uriTemplate: 'mam://plan/{id}', name: 'plan', title: 'Plan status', description: "A plan's tasks (as plan_status gives it).", mimeType: 'application/json' },
];

export interface ResourceEntry {
  uri: string;
  name: string;
  title: string;
  mimeType: string;
}

/** The newest jobs, their reports, the loops and the plans, as concrete resources. */
export function listResources(core: Core, limit = 50): ResourceEntry[] {
  const jobs = core.controlPlane.jobs.list().jobs.slice(0, limit);
  return [
    ...jobs.map((j) => ({ uri: `mam://job/${j.id}`, name: `job ${j.id}`, title: `${j.id} ${j.state}: ${j.title ?? ''}`.trim(), mimeType: 'application/json' })),
    ...jobs.filter((j) => j.report).map((j) => ({ uri: `mam://report/${j.id}`, name: `report ${j.id}`, title: `Report of ${j.id} (${j.session})`, mimeType: 'text/markdown' })),
    ...core.loops.list().slice(0, limit).map((l) => ({ uri: `mam://loop/${l.id}`, name: `loop ${l.id}`, title: `Loop ${l.id} ${l.status}`, mimeType: 'application/json' })),
    ...core.plans.listing().plans.slice(0, limit).map((p) => ({ uri: `mam://plan/${p.id}`, name: `plan ${p.id}`, title: `Plan ${p.id} ${p.status}: ${p.title}`, mimeType: 'application/json' })),
  ];
}

const URI = /^mam:\/\/(job|report|loop|plan)\/([^/]+)(\/log)?$/;

/** The resource at `uri`: its text and type; an unknown or malformed URI is a UsageError naming it. */
export function readResource(core: Core, uri: string): { mimeType: string; text: string } {
  const m = URI.exec(uri);
  if (!m || (m[3] && m[1] !== 'job')) throw new UsageError(`no such resource: ${uri} (see resources/templates/list)`);
  const [, kind, id] = m;
  const cp = core.controlPlane;
  const json = (value: unknown) => ({ mimeType: 'application/json', text: `${JSON.stringify(value, null, 2)}\n` });
  switch (kind) {
    case 'job': {
      const job = cp.jobs.require(id!);
      return m[3] ? json(cp.audit.readEntries(job.id).entries) : json(publicJob(job));
    }
    case 'report': {
      const job = cp.jobs.require(id!);
      if (!job.report) throw new UsageError(`job ${job.id} has handed in no report`);
      // Reports are kept in the job's audit folder (jobLedger.ts); a record naming anything else is not read.
      const dir = cp.paths.auditJobDir(job.id);
      const file = path.resolve(dir, job.report);
      if (path.relative(dir, file).startsWith('..') || path.isAbsolute(path.relative(dir, file))) throw new UsageError(`job ${job.id}: its report is not in its audit folder`);
      return { mimeType: 'text/markdown', text: fs.readFileSync(file, 'utf8') };
    }
    case 'loop': {
      const loop = core.loops.loops.get(id!);
      if (!loop) throw new UsageError(`unknown loop '${id}'`);
      return json(loop);
    }
    default:
      return json(planStatusRecord(core.plans.plans.require(id!), core.loops.loops));
  }
}
