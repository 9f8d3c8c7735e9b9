import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { notStarted, ProgramNotFoundError, type ExecResult } from './exec';
import { findGitDirs } from './gitDirs';
import { isExecutable, whichProgram } from './process';

/**
 * Every git MAM runs goes through here, so that a repository's own configuration cannot make it
 * start a program: a checkout is data, and its `.git/config` is written by whoever made it (a
 * cloned stranger's repository, an agent). Without this, `git status` in a repository whose
 * `.git/config` names a `core.fsmonitor` runs that program.
 *
 * What a repository's config could otherwise run, and what stops it:
 * - `core.fsmonitor`, hooks (`core.hooksPath`), `core.pager`, `core.askPass`, `core.sshCommand`,
 *   `credential.helper`, commit and tag signing (`gpg.program`): overridden below for every command
 *   (`-c` beats every config file, and git hands it on to the gits it starts, e.g. for submodules);
 *   credential helpers of the user's own global and system config are kept.
 * - `ext::` transport URLs: `protocol.ext.allow=never`.
 * - clean/smudge/process filters a repository defines for itself (and points `.gitattributes` at):
 *   emptied, one by one; filters from the user's own config (git-lfs) keep working.
 * - merge drivers a repository defines for itself (`merge.<name>.driver`, which `git merge-tree`
 *   and a rebase run for a file whose attributes name it): emptied, so that merge fails instead.
 * - external diff drivers and textconv: callers of `diff` pass `--no-ext-diff --no-textconv`.
 * - submodule update commands (`submodule.<name>.update = !cmd`): callers pass `--checkout`.
 */
export async function gitExec(cwd: string, args: readonly string[], options: { env?: Record<string, string | undefined>; timeoutMs?: number; input?: string } = {}): Promise<ExecResult> {
  // The whole environment, once: the flags are keyed by it, and git gets it.
  const env = { ...process.env, ...BASE_ENV, ...options.env };
  const trusted = await trustedOverrides(cwd, env);
  return run(trusted, args, { cwd, env, timeoutMs: options.timeoutMs ?? 120_000, input: options.input });
}

/**
 * `git ARGS…` and then, if it succeeded, `git write-tree` — the tree of the index the first one
 * wrote (GIT_INDEX_FILE in `options.env`) — in one `sh` that starts both: each process this one
 * starts is a fork of it, which on these machines costs ~5 ms of CPU more than a fork of a small
 * shell (docs/benchmarks.md, "Overlap check"), and a snapshot is always the two. The shell's script
 * is this constant; the flags and the arguments reach git as arguments ("$@"), never as script
 * text. Resolves with the first git's output and then write-tree's (its last line), or with the
 * first failure's exit status and stderr.
 */
export async function gitThenWriteTree(cwd: string, args: readonly string[], options: { env?: Record<string, string | undefined>; timeoutMs?: number } = {}): Promise<ExecResult> {
  const env = { ...process.env, ...BASE_ENV, ...options.env };
  const trusted = await trustedOverrides(cwd, env);
  return withGit(env, cwd, (git) => spawnResult(SHELL, ['-c', THEN_WRITE_TREE, 'mam', git, String(args.length), ...trusted, ...args], { cwd, env, timeoutMs: options.timeoutMs ?? 120_000 }, args[0]!));
}

const SHELL = '/bin/sh';

/**
 * $1 is git, $2 how many of the arguments after the flags are the first git's: run the flags and
 * those, then copy the flags alone to the end of the list, drop the rest, and run write-tree. The
 * first git runs in the background and is waited for, so that the shell, stopped (a timeout
 * sends it SIGTERM) or interrupted, stops it too rather than leave it running on its own; the
 * second replaces the shell, so a signal reaches it directly.
 */
const THEN_WRITE_TREE = [
  'git=$1 m=$2',
  'shift 2',
  'trap \'kill "$first" 2>/dev/null; exit 143\' TERM INT HUP',
  '"$git" "$@" &',
  'first=$!',
  'wait "$first" || exit',
  'n=$(($# - m)) i=0',
  'for a do',
  '  if [ "$i" -lt "$n" ]; then set -- "$@" "$a"; fi',
  '  i=$((i + 1))',
  'done',
  'shift $((n + m))',
  'exec "$git" "$@" write-tree',
].join('\n');

