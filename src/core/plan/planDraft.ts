import * as fs from 'node:fs';
import * as path from 'node:path';
import { ExitCode, MamError, UsageError } from '../base/errors';
import { printable } from '../base/ids';
import { outcomeText } from '../jobs/compositeJobs';
import type { JobEngine } from '../jobs/jobEngine';
import { submitJob } from '../jobs/submit';
import { writeFileAtomic } from '../store/atomicFile';
import { parsePlan, planProblems } from './planFile';
import { planFormat } from './planFormat';

export interface DraftRequest {
  goal: string;
  /** The planner: a session name (or `human:NAME`). */
  planner: string;
  /** Where the valid plan is written (relative to baseDir); refused when it exists. */
  out: string;
  baseDir: string;
}

export interface DraftResult {
  file: string;
  /** The planner jobs asked: one, or two when the first answer had problems. */
  jobs: string[];
  tasks: number;
}

/** The planner's answers were not a valid plan, twice (exit 1): what was wrong with the second. */
export class DraftRefusedError extends MamError {
  constructor(message: string) {
    super(message, 'draft_invalid', ExitCode.failed);
  }
}

/**
 * `mam plan draft`: a planner job whose brief asks for a plan in the plan file's format for the
 * goal; an answer with problems goes back to the planner once, with every problem; the valid plan
 * is written for the user to read, edit and run. Nothing is run from it here.
 */
export async function draftPlan(engine: JobEngine, req: DraftRequest): Promise<DraftResult> {
  if (!req.goal.trim()) throw new UsageError('--goal is empty');
  const file = path.resolve(req.baseDir, req.out);
  if (fs.existsSync(file)) throw new UsageError(`${printable(file, 200)} exists; name another file with --out`);
  if (!fs.existsSync(path.dirname(file))) throw new UsageError(`no folder ${printable(path.dirname(file), 200)} for --out`);
  const jobs: string[] = [];
  let prompt = draftPrompt(req.goal);
  for (let attempt = 1; ; attempt++) {
    const { job } = await submitJob(engine, { session: req.planner, prompt, role: 'planner', wait: true, baseDir: req.baseDir, title: `Draft a plan: ${req.goal.split('\n')[0]!.slice(0, 60)}`, origin: { kind: 'person', by: 'plan-draft' } });
    jobs.push(job.id);
    if (job.state !== 'completed') throw new MamError(`the planner's job ${job.id} ${job.state}${job.reason ? ` (${job.reason})` : ''}; no plan written`, 'draft_failed', ExitCode.failed);
    const yaml = yamlOf(outcomeText(job));
    const problems = planProblems(yaml, path.basename(file));
    if (problems.length === 0) {
      writeFileAtomic(file, yaml.endsWith('\n') ? yaml : `${yaml}\n`);
      return { file, jobs, tasks: parsePlan(yaml, path.basename(file)).tasks.length };
    }
    if (attempt === 2) throw new DraftRefusedError(`the planner's second answer is not a valid plan either (${problems.length} problem${problems.length === 1 ? '' : 's'}; first: ${problems[0]}); no plan written`);
    prompt = revisePrompt(req.goal, yaml, problems);
  }
}

function draftPrompt(goal: string): string {
  return [
    'Draft a plan for this goal, as a MAM plan file (YAML). Do not change any file: only write the plan as your report.',
    '',
    `Goal: ${goal}`,
    '',
    'Split the goal into tasks a creator agent can each finish and have reviewed in one review loop; give `needs` only where a task truly builds on another, so the others run in parallel. Use the agents and sessions of this workspace that you know of; the defaults below are a fair start.',
    '',
    'The format:',
    '',
    planFormat(),
    '',
    'Your report is the plan file itself: YAML only (a ```yaml fence around it is fine), nothing else.',
  ].join('\n');
}

function revisePrompt(goal: string, yaml: string, problems: readonly string[]): string {
  return [
    `Your plan for "${goal.split('\n')[0]}" has these problems:`,
    '',
    ...problems.map((p) => `- ${p}`),
    '',
    'Your plan was:',
    '',
    '```yaml',
    yaml.trimEnd(),
    '```',
    '',
    'Write the corrected plan as your report: YAML only, in the same format.',
  ].join('\n');
}

/** The plan out of an answer: the first ```yaml (or plain ```) fence when there is one, else the whole text. */
export function yamlOf(answer: string): string {
  const fence = /```(?:ya?ml)?[ \t]*\n([\s\S]*?)\n```/i.exec(answer);
  return (fence ? fence[1]! : answer).trim() + '\n';
}
