import { gitExec } from '../base/git';
import { git } from '../loop/snapshot';

/**
 * Fixed names and times make a snapshot commit a function of its tree and parent: the same state
 * looked at twice is one object, not two, and nothing depends on who runs MAM.
 */
const COMMIT_ENV = {
  GIT_AUTHOR_NAME: 'mam', GIT_AUTHOR_EMAIL: 'mam@localhost', GIT_AUTHOR_DATE: '@0 +0000',
  GIT_COMMITTER_NAME: 'mam', GIT_COMMITTER_EMAIL: 'mam@localhost', GIT_COMMITTER_DATE: '@0 +0000',
};

/** `git merge-tree --write-tree`'s exit status when the merge has conflicts (0: clean). */
const MERGE_TREE_CONFLICTS = 1;

/** What merging two snapshot commits would give: the conflicted paths, or why git could not say. */
export type MergeOutcome = { conflicts: string[] } | { error: string };

/**
 * Predicts merges with `git merge-tree --write-tree` (git ≥ 2.38), exactly as git would merge:
 * between snapshot commits — each checkout's tree on top of its HEAD, referenced by nothing —
 * so git finds the merge-base of the two HEADs itself. It writes objects into the repository's
 * store and nothing else: no ref, no index, no file in a checkout changes. Commits and outcomes
 * are remembered, so a look in which one checkout changed merges only that checkout's pairs.
 */
export class MergePredictor {
  private readonly commits = new Map<string, string>();
  private readonly outcomes = new Map<string, MergeOutcome>();

  /** The snapshot commit of `tree` on `head` (made once). */
  async commit(checkout: string, tree: string, head: string): Promise<string> {
    const key = `${tree} ${head}`;
    let commit = this.commits.get(key);
    if (commit === undefined) {
      commit = (await git(checkout, ['commit-tree', tree, '-p', head, '-m', 'mam overlap snapshot'], COMMIT_ENV)).trim();
      this.commits.set(key, commit);
    }
    return commit;
  }

  /** The outcome of each pair of commits, all merged by one `git merge-tree --stdin` run in `checkout`. */
  async predict(checkout: string, pairs: ReadonlyArray<readonly [string, string]>): Promise<MergeOutcome[]> {
    const key = ([x, y]: readonly [string, string]): string => `${x} ${y}`;
    const todo = [...new Map(pairs.filter((p) => !this.outcomes.has(key(p))).map((p) => [key(p), p])).values()];
    if (todo.length > 0) {
      const results = await this.mergeAll(checkout, todo).catch(() => undefined);
      for (const [i, p] of todo.entries()) this.outcomes.set(key(p), results?.[i] ?? (await this.mergeOne(checkout, p)));
    }
    return pairs.map((p) => this.outcomes.get(key(p))!);
  }

  /** The outcome known for a pair of commits, if any. */
  known(pair: readonly [string, string]): MergeOutcome | undefined {
    return this.outcomes.get(`${pair[0]} ${pair[1]}`);
  }

  /** Records an outcome found without merging (mergeCarry.ts): `predict` then answers it as if merged. */
  carry(pair: readonly [string, string], outcome: MergeOutcome): void {
    this.outcomes.set(`${pair[0]} ${pair[1]}`, outcome);
  }

  /** Forgets what no current pair uses. */
  retain(commits: ReadonlySet<string>): void {
    for (const [k, c] of this.commits) if (!commits.has(c)) this.commits.delete(k);
    for (const k of this.outcomes.keys()) if (!k.split(' ').every((c) => commits.has(c))) this.outcomes.delete(k);
  }

  /**
   * One process for every merge. With `-z --name-only --no-messages`, each merge answers
   * `STATUS\0TREE\0PATH\0…\0\0`, STATUS 1 when clean and 0 when it conflicts. One failing merge
   * (histories with nothing in common) fails the whole run: then each pair is merged alone.
   */
  private async mergeAll(checkout: string, pairs: ReadonlyArray<readonly [string, string]>): Promise<MergeOutcome[]> {
    const input = pairs.map(([x, y]) => `${x} ${y}\n`).join('');
    const r = await gitExec(checkout, ['merge-tree', '--stdin', '--write-tree', '--name-only', '--no-messages', '-z'], { input });
    if (r.exitCode !== 0) throw new Error(r.stderr);
    const fields = r.stdout.split('\0');
    const outcomes: MergeOutcome[] = [];
    let i = 0;
    for (let n = 0; n < pairs.length; n++) {
      const status = fields[i++];
      i++; // the merged tree
      const paths: string[] = [];
      while (i < fields.length && fields[i] !== '') paths.push(fields[i++]!);
      i++; // the empty field that ends this merge
      if (status !== '0' && status !== '1') throw new Error(`unexpected merge-tree output (status '${status}')`);
      outcomes.push({ conflicts: status === '1' ? [] : [...new Set(paths)] });
    }
    return outcomes;
  }

  /** Exit 0: clean; 1: conflicts, named after the tree; anything else: git could not merge them. */
  private async mergeOne(checkout: string, [x, y]: readonly [string, string]): Promise<MergeOutcome> {
    const r = await gitExec(checkout, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', x, y]);
    if (r.exitCode === 0) return { conflicts: [] };
    if (r.exitCode === MERGE_TREE_CONFLICTS) return { conflicts: [...new Set(r.stdout.split('\0').slice(1).filter((f) => f !== ''))] };
    return { error: (r.stderr || r.stdout).trim().split('\n')[0] ?? `git merge-tree exited ${r.exitCode}` };
  }
}