/**
 * exec() for git, on node's own execFile: the same result and errors, at 2–3 ms of this process's
 * CPU per call instead of execa's 7 (measured, docs/benchmarks.md: a look of the overlap checker
 * runs dozens of gits). Resolves whatever the exit code; rejects when git cannot start, is killed
 * (a timeout) or writes more than 100 MB.
 */
function run(overrides: readonly string[], args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; input?: string | undefined }): Promise<ExecResult> {
  return withGit(options.env, options.cwd, (git) => spawnResult(git, [...overrides, ...args], options, args[0]!));
}

/** What `sh` exits with when it cannot find or start a command. */
const SHELL_NOT_FOUND = 127;

/**
 * `start` with git's file; when that file is not there any more (git moved: an upgrade, a PATH
 * folder gone) and so git never started, git is looked up again and started once more.
 */
async function withGit(env: NodeJS.ProcessEnv, cwd: string, start: (git: string) => Promise<ExecResult>): Promise<ExecResult> {
  for (let again = false; ; again = true) {
    const git = gitProgram(env);
    if (git === undefined) throw notStarted('git', cwd);
    try {
      const r = await start(git);
      if (again || r.exitCode !== SHELL_NOT_FOUND || isExecutable(git)) return r;
    } catch (err) {
      if (again || !(err instanceof ProgramNotFoundError) || isExecutable(git)) throw err;
    }
    gitFiles.forEach((file, searchPath) => file === git && gitFiles.delete(searchPath));
  }
}

function spawnResult(file: string, argv: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; input?: string | undefined }, command: string): Promise<ExecResult> {
  const { cwd, env, timeoutMs: timeout } = options;
  return new Promise((resolve, reject) => {
    // (node leaves out a variable whose value is undefined: BASE_ENV's.)
    const child = execFile(file, argv, { cwd, env, timeout, maxBuffer: 100 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err) return resolve({ exitCode: 0, stdout, stderr });
      // Stopped by its timeout (a snapshot's shell exits 143 once it stopped its git: no signal then).
      if (err.killed) return reject(new Error(`git ${command} was stopped by ${err.signal ?? 'SIGTERM'} after ${timeout} ms`));
      if (typeof err.code === 'number') return resolve({ exitCode: err.code, stdout, stderr });
      if (err.code === 'ENOENT') return reject(notStarted(file === SHELL ? SHELL : 'git', cwd));
      if (err.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return reject(new Error(`git ${command} wrote more than 100 MB`));
      reject(err.signal ? new Error(`git ${command} was stopped by ${err.signal}`) : err);
    });
    child.stdin?.on('error', () => undefined); // git may exit before reading all of `input`
    child.stdin?.end(options.input);
  });
}

/**
 * git's own file, looked up once per PATH, as exec would but in absolute folders only (a relative
 * entry such as `.` would find a repository's own `git`): each git started then skips the failed
 * execs of the folders before git's (~0.2 ms a git here). Undefined when PATH has no git (not
 * remembered: it may be installed later); looked up again when it cannot be started any more
 * (withGit). A git installed later in an earlier folder is used from the next process on.
 */
function gitProgram(env: NodeJS.ProcessEnv): string | undefined {
  const searchPath = env.PATH ?? '';
  const known = gitFiles.get(searchPath);
  if (known !== undefined) return known;
  const found = whichProgram('git', searchPath.split(path.delimiter).filter((dir) => path.isAbsolute(dir)).join(path.delimiter));
  if (found !== undefined) gitFiles.set(searchPath, found);
  return found;
}

const gitFiles = new Map<string, string>();

/**
 * Variables that would point our git commands at another repository, index or work tree (set, for
 * instance, when `mam` runs from inside a git hook), or run a program of the environment's choosing
 * for a diff; we always mean the folder we pass.
 */
