import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isoOn, systemClock, type Clock } from '../base/clock';
import { errorMessage, ValidationError } from '../base/errors';
import { printable } from '../base/ids';
import { bool, custom, list, lit, nullable, obj, oneOf, optional, parse, refine, reject, str, type Schema } from '../base/schema';
import { readJsonFile, writeFileAtomic } from '../store/atomicFile';
import { withLock } from '../store/lock';
import type { ControlPlanePaths } from '../store/paths';

/**
 * The merge queue on disk (`.mam/merge/queue.json`): the entries in the order they were enqueued,
 * each with where its landing stands. The file is the single truth: the runner writes it before
 * and after every step, so a runner killed midway resumes from it.
 *
 *   queued → running (step: rebasing → validating → reviewing → landing) → landed
 *                    ↘ waiting (a job for the creator, a dirty target checkout, busy reviewers) → running …
 */
export const ENTRY_STATES = ['queued', 'running', 'waiting', 'landed'] as const;
export type EntryState = (typeof ENTRY_STATES)[number];

export const STEPS = ['rebasing', 'validating', 'reviewing', 'landing'] as const;
export type Step = (typeof STEPS)[number];

/** What the reviewers passed: the loop, and its passing round's identity. */
export interface ReviewedTree {
  loop: string;
  base: string;
  head: string;
  tree: string;
}

/** One try at landing an entry: from which target and branch tips, to which result. */
export interface Attempt {
  /** The target's tip the rebase started from (the compare-and-swap's old value). */
  target: string;
  /** The branch's tip that was rebased. */
  tip: string;
  /** The rebased commit, and its tree, once the rebase succeeded. */
  result: string | null;
  result_tree: string | null;
  validated: boolean;
  /** The review loop run on the result's tree, when it differs from the reviewed tree. */
  review_loop: string | null;
  reviewed: boolean;
}

export interface MergeEntry {
  id: string;
  branch: string;
  /** The worktree the branch was checked out in when enqueued, or null. */
  worktree: string | null;
  into: string;
  /** The validation command as argv (never run through a shell), or null for none. */
  validate: string[] | null;
  creator: string;
  reviewers: string[];
  reviewed: ReviewedTree;
  state: EntryState;
  step: Step | null;
  /** Why it waits (or what happened last), one line. */
  reason: string | null;
  /** The creator's job the entry waits on. */
  job_id: string | null;
  /** That job's task, kept until the job is submitted (a runner killed between the two submits it then). */
  job_prompt?: string | null;
  attempt: Attempt | null;
  landed_commit: string | null;
  created_at: string;
  updated_at: string;
  landed_at: string | null;
}

export interface MergeQueueFile {
  version: 1;
  entries: MergeEntry[];
}

/** What a reader (the VS Code view, `mam merge status`) gets: the entries, or what is wrong with the file. */
export interface MergeQueueReading {
  entries: MergeEntry[];
  /** Set when the file could not be read or is not a queue: names the file and the problem. */
  problem: string | null;
}

export const ENTRY_ID_PATTERN = /^m-\d{8}T\d{6}Z-[0-9a-f]{6}$/;

export function newEntryId(now: Date): string {
  return `m-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
}

/** The queue of one workspace: reads validate, writes are atomic and made under the queue's lock. */
export class MergeQueueStore {
  constructor(
    readonly paths: ControlPlanePaths,
    private readonly clock: Clock = systemClock,
  ) {}

  get file(): string {
    return this.paths.mergeQueueFile;
  }

  /** The entries in queue order; a corrupt file throws a ValidationError naming it and the field. */
  read(): MergeEntry[] {
    return readJsonFile(this.file, (raw) => validateQueue(raw, this.file).entries) ?? [];
  }

  /** Never throws: for views that must show something whatever the file holds. */
  reading(): MergeQueueReading {
    try {
      return { entries: this.read(), problem: null };
    } catch (err) {
      return { entries: [], problem: errorMessage(err) };
    }
  }

  get(id: string): MergeEntry | undefined {
    return this.read().find((e) => e.id === id);
  }

  /** Reads, changes and writes the queue under its lock; `change` may throw to change nothing. */
  async update<T>(change: (entries: MergeEntry[]) => T): Promise<T> {
    this.paths.ensureDir();
    fs.mkdirSync(this.paths.mergeDir, { recursive: true });
    return withLock(this.paths.lock('merge-queue'), () => {
      const entries = this.read();
      const out = change(entries);
      writeFileAtomic(this.file, `${JSON.stringify({ version: 1, entries } satisfies MergeQueueFile, null, 2)}\n`);
      return out;
    }, { what: 'the merge queue' });
  }

  /** Changes one entry (stamped with the time); resolves with it as written, or undefined when it was removed meanwhile. */
  async patch(id: string, fields: Partial<MergeEntry>): Promise<MergeEntry | undefined> {
    return this.update((entries) => {
      const entry = entries.find((e) => e.id === id);
      if (!entry) return undefined;
      Object.assign(entry, fields, { updated_at: this.now() });
      return { ...entry };
    });
  }

  now(): string {
    return isoOn(this.clock);
  }
}

const text = str();
const textOrNull = nullable(text);
const strings = list(text, { why: 'must be a list of strings' });

const entrySchema: Schema<MergeEntry> = obj({
  id: refine(text, (id) => (ENTRY_ID_PATTERN.test(id) ? undefined : `is not an entry ID (got '${printable(id, 40)}')`)),
  branch: text,
  worktree: textOrNull,
  into: text,
  validate: refine(nullable(strings, { why: 'must be a list of strings' }), (argv) => (argv?.length === 0 ? 'must name a program (or be null)' : undefined)),
  creator: text,
  reviewers: strings,
  reviewed: obj({ loop: text, base: text, head: text, tree: text }),
  state: oneOf(ENTRY_STATES, `must be one of ${ENTRY_STATES.join(', ')}`),
  step: nullable(oneOf(STEPS), { why: `must be null or one of ${STEPS.join(', ')}` }),
  reason: textOrNull,
  job_id: textOrNull,
  job_prompt: optional(textOrNull),
  attempt: nullable(
    obj({ target: text, tip: text, result: textOrNull, result_tree: textOrNull, validated: bool(), review_loop: textOrNull, reviewed: bool() }),
    { why: 'must be an object or null' },
  ),
  landed_commit: textOrNull,
  created_at: text,
  updated_at: text,
  landed_at: textOrNull,
});

const queueSchema: Schema<MergeQueueFile> = obj(
  {
    version: lit(1),
    entries: custom((v, at) => {
      const entries = list(entrySchema).read(v, at);
      entries.forEach((e, i) => entries.findIndex((f) => f.id === e.id) < i && reject(`${at}[${i}].id`, 'appears twice'));
      return entries;
    }),
  },
  { why: 'must hold an object' },
);

/** The queue as read from disk, checked field by field before anything trusts it. */
export function validateQueue(raw: unknown, where = 'merge queue'): MergeQueueFile {
  return parse(queueSchema, raw, (problem) => new ValidationError(`${where}: ${problem}; fix or remove the file`), 'the file');
}
