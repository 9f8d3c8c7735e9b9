import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../base/clock';
import { errorMessage, ValidationError } from '../base/errors';
import { printable } from '../base/ids';
import { readIfExists, writeFileAtomic } from '../store/atomicFile';
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
    const bytes = readIfExists(this.file);
    if (!bytes) return [];
    let raw: unknown;
    try {
      raw = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      throw new ValidationError(`${this.file}: not JSON (${errorMessage(err)}); fix or remove the file`);
    }
    return validateQueue(raw, this.file).entries;
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
    return new Date(this.clock.now()).toISOString();
  }
}

/** The queue as read from disk, checked field by field before anything trusts it. */
export function validateQueue(raw: unknown, where = 'merge queue'): MergeQueueFile {
  const fail = (field: string, why: string): never => {
    throw new ValidationError(`${where}: ${field} ${why}; fix or remove the file`);
  };
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const str = (o: Record<string, unknown>, f: string, at: string): void => void (typeof o[f] === 'string' || fail(`${at}${f}`, 'must be a string'));
  const strOrNull = (o: Record<string, unknown>, f: string, at: string): void => void (typeof o[f] === 'string' || o[f] === null || fail(`${at}${f}`, 'must be a string or null'));
  const strings = (v: unknown, at: string): void => void ((Array.isArray(v) && v.every((x) => typeof x === 'string')) || fail(at, 'must be a list of strings'));
  if (!isObject(raw)) fail('the file', 'must hold an object');
  const file = raw as Record<string, unknown>;
  if (file.version !== 1) fail('version', 'must be 1');
  if (!Array.isArray(file.entries)) fail('entries', 'must be a list');
  const ids = new Set<string>();
  (file.entries as unknown[]).forEach((e, i) => {
    const at = `entries[${i}].`;
    if (!isObject(e)) fail(`entries[${i}]`, 'must be an object');
    const entry = e as Record<string, unknown>;
    str(entry, 'id', at);
    if (!ENTRY_ID_PATTERN.test(entry.id as string)) fail(`${at}id`, `is not an entry ID (got '${printable(String(entry.id), 40)}')`);
    if (ids.has(entry.id as string)) fail(`${at}id`, 'appears twice');
    ids.add(entry.id as string);
    for (const f of ['branch', 'into', 'creator', 'created_at', 'updated_at']) str(entry, f, at);
    for (const f of ['worktree', 'reason', 'job_id', 'landed_commit', 'landed_at']) strOrNull(entry, f, at);
    if (entry.job_prompt !== undefined) strOrNull(entry, 'job_prompt', at);
    if (entry.validate !== null) strings(entry.validate, `${at}validate`);
    if (Array.isArray(entry.validate) && entry.validate.length === 0) fail(`${at}validate`, 'must name a program (or be null)');
    strings(entry.reviewers, `${at}reviewers`);
    if (!ENTRY_STATES.includes(entry.state as EntryState)) fail(`${at}state`, `must be one of ${ENTRY_STATES.join(', ')}`);
    if (entry.step !== null && !STEPS.includes(entry.step as Step)) fail(`${at}step`, `must be null or one of ${STEPS.join(', ')}`);
    if (!isObject(entry.reviewed)) fail(`${at}reviewed`, 'must be an object');
    for (const f of ['loop', 'base', 'head', 'tree']) str(entry.reviewed as Record<string, unknown>, f, `${at}reviewed.`);
    if (entry.attempt !== null) {
      if (!isObject(entry.attempt)) fail(`${at}attempt`, 'must be an object or null');
      const a = entry.attempt as Record<string, unknown>;
      for (const f of ['target', 'tip']) str(a, f, `${at}attempt.`);
      for (const f of ['result', 'result_tree', 'review_loop']) strOrNull(a, f, `${at}attempt.`);
      for (const f of ['validated', 'reviewed']) if (typeof a[f] !== 'boolean') fail(`${at}attempt.${f}`, 'must be true or false');
    }
  });
  return raw as unknown as MergeQueueFile;
}