const BASE_ENV: Record<string, string | undefined> = {
  GIT_DIR: undefined,
  GIT_WORK_TREE: undefined,
  GIT_INDEX_FILE: undefined,
  GIT_COMMON_DIR: undefined,
  GIT_OBJECT_DIRECTORY: undefined,
  GIT_NAMESPACE: undefined,
  GIT_PREFIX: undefined,
  GIT_EXTERNAL_DIFF: undefined,
  // A credential prompt would wait forever on a stdin nobody types into: fail instead.
  GIT_TERMINAL_PROMPT: '0',
  // Our reads must not take index.lock in a checkout an agent may be committing in.
  GIT_OPTIONAL_LOCKS: '0',
  GIT_PAGER: 'cat',
};

const FIXED_OVERRIDES = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.pager=cat',
  'core.askPass=',
  'core.sshCommand=ssh',
  'protocol.ext.allow=never',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
];

/**
 * The flags looked up recently, each kept 2 s (a snapshot runs several gits in a row, a look of the
 * overlap checker several snapshots): under its folder, and under the repository's shared git
 * folder, where the other worktrees of the repository use it instead of a lookup of their own when
 * every worktree provably reads the same configuration (`sameForEveryWorktree`). A lookup is kept
 * while it runs, so gits started at once share it. Both are also keyed by the environment git would
 * read its configuration from (HOME, GIT_CONFIG_*, …): all of it but what differs per call and
 * reads no configuration (GIT_INDEX_FILE, GIT_AUTHOR_*, GIT_COMMITTER_*).
 */
const byFolder = new Map<string, { at: number; args: Promise<string[]> }>();
const byRepository = new Map<string, { at: number; lookup: Promise<Lookup> }>();
const CACHE_MS = 2_000;

/** The `-c` arguments for `cwd` and the whole environment `env`: the fixed ones, then the neutralized repository-defined programs. */
function trustedOverrides(cwd: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const now = Date.now();
  const reads = configEnvironment(env);
  const key = `${cwd}\0${reads}`;
  const cached = byFolder.get(key);
  if (cached && now - cached.at < CACHE_MS) return cached.args;
  forgetOlderThan(now - CACHE_MS);
  const common = sharedGitDir(cwd, env);
  const repoKey = common === undefined ? undefined : `${common}\0${reads}`;
  const shared = repoKey === undefined ? undefined : byRepository.get(repoKey);
  if (shared && now - shared.at < CACHE_MS) {
    // Another worktree's flags, when they hold for every worktree; else (or when that lookup
    // failed) this folder's own. Aged from that lookup, so a config changed since is read as soon.
    const args = shared.lookup
      .then((l) => (l.sameForEveryWorktree ? l.args : undefined), () => undefined)
      .then((args) => args ?? lookUpOverrides(cwd, env).then((l) => l.args));
    byFolder.set(key, { at: shared.at, args });
    return args;
  }
  const lookup = lookUpOverrides(cwd, env);
  const args = lookup.then((l) => l.args);
  byFolder.set(key, { at: now, args });
  if (repoKey !== undefined) byRepository.set(repoKey, { at: now, lookup });
  return args;
}

function forgetOlderThan(then: number): void {
  for (const cache of [byFolder, byRepository]) for (const [k, v] of cache) if (v.at <= then) cache.delete(k);
}

/** Variables set per call that change no configuration git reads. */
const PER_CALL = /^(GIT_(INDEX_FILE|AUTHOR_\w+|COMMITTER_\w+)|LC_ALL)$/;

/** The environment as a key (in its own order: a variable set anew may reorder it, and then a lookup is only not shared). */
function configEnvironment(env: NodeJS.ProcessEnv): string {
  let key = '';
  for (const k in env) if (env[k] !== undefined && !PER_CALL.test(k)) key += `${k}=${env[k]}\0`;
  return key;
}

/**
 * The repository's shared git folder, found without git (gitDirs.ts), when git's own answer cannot
 * differ; else undefined (then each folder looks up its own flags).
 */
