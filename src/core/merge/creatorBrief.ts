import { stripVTControlCharacters } from 'node:util';
import { printableLines } from '../base/ids';
import type { MergeEntry } from './mergeQueue';

/** Why a landing failed, as the creator's job tells it. */
export type LandingFailure =
  | { kind: 'conflict'; files: string[]; output: string }
  | { kind: 'validation'; command: string; exitCode: number | null; output: string }
  | { kind: 'review'; loop: string; findings: Array<{ reviewer: string; verdict: string; text: string }> };

/** At most this much of git's, the validation's or a reviewer's output goes into a brief: its end. */
export const OUTPUT_TAIL_CHARS = 4000;
const OUTPUT_TAIL_LINES = 80;

/** The end of some output: at most 80 lines and 4,000 characters, colours and other control sequences removed. */
export function outputTail(text: string, maxChars = OUTPUT_TAIL_CHARS): string {
  const clean = printableLines(stripVTControlCharacters(text)).trimEnd();
  let tail = clean.split('\n').slice(-OUTPUT_TAIL_LINES).join('\n');
  if (tail.length > maxChars) tail = tail.slice(-maxChars);
  const cut = tail.length < clean.length;
  return `${cut ? '… (earlier output cut; the whole of it is in the entry\'s log)\n' : ''}${tail}`;
}

/** The one-line reason an entry waits on its creator's job. */
export function failureReason(failure: LandingFailure): string {
  switch (failure.kind) {
    case 'conflict':
      return `conflict in ${failure.files.slice(0, 3).join(', ')}${failure.files.length > 3 ? ` and ${failure.files.length - 3} more` : ''}`;
    case 'validation':
      return `validation failed (${failure.exitCode === null ? 'timed out' : `exit ${failure.exitCode}`})`;
    case 'review':
      return `the review of the rebased tree did not pass (loop ${failure.loop})`;
  }
}

/** The task of the job the branch's creator gets when its branch could not land. */
export function creatorTask(entry: MergeEntry, failure: LandingFailure, logFile: string): string {
  const where = entry.worktree ? ` (checked out in ${entry.worktree})` : '';
  const head = `The merge queue could not land branch \`${entry.branch}\`${where} on \`${entry.into}\` (entry ${entry.id}): ${failureReason(failure)}.`;
  const fence = (text: string) => `\`\`\`\n${outputTail(text).replace(/```/g, "'''")}\n\`\`\``;
  let what: string;
  let todo: string;
  switch (failure.kind) {
    case 'conflict':
      what = `Rebasing \`${entry.branch}\` onto the tip of \`${entry.into}\` conflicts in these files:\n\n${failure.files.map((f) => `- \`${printableLines(f)}\``).join('\n')}\n\ngit said:\n\n${fence(failure.output)}`;
      todo = `Rebase \`${entry.branch}\` onto \`${entry.into}\` (or merge \`${entry.into}\` into it), resolve the conflicts, and commit.`;
      break;
    case 'validation':
      what = `The validation command \`${printableLines(failure.command)}\` failed on the rebased branch. The end of its output:\n\n${fence(failure.output)}`;
      todo = `Fix \`${entry.branch}\` so that the validation passes on top of \`${entry.into}\`, and commit.`;
      break;
    case 'review':
      what = `The rebase changed the tree the reviewers passed, so it was reviewed again (loop ${failure.loop}), and not every reviewer passed it:\n\n${failure.findings.map((f) => `#### ${f.reviewer}: ${f.verdict}\n\n${outputTail(f.text)}`).join('\n\n')}`;
      todo = `Address the findings on \`${entry.branch}\` and commit.`;
      break;
  }
  return `${head}\n\n## What failed\n\n${what}\n\n## What to do\n\n${todo} Complete this job when the branch is ready: the next \`mam merge run\` tries the entry again from the branch's new tip. The queue's log of this entry: ${logFile}\n`;
}
