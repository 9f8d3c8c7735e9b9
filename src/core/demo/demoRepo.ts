import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../base/errors';
import { gitExec } from '../base/git';
import { INITIAL_FILES } from './demoProject';

/** The identity of the demo repository's first commit: the demo must work where git has no user configured. */
const DEMO_GIT_ENV = {
  GIT_AUTHOR_NAME: 'MAM demo', GIT_AUTHOR_EMAIL: 'demo@localhost',
  GIT_COMMITTER_NAME: 'MAM demo', GIT_COMMITTER_EMAIL: 'demo@localhost', GIT_TERMINAL_PROMPT: '0',
};

/** git with none of the user's commit signing or hooks, which a throwaway repository has no use for. */
export async function demoGit(repo: string, args: readonly string[]): Promise<string> {
  const r = await gitExec(repo, args, { env: DEMO_GIT_ENV, timeoutMs: 60_000 });
  if (r.exitCode !== 0) throw new Error(`git ${args[0]} in ${repo} failed: ${(r.stderr || r.stdout).trim().split('\n')[0]}`);
  return r.stdout;
}

/**
 * Creates the demo project (demoProject.ts) as a new git repository with one commit, in a folder
 * that does not exist yet or is empty; resolves with the commit. Its real path is what the
 * sessions and the loop use (agents and git report physical paths).
 */
export async function createDemoRepo(repoDir: string): Promise<{ dir: string; commit: string }> {
  if (fs.existsSync(repoDir) && fs.readdirSync(repoDir).length > 0) throw new UsageError(`${repoDir} exists and is not empty; the demo creates its repository in a new folder`);
  fs.mkdirSync(repoDir, { recursive: true });
  const dir = fs.realpathSync(repoDir);
  for (const [file, text] of Object.entries(INITIAL_FILES)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  await demoGit(dir, ['init', '-q', '-b', 'main']);
  await demoGit(dir, ['add', '-A']);
  await demoGit(dir, ['commit', '-q', '-m', 'signup-demo: register users by email']);
  return { dir, commit: (await demoGit(dir, ['rev-parse', 'HEAD'])).trim() };
}

export interface DemoCommit {
  sha: string;
  author: string;
  subject: string;
}

/** The repository's commits, newest first. */
export async function demoCommits(repo: string): Promise<DemoCommit[]> {
  const out = await demoGit(repo, ['log', '--format=%h%x1f%an%x1f%s']);
  return out.split('\n').filter(Boolean).map((line) => {
    const [sha, author, subject] = line.split('\x1f');
    return { sha: sha!, author: author!, subject: subject! };
  });
}
