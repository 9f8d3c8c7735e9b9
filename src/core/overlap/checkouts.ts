import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitExec } from '../base/git';
import { printable } from '../base/ids';
import type { SessionRow } from '../store/sessionSchema';
import { parseWorktreeList } from '../worktree/git';
import { discoverCheckout } from './gitDiscovery';
import type { SkippedSession } from './overlapReport';

/** Where a checkout's git data is: found once per folder, then reused while it lasts. */
export interface CheckoutLocation {
  /** The top folder, as a real path: two sessions in one checkout share it. */
  toplevel: string;
  /** This checkout's own git folder (`.git`, or `.git/worktrees/NAME` for a linked worktree): its index is there. */
  gitDir: string;
  /** The repository's shared git folder: checkouts with the same one are worktrees of one repository. */
  commonDir: string;
}

/** The checkouts running sessions work in, grouped by repository. */
export interface LocatedSessions {
  /** Common dir → top folder → the sessions there. */
  repositories: Map<string, Map<string, { location: CheckoutLocation; sessions: string[] }>>;
  skipped: SkippedSession[];
}

/** The statuses of a session whose agent may be editing its folder now. */
const LIVE = new Set<SessionRow['status']>(['running', 'starting']);

/**
 * Finds each live session's checkout as git would (gitDiscovery.ts), with one `git rev-parse` per
 * folder where git's answer could differ, remembered (a folder does not move between repositories;
 * a remembered one whose git folder is gone is looked up again).
 * Folders outside git are left out without a word: many sessions are not in a repository.
 */
export class CheckoutLocator {
  private readonly known = new Map<string, CheckoutLocation>();

  async locate(rows: readonly SessionRow[]): Promise<LocatedSessions> {
    const repositories: LocatedSessions['repositories'] = new Map();
    const skipped: SkippedSession[] = [];
    const live = rows.filter((r) => LIVE.has(r.status));
    const byCwd = new Map<string, string[]>();
    for (const r of live) byCwd.set(r.cwd, [...(byCwd.get(r.cwd) ?? []), r.name]);
    await Promise.all([...byCwd].map(async ([cwd, names]) => {
      const found = await this.find(cwd);
      if (found === undefined) return;
      if (typeof found === 'string') {
        for (const session of names) skipped.push({ session, why: found });
        return;
      }
      const checkouts = repositories.get(found.commonDir) ?? new Map();
      repositories.set(found.commonDir, checkouts);
      const entry = checkouts.get(found.toplevel) ?? { location: found, sessions: [] };
      entry.sessions.push(...names);
      checkouts.set(found.toplevel, entry);
    }));
    for (const checkouts of repositories.values()) for (const c of checkouts.values()) c.sessions.sort();
    skipped.sort((x, y) => x.session.localeCompare(y.session));
    return { repositories, skipped };
  }

  /** The location, a reason to skip the folder, or undefined when it is not in a git work tree. */
  private async find(cwd: string): Promise<CheckoutLocation | string | undefined> {
    const cached = this.known.get(cwd);
    if (cached && fs.existsSync(path.join(cached.gitDir, 'HEAD')) && fs.existsSync(cached.toplevel)) return cached;
    this.known.delete(cwd);
    if (!fs.existsSync(cwd)) return `its folder ${printable(cwd)} is gone`;
    const found = discoverCheckout(cwd);
    if (found !== 'ask-git') {
      if (found) this.known.set(cwd, found);
      return found;
    }
    const r = await gitExec(cwd, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--absolute-git-dir', '--git-common-dir']).catch(() => undefined);
    if (!r || r.exitCode !== 0) return undefined;
    const [top, gitDir, commonDir, ...more] = r.stdout.split('\n').filter((l) => l !== '');
    if (top === undefined || gitDir === undefined || commonDir === undefined || more.length > 0 || ![top, gitDir, commonDir].every((l) => path.isAbsolute(l))) return undefined;
    const location = { toplevel: realpath(top), gitDir: realpath(gitDir), commonDir: realpath(commonDir) };
    this.known.set(cwd, location);
    return location;
  }
}

/** HEAD and branch of every checkout of a repository, and its main line: one `git worktree list`. */
export interface RepositoryHeads {
  /** Top folder (real path) → its HEAD commit (absent: no commits yet) and branch. */
  checkouts: Map<string, { head?: string; branch: string | null }>;
  /** The commit the repository's main line is at: the primary worktree's HEAD (in a bare repository, HEAD). */
  mainline?: string;
}

export async function repositoryHeads(anyCheckout: string, commonDir: string): Promise<RepositoryHeads> {
  const r = await gitExec(anyCheckout, ['worktree', 'list', '--porcelain']);
  if (r.exitCode !== 0) throw new Error(`git worktree list failed in ${printable(anyCheckout)}: ${r.stderr.trim().split('\n')[0]}`);
  const entries = parseWorktreeList(r.stdout);
  const checkouts: RepositoryHeads['checkouts'] = new Map();
  for (const e of entries) {
    if (e.bare) continue;
    checkouts.set(realpath(e.path), { ...(e.head && !/^0+$/.test(e.head) ? { head: e.head } : {}), branch: e.branch ? e.branch.replace(/^refs\/heads\//, '') : null });
  }
  const primary = entries[0];
  let mainline = primary && !primary.bare ? primary.head : undefined;
  if (mainline === undefined || /^0+$/.test(mainline)) {
    const h = await gitExec(commonDir, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']).catch(() => undefined);
    mainline = h?.exitCode === 0 ? h.stdout.trim() : undefined;
  }
  return { checkouts, ...(mainline ? { mainline } : {}) };
}

function realpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}
