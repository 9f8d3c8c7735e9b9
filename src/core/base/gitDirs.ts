import * as fs from 'node:fs';
import * as path from 'node:path';

/** A checkout's top folder, its own git folder and the repository's shared one (real paths). */
export interface GitDirs {
  toplevel: string;
  gitDir: string;
  commonDir: string;
}

/**
 * Where `cwd`'s git folders are, found as git finds them (setup.c): up from the folder, the first
 * `.git` that is a git folder, or a file `gitdir: PATH` naming one; its `commondir` names the
 * repository's shared folder. Without starting git, for the plain layouts: a checkout with `.git`
 * folder, a linked worktree, a submodule's `.git` file. What git reads its configuration from
 * follows: the shared folder's `config` (and the worktree's `config.worktree` when the repository
 * says so).
 *
 * 'ask-git' wherever git's own answer could differ: GIT_CEILING_DIRECTORIES set, a filesystem
 * boundary on the way up, a folder that is itself a git folder (a bare repository, or inside
 * `.git`), a `.git` file whose folder is not a git folder, a checkout or git folder not owned by
 * this user (git's safe.directory check). undefined: no `.git` up to the root (git says the same:
 * not a repository). A repository config that moves the work tree is overlap/gitDiscovery.ts's to
 * check: it changes the top folder, not the git folders.
 */
export function findGitDirs(cwd: string, env: NodeJS.ProcessEnv = process.env): GitDirs | 'ask-git' | undefined {
  if (env.GIT_CEILING_DIRECTORIES) return 'ask-git';
  let dir: string;
  try {
    dir = fs.realpathSync(cwd);
  } catch {
    return 'ask-git';
  }
  const device = fs.statSync(dir).dev;
  for (;;) {
    const dotGit = path.join(dir, '.git');
    const st = fs.lstatSync(dotGit, { throwIfNoEntry: false });
    if (st?.isDirectory() && isGitFolder(dotGit)) return located(dir, dotGit);
    if (st?.isFile()) {
      const gitDir = gitFile(dotGit);
      return gitDir !== undefined && isGitFolder(gitDir) ? located(dir, gitDir) : 'ask-git';
    }
    if (isGitFolder(dir)) return 'ask-git';
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    if (fs.statSync(parent).dev !== device) return 'ask-git';
    dir = parent;
  }
}

function located(top: string, gitDirPath: string): GitDirs | 'ask-git' {
  let gitDir: string;
  try {
    gitDir = fs.realpathSync(gitDirPath);
  } catch {
    return 'ask-git';
  }
  const common = readText(path.join(gitDir, 'commondir'))?.trim();
  let commonDir = gitDir;
  try {
    if (common) commonDir = fs.realpathSync(path.resolve(gitDir, common));
  } catch {
    return 'ask-git';
  }
  // git refuses a repository another user owns (safe.directory): let it say so.
  const uid = process.getuid?.();
  if (uid !== undefined && [top, gitDirPath, gitDir].some((p) => fs.statSync(p).uid !== uid)) return 'ask-git';
  return { toplevel: top, gitDir, commonDir };
}

/**
 * The folder a `.git` file names, as git reads it (read_gitfile): `gitdir: ` first, then the path to
 * the end, line ends taken off (relative to the file's folder); undefined when it does not read so.
 */
function gitFile(file: string): string | undefined {
  const m = /^gitdir: ([^]+?)[\r\n]*$/.exec(readText(file) ?? '');
  return m ? path.resolve(path.dirname(file), m[1]!) : undefined;
}

/** Whether `dir` is a git folder as git checks it: a HEAD, and objects/ and refs/ (in the common folder of a linked worktree). */
function isGitFolder(dir: string): boolean {
  const head = readText(path.join(dir, 'HEAD'));
  if (head === undefined || !/^(ref: refs\/|[0-9a-f]{40}|[0-9a-f]{64})/.test(head)) return false;
  const common = readText(path.join(dir, 'commondir'))?.trim();
  const shared = common ? path.resolve(dir, common) : dir;
  return isFolder(path.join(shared, 'objects')) && isFolder(path.join(shared, 'refs'));
}

function isFolder(p: string): boolean {
  return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

export function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
