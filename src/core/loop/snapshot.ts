import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gitExec, gitThenWriteTree } from '../base/git';
import { UsageError } from '../base/errors';

/** What one review round reviewed: the base, the commit on top, and the whole working tree. */
export interface SnapshotIdentity {
  base: string;
  head: string;
  /** The tree of the working tree as it stands, uncommitted and untracked (not ignored) files included, `.mam/` and `.mam.env` left out. */
  tree: string;
}

/**
 * The identity of a round that pins no snapshot: a `--type loop` job's reviewer reviews what the
 * worker reported (jobLoop.ts), in a workspace that need not be a git checkout.
 */
export const UNPINNED: Readonly<SnapshotIdentity> = Object.freeze({ base: '', head: '', tree: '' });

export function isPinned(identity: SnapshotIdentity): boolean {
  return identity.tree !== '';
}

export interface ChangedFile {
  /** A, M, D, R… as `git diff --name-status` says. */
  status: string;
  path: string;
  /** For a rename, the path at base. */
  from?: string;
}

/** Runs git in `checkout` (inert: base/git.ts), never through a shell; throws with git's own words on failure. */
export async function git(checkout: string, args: string[], env: Record<string, string | undefined> = {}): Promise<string> {
  const r = await gitExec(checkout, args, { env });
  if (r.exitCode !== 0) throw new Error(`git ${args[0]} failed: ${(r.stderr || r.stdout).trim().split('\n')[0]}`);
  return r.stdout;
}