function sharedGitDir(cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  if (env.GIT_DIR !== undefined || env.GIT_COMMON_DIR !== undefined) return undefined;
  try {
    const found = findGitDirs(cwd, env);
    return typeof found === 'object' ? found.commonDir : undefined;
  } catch {
    return undefined;
  }
}

/** `git config --get-regexp`'s exit status when no entry matches. */
const GIT_CONFIG_NOTHING_FOUND = 1;

/**
 * What the lookup asks for: the programs a repository could name, the user's credential helpers,
 * and what makes worktrees of one repository read different configuration — a conditional include
 * (`includeIf.<condition>.path`: `gitdir:` and `onbranch:` differ per worktree) or a worktree's own
 * config file (`extensions.worktreeConfig`). Keys as git prints them: section and name lowercased.
 */
const LOOKED_UP = '^(filter\\..*\\.(clean|smudge|process)|merge\\..*\\.driver|credential\\.helper|includeif\\..*|extensions\\.worktreeconfig)$';

interface Lookup {
  args: string[];
  /**
   * No conditional include and no worktree config anywhere: every worktree of the repository reads
   * the same files (system, global, the shared `config` and what it includes), so gets these flags.
   */
  sameForEveryWorktree: boolean;
}

async function lookUpOverrides(cwd: string, env: NodeJS.ProcessEnv): Promise<Lookup> {
  const fixed = FIXED_OVERRIDES.flatMap((o) => ['-c', o]);
  // `git config` reads config files and runs nothing. Scopes tell the repository's own entries
  // (local, worktree) from the user's (global, system). NUL-separated: a value holding a line break
  // cannot pass for another entry (a repository's value posing as a global credential helper).
  const r = await run(fixed, ['config', '-z', '--show-scope', '--includes', '--get-regexp', LOOKED_UP], { cwd, env, timeoutMs: 30_000 }).catch(() => undefined);
  // Exit 1 is "no such entries". Anything else: the repository's programs are unknown, so no git runs
  // there (failing open would run a merge driver the repository defines).
  if (!r || (r.exitCode !== 0 && r.exitCode !== GIT_CONFIG_NOTHING_FOUND)) throw new Error(`cannot read the git configuration of ${cwd} to disarm what it would run`);
  const drivers = new Set<string>();
  const mergeDrivers = new Set<string>();
  const helpers: string[] = [];
  let sameForEveryWorktree = true;
  // `-z --show-scope`: per entry `SCOPE\0KEY\0`, or `SCOPE\0KEY\nVALUE\0`.
  const fields = r.exitCode === 0 ? r.stdout.split('\0') : [''];
  if (fields.pop() !== '' || fields.length % 2 !== 0) throw new Error(`cannot read the git configuration of ${cwd}: unexpected output`);
  for (let i = 0; i < fields.length; i += 2) {
    const scope = fields[i]!;
    const entry = fields[i + 1]!;
    const cut = entry.indexOf('\n');
    const key = cut < 0 ? entry : entry.slice(0, cut);
    const value = cut < 0 ? undefined : entry.slice(cut + 1);
    if (key.startsWith('includeif.') || key === 'extensions.worktreeconfig') {
      sameForEveryWorktree = false;
    } else if (key === 'credential.helper') {
      if ((scope === 'global' || scope === 'system') && value) helpers.push(value);
    } else if (scope !== 'local' && scope !== 'worktree') {
      continue;
    } else if (key.startsWith('merge.')) {
      mergeDrivers.add(key);
    } else {
      drivers.add(key.replace(/\.(clean|smudge|process)$/, ''));
    }
  }
  const args = [
    ...fixed,
    // An empty value resets the list; then only the user's own helpers come back.
    '-c', 'credential.helper=',
    ...helpers.flatMap((h) => ['-c', `credential.helper=${h}`]),
    ...[...drivers].flatMap((d) => ['-c', `${d}.clean=`, '-c', `${d}.smudge=`, '-c', `${d}.process=`, '-c', `${d}.required=false`]),
    // An emptied merge driver makes git fail that merge instead of running anything.
    ...[...mergeDrivers].flatMap((d) => ['-c', `${d}=`]),
  ];
  return { args, sameForEveryWorktree };
}
