import { execFile } from 'node:child_process';
import { notStarted, type ExecResult } from './exec';

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
  const env = { ...BASE_ENV, ...options.env };
  const trusted = await trustedOverrides(cwd, env);
  return run(trusted, args, { cwd, env, timeoutMs: options.timeoutMs ?? 120_000, input: options.input });
}

/**
 * exec() for git, on node's own execFile: the same result and errors, at 2–3 ms of this process's
 * CPU per call instead of execa's 7 (measured, docs/benchmarks.md: a look of the overlap checker
 * runs dozens of gits). Resolves whatever the exit code; rejects when git cannot start, is killed
 * (a timeout) or writes more than 100 MB.
 */
function run(overrides: readonly string[], args: readonly string[], options: { cwd: string; env: Record<string, string | undefined>; timeoutMs: number; input?: string | undefined }): Promise<ExecResult> {
  const { cwd, timeoutMs: timeout } = options;
  return new Promise((resolve, reject) => {
    const child = execFile('git', [...overrides, ...args], { cwd, env: { ...process.env, ...options.env }, timeout, maxBuffer: 100 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err) return resolve({ exitCode: 0, stdout, stderr });
      if (typeof err.code === 'number') return resolve({ exitCode: err.code, stdout, stderr });
      if (err.code === 'ENOENT') return reject(notStarted('git', cwd));
      if (err.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return reject(new Error(`git ${args[0]} wrote more than 100 MB`));
      reject(err.signal ? new Error(`git ${args[0]} was stopped by ${err.signal}${err.killed ? ` after ${timeout} ms` : ''}`) : err);
    });
    child.stdin?.on('error', () => undefined); // git may exit before reading all of `input`
    child.stdin?.end(options.input);
  });
}

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
 * Repository filters and helpers found recently, by folder: a snapshot runs several gits in a row.
 * The lookup itself is kept while it runs, so gits started at once in one folder share it.
 */
const cache = new Map<string, { at: number; args: Promise<string[]> }>();
const CACHE_MS = 2_000;

/** The `-c` arguments for `cwd`: the fixed ones, then the neutralized repository-defined programs. */
function trustedOverrides(cwd: string, env: Record<string, string | undefined>): Promise<string[]> {
  const now = Date.now();
  const cached = cache.get(cwd);
  if (cached && now - cached.at < CACHE_MS) return cached.args;
  const args = lookUpOverrides(cwd, env);
  cache.set(cwd, { at: now, args });
  return args;
}

/** `git config --get-regexp`'s exit status when no entry matches. */
const GIT_CONFIG_NOTHING_FOUND = 1;

async function lookUpOverrides(cwd: string, env: Record<string, string | undefined>): Promise<string[]> {
  const fixed = FIXED_OVERRIDES.flatMap((o) => ['-c', o]);
  // `git config` reads config files and runs nothing. Scopes tell the repository's own entries
  // (local, worktree) from the user's (global, system).
  const r = await run(fixed, ['config', '--show-scope', '--includes', '--get-regexp', '^(filter\\..*\\.(clean|smudge|process)|merge\\..*\\.driver|credential\\.helper)$'], { cwd, env, timeoutMs: 30_000 }).catch(() => undefined);
  // Exit 1 is "no such entries". Anything else: the repository's programs are unknown, so no git runs
  // there (failing open would run a merge driver the repository defines).
  if (!r || (r.exitCode !== 0 && r.exitCode !== GIT_CONFIG_NOTHING_FOUND)) throw new Error(`cannot read the git configuration of ${cwd} to disarm what it would run`);
  const drivers = new Set<string>();
  const mergeDrivers = new Set<string>();
  const helpers: string[] = [];
  for (const line of r?.exitCode === 0 ? r.stdout.split('\n') : []) {
    const m = /^(\S+)\t(\S+)(?: (.*))?$/.exec(line);
    if (!m) continue;
    const [, scope, key, value] = m;
    if (key === 'credential.helper') {
      if ((scope === 'global' || scope === 'system') && value) helpers.push(value);
    } else if (scope !== 'local' && scope !== 'worktree') {
      continue;
    } else if (key!.startsWith('merge.')) {
      mergeDrivers.add(key!);
    } else {
      drivers.add(key!.replace(/\.(clean|smudge|process)$/, ''));
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
  return args;
}
