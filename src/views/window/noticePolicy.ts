import type { JobRecord } from '../../core/store/jobSchema';

/**
 * Whether the Notifier tells the failure of `job` itself, decided from where the job came from
 * (jobSchema.ts `origin`), never from what this window remembers doing:
 *
 * - a job this window's Delegate Job gave a session (a person's command, `by` this window): no,
 *   that command's progress notification follows it and asks for its outcome;
 * - a task assigned to a person, from this window or elsewhere: yes, no progress follows it;
 * - a person's command elsewhere (the CLI, another window), a remote submitter's job: yes;
 * - a review loop's, the merge queue's, an onboarding's or a parent job's: no, the loop, the
 *   queue, the onboarding's caller or the parent tells how it went;
 * - a record from before jobs kept their origin: yes, unless it belongs to a loop or a parent
 *   (`partOfAnother`, asked only then).
 *
 * `windowBy` is this window's `by` (`vscode:<session id>`). Plain data: no vscode, unit-tested.
 */
export function notifierTellsEnd(job: Pick<JobRecord, 'origin' | 'target'>, windowBy: string, partOfAnother: () => boolean): boolean {
  const origin = job.origin;
  if (!origin) return !partOfAnother();
  switch (origin.kind) {
    case 'person':
      return origin.by !== windowBy || job.target?.kind === 'human';
    case 'remote':
      return true;
    case 'loop':
    case 'merge':
    case 'onboarding':
    case 'parent':
      return false;
  }
}
