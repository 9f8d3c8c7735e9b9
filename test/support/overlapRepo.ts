import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.invalid' };

/** A repository on `main` with `files` committed, and linked worktrees beside it: the overlap tests' and benchmark's ground. */
export class OverlapRepo {
  readonly main: string;

  constructor(private readonly root: string, files: Record<string, string>) {
    this.main = path.join(root, 'main');
    fs.mkdirSync(this.main, { recursive: true });
    this.git(this.main, 'init', '-q', '-b', 'main');
    for (const [file, text] of Object.entries(files)) this.write(this.main, file, text);
    this.git(this.main, 'add', '-A');
    this.git(this.main, 'commit', '-q', '-m', 'initial');
  }

  git(cwd: string, ...args: string[]): string {
    return execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8', maxBuffer: 64 << 20 }).trim();
  }

  write(cwd: string, file: string, text: string): void {
    fs.mkdirSync(path.dirname(path.join(cwd, file)), { recursive: true });
    fs.writeFileSync(path.join(cwd, file), text);
  }

  /** Replaces line `n` (1-based) of `file` in the checkout `cwd`. */
  editLine(cwd: string, file: string, n: number, text: string): void {
    const lines = fs.readFileSync(path.join(cwd, file), 'utf8').split('\n');
    lines[n - 1] = text;
    fs.writeFileSync(path.join(cwd, file), lines.join('\n'));
  }

  /** A new worktree on a new branch `name` from main, beside the main checkout. */
  addWorktree(name: string): string {
    const dir = path.join(this.root, `wt-${name}`);
    this.git(this.main, 'worktree', 'add', '-q', '-b', name, dir, 'main');
    return fs.realpathSync(dir);
  }
}

/** A file of `n` numbered lines. */
export function numberedLines(n: number, label = 'line'): string {
  return Array.from({ length: n }, (_, i) => `${label} ${i + 1}`).join('\n') + '\n';
}