/** The commit `rev` names in `checkout`; an unknown revision is a usage error naming it. */
export async function resolveCommit(checkout: string, rev: string): Promise<string> {
  if (rev.startsWith('-')) throw new UsageError(`'${rev}' is not a revision`);
  try {
    return (await git(checkout, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`])).trim();
  } catch {
    throw new UsageError(`unknown revision '${rev}' in ${checkout}`);
  }
}

export async function isGitCheckout(dir: string): Promise<boolean> {
  const r = await gitExec(dir, ['rev-parse', '--is-inside-work-tree']).catch(() => undefined);
  return r?.exitCode === 0 && r.stdout.trim() === 'true';
}

/**
 * Pathspecs that keep MAM's own files out of a snapshot: `.mam/` and `.mam.env` at the checkout's
 * root. The leading `[.]` is deliberate. git prunes an excluded folder without reading it (so files
 * MAM creates and deletes there while git runs cannot fail it), but a pathspec that starts with a
 * literal name that is also git-ignored makes `git add` fail with "paths are ignored"; a glob
 * character first avoids that, ignored or not.
 */
export const MAM_OWN_FILES = [':(exclude,glob)[.]mam/**', ':(exclude,glob)[.]mam', ':(exclude,glob)[.]mam[.]env'] as const;

/**
 * The identity of the checkout now. The tree is written through a temporary index
 * (GIT_INDEX_FILE), so the user's index — what they staged — is never touched, and MAM's own
 * files never enter it: they are neither code under review nor stable while a round runs. (If a
 * repository tracks them, the committed version stays as it is.) The tree is kept alive by a ref
 * under refs/mam/ (a snapshot commit), so a later diff can still show it.
 */
export async function snapshotIdentity(checkout: string, base: string, keepAs?: string): Promise<SnapshotIdentity> {
  const head = (await git(checkout, ['rev-parse', 'HEAD'])).trim();
  const tree = await worktreeTree(checkout);
  if (keepAs) {
    const commit = (await git(checkout, ['commit-tree', tree, '-p', head, '-m', `mam snapshot ${keepAs}`], { GIT_AUTHOR_NAME: 'mam', GIT_AUTHOR_EMAIL: 'mam@localhost', GIT_COMMITTER_NAME: 'mam', GIT_COMMITTER_EMAIL: 'mam@localhost' })).trim();
    await git(checkout, ['update-ref', `refs/mam/snapshots/${keepAs}`, commit]);
  }
  return { base, head, tree };
}

/**
 * The tree of the working tree as it stands (see snapshotIdentity), written through a temporary
 * index that starts from HEAD (or from `seedIndex`: see writeFreshTree).
 */
export async function worktreeTree(checkout: string, options: { seedIndex?: string } = {}): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-index-'));
  try {
    return (await writeFreshTree(checkout, path.join(dir, 'index'), options)).tree;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What `git add --all --verbose` says it did to an index: the paths it took in or updated, and
 * those it dropped (gone from the working tree). Undefined when a line does not read as either
 * (a path with a line break in it): then nobody may rely on the lists.
 */
export interface Staged {
  added: string[];
  removed: string[];
}

/**
 * Brings `index` — an index file the caller owns, never the checkout's own, kept from an earlier
 * `writeFreshTree` — to the working tree as it stands (in `folders` only, relative to the top, when
 * nothing moved elsewhere), MAM's own files left out (git rewrites it only when something changed);
 * `git write-tree` with it as GIT_INDEX_FILE then gives the snapshot tree. A folder git matches
 * nothing in (only ignored files) fails the add: then the whole checkout. An index that is not there
 * any more is started from HEAD.
 */
export async function stageWorktree(checkout: string, index: string, folders?: readonly string[]): Promise<Staged | undefined> {
  const env = { GIT_INDEX_FILE: index, LC_ALL: 'C' };
  if (folders?.length) {
    const only = await gitExec(checkout, [...ADD_VERBOSE, '--', ...folders.map((f) => (f === '' ? '.' : `:(literal)${f}`)), ...MAM_OWN_FILES], { env });
    if (only.exitCode === 0) return stagedBy(only.stdout);
  }
  if (!fs.existsSync(index)) await git(checkout, ['read-tree', 'HEAD'], env);
  return stagedBy(await git(checkout, [...ADD_ALL], env));
}

/**
 * The snapshot tree of the working tree as it stands, through `index` (a file the caller owns,
 * written anew): from HEAD, so every changed file is hashed, or from a copy of `seedIndex` (the
 * checkout's own index file, only read), whose stat data lets `git add` hash only the files
 * changed since git last looked — what is staged there then counts, as it would once written to
 * disk anyway. A seed that is missing or that git cannot use falls back to HEAD. The `add` and
 * the `write-tree` run from one process (gitThenWriteTree). With the tree, what the add did to the
 * index it started from.
 */
export async function writeFreshTree(checkout: string, index: string, options: { seedIndex?: string } = {}): Promise<{ tree: string; staged: Staged | undefined }> {
  if (options.seedIndex !== undefined) {
    try {
      // The copy keeps the original's time (no later: read before the copy, to the millisecond
      // below): git trusts an entry's stat data only when the file is older than the index it is
      // in, and a copy made now would make a file written just after the checkout's index look
      // older than its copy — same size, same time, and its new content not read.
      const { mtimeMs, atime } = await fs.promises.stat(options.seedIndex);
      await fs.promises.copyFile(options.seedIndex, index);
      await fs.promises.utimes(index, atime, new Date(Math.floor(mtimeMs)));
      return await addAllThenWriteTree(checkout, index);
    } catch {
      // No index yet (a fresh checkout), or one git cannot read from here (a split index): from HEAD.
    }
  }
  fs.rmSync(index, { force: true });
  await git(checkout, ['read-tree', 'HEAD'], { GIT_INDEX_FILE: index });
  return addAllThenWriteTree(checkout, index);
}

// --verbose: git names what it took in and dropped (untranslated: LC_ALL=C), for stagedBy.
const ADD_VERBOSE = ['add', '--all', '--verbose'] as const;
const ADD_ALL = [...ADD_VERBOSE, '--', '.', ...MAM_OWN_FILES] as const;

async function addAllThenWriteTree(checkout: string, index: string): Promise<{ tree: string; staged: Staged | undefined }> {
  const r = await gitThenWriteTree(checkout, ADD_ALL, { env: { GIT_INDEX_FILE: index, LC_ALL: 'C' } });
  const lines = r.stdout.replace(/\n$/, '').split('\n');
  const tree = lines.pop()!;
  if (r.exitCode !== 0 || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(tree)) throw new Error(`git add or write-tree failed: ${(r.stderr || r.stdout).trim().split('\n')[0]}`);
  return { tree, staged: stagedBy(lines.join('\n')) };
}

function stagedBy(stdout: string): Staged | undefined {
  const staged: Staged = { added: [], removed: [] };
  for (const line of stdout.split('\n')) {
    if (line === '') continue;
    const m = /^(add|remove) '(.*)'$/.exec(line);
    if (!m) return undefined;
    (m[1] === 'add' ? staged.added : staged.removed).push(m[2]!);
  }
  return staged;
}

/** The paths that differ between two trees (what changed under a review). */
export async function pathsChangedBetween(checkout: string, from: string, to: string): Promise<string[]> {
  if (from === to) return [];
  const out = await git(checkout, ['diff', '--no-ext-diff', '--no-textconv', '--name-only', '-z', '--no-renames', from, to]);
  return out.split('\0').filter((f) => f !== '');
}

/** The files that differ between the base and a snapshot's tree. */
export async function changedFiles(checkout: string, identity: SnapshotIdentity): Promise<ChangedFile[]> {
  const out = await git(checkout, ['diff', '--no-ext-diff', '--no-textconv', '--name-status', '-M', '-z', identity.base, identity.tree]);
  const fields = out.split('\0').filter((f) => f !== '');
  const files: ChangedFile[] = [];
  for (let i = 0; i < fields.length; ) {
    const status = fields[i++]!;
    if (status.startsWith('R') || status.startsWith('C')) {
      const from = fields[i++]!;
      files.push({ status: status[0]!, from, path: fields[i++]! });
    } else {
      files.push({ status, path: fields[i++]! });
    }
  }
  return files;
}

/** The snapshot diff a reviewer reads: base..tree, uncommitted files included. */
export async function snapshotDiff(checkout: string, identity: SnapshotIdentity, maxBytes = 200_000): Promise<string> {
  const stat = await git(checkout, ['diff', '--no-ext-diff', '--no-textconv', '--stat', identity.base, identity.tree]);
  const diff = await git(checkout, ['diff', '--no-ext-diff', '--no-textconv', '-M', identity.base, identity.tree]);
  const shown = Buffer.byteLength(diff) > maxBytes ? `${diff.slice(0, maxBytes)}\n… (diff cut at ${maxBytes} bytes; run \`git diff ${identity.base} ${identity.tree}\` for all of it)\n` : diff;
  return `${stat}\n${shown}`;
}

/** A file's content in a commit or tree, or undefined when it does not exist there. */
export async function fileAt(checkout: string, treeish: string, file: string): Promise<string | undefined> {
  const r = await gitExec(checkout, ['show', '--no-textconv', `${treeish}:${file}`], { timeoutMs: 60_000 });
  return r.exitCode === 0 ? r.stdout : undefined;
}
