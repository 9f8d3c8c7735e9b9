import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../base/errors';

export interface FoundWorkspace {
  /** The workspace root: the folder that holds (or will hold) `.mam/`. */
  root: string;
  /** How it was found, for `mam doctor` and error messages. */
  how: 'flag' | 'env' | 'control-plane' | 'git-root';
}

export interface FindWorkspaceInput {
  /** `--workspace DIR`, if given. */
  flag?: string;
  /** The environment (MAM_WORKSPACE). */
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * Finds the control plane the way git finds a repository: `--workspace DIR`, then `MAM_WORKSPACE`,
 * then the nearest folder at or above the current one that holds `.mam/`, or else the nearest git
 * root (a folder with `.git`, a directory or a worktree's file).
 */
export function findWorkspace(input: FindWorkspaceInput): FoundWorkspace {
  if (input.flag !== undefined) return { root: existingDir(input.flag, input.cwd, '--workspace'), how: 'flag' };
  const fromEnv = input.env.MAM_WORKSPACE;
  if (fromEnv !== undefined && fromEnv !== '') return { root: existingDir(fromEnv, input.cwd, 'MAM_WORKSPACE'), how: 'env' };

  let gitRoot: string | undefined;
  for (let dir = path.resolve(input.cwd); ; dir = path.dirname(dir)) {
    if (isDir(path.join(dir, '.mam'))) return { root: dir, how: 'control-plane' };
    if (gitRoot === undefined && fs.existsSync(path.join(dir, '.git'))) gitRoot = dir;
    if (path.dirname(dir) === dir) break;
  }
  if (gitRoot !== undefined) return { root: gitRoot, how: 'git-root' };
  throw new UsageError(
    `no workspace found at or above ${input.cwd} (no .mam/ folder and no git repository); run inside a project, or pass --workspace DIR`,
    'no_workspace',
  );
}

function existingDir(dir: string, cwd: string, source: string): string {
  const resolved = path.resolve(cwd, dir);
  if (!isDir(resolved)) throw new UsageError(`${source}: ${resolved} is not a directory`, 'bad_workspace');
  return fs.realpathSync(resolved);
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
