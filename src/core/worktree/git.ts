import { ExitCode, MamError } from '../base/errors';
import type { ExecResult } from '../base/exec';
import { gitExec } from '../base/git';

/** git exited non-zero where that is not an answer but a failure. Exit 1 with git's own reason. */
export class GitCommandError extends MamError {
  constructor(message: string) {
    super(message, 'git_failed', ExitCode.failed);
  }
}

/** Runs git (inert: see base/git.ts) with argument arrays only, in the folder given, never through a shell. */
export class Git {
  /** `env` is merged over the process environment, e.g. `GIT_CONFIG_*` settings from a test. */
  constructor(private readonly env: Record<string, string | undefined> = {}) {}

  /** Resolves whatever git's exit code is; the caller decides what a non-zero exit means. */
  run(cwd: string, args: readonly string[]): Promise<ExecResult> {
    return gitExec(cwd, args, { env: this.env });
  }

  /** Resolves with stdout, or throws a GitCommandError saying `doing` and git's reason. */
  async ok(cwd: string, args: readonly string[], doing: string): Promise<string> {
    const r = await this.run(cwd, args);
    if (r.exitCode !== 0) throw new GitCommandError(`${doing} failed: ${gitReason(r)}`);
    return r.stdout;
  }
}

/** The line of git's output that says why it failed (its `fatal:`/`error:` line), without the prefix. */
export function gitReason(r: Pick<ExecResult, 'stdout' | 'stderr' | 'exitCode'>): string {
  const lines = `${r.stderr}\n${r.stdout}`.split('\n').map((l) => l.trim()).filter(Boolean);
  const line = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[lines.length - 1];
  return line ? line.replace(/^(fatal|error):\s*/, '') : `git exited with status ${r.exitCode}`;
}

/** One record of `git worktree list --porcelain`. */
export interface WorktreeEntry {
  path: string;
  head?: string;
  /** Full ref name, e.g. `refs/heads/mam/42`; absent when detached. */
  branch?: string;
  bare: boolean;
  /** The lock reason ('' when locked without one); absent when not locked. */
  locked?: string;
}

export function parseWorktreeList(porcelain: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | undefined;
  for (const line of porcelain.split('\n')) {
    const space = line.indexOf(' ');
    const key = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? '' : line.slice(space + 1);
    if (key === 'worktree') {
      current = { path: value, bare: false };
      entries.push(current);
    } else if (current) {
      if (key === 'HEAD') current.head = value;
      else if (key === 'branch') current.branch = value;
      else if (key === 'bare') current.bare = true;
      else if (key === 'locked') current.locked = value;
    }
  }
  return entries;
}

/** Entries of `git status --porcelain -z`: a rename or copy carries its source as a second field. */
export function countStatusEntries(porcelainZ: string): number {
  const fields = porcelainZ.split('\0');
  let count = 0;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.length < 4) continue;
    count++;
    if (/[RC]/.test(f.slice(0, 2))) i++;
  }
  return count;
}
