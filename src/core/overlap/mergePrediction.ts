import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gitExec } from '../base/git';

/**
 * A snapshot commit's text: fixed names and times make it a function of its tree and parent (the
 * same state looked at twice is one object, not two, and nothing depends on who runs MAM), and so
 * its ID is known without git: the hash of `commit <size>\0<text>`, SHA-1 or SHA-256 as the
 * repository's IDs are.
 */
function commitText(tree: string, parent: string): string {
  return `tree ${tree}\nparent ${parent}\nauthor mam <mam@localhost> 0 +0000\ncommitter mam <mam@localhost> 0 +0000\n\nmam overlap snapshot\n`;
}

function objectId(text: string, tree: string): string {
  const body = Buffer.from(text, 'utf8');
  return createHash(tree.length === 64 ? 'sha256' : 'sha1').update(`commit ${body.length}\0`).update(body).digest('hex');
}

/** `git merge-tree --write-tree`'s exit status when the merge has conflicts (0: clean). */
const MERGE_TREE_CONFLICTS = 1;

/** What merging two snapshot commits would give: the conflicted paths, or why git could not say. */
export type MergeOutcome = { conflicts: string[] } | { error: string };

/**
 * Predicts merges with `git merge-tree --write-tree` (git ≥ 2.38), exactly as git would merge:
 * between snapshot commits — each checkout's tree on top of its HEAD, referenced by nothing —
 * so git finds the merge-base of the two HEADs itself. It writes objects into the repository's
 * store and nothing else: no ref, no index, no file in a checkout changes. A snapshot commit's ID
 * is computed here, and the commit written (one `git hash-object` for all) only when a merge needs
 * it: a look whose merges are all known or carried writes none. Commits and outcomes are
 * remembered, so a look in which one checkout changed merges only that checkout's pairs.
 */
export class MergePredictor {
  /** Snapshot commits by ID: their text, until written into the repository's store. */
  private readonly commits = new Map<string, { text: string; written: boolean }>();
  private readonly outcomes = new Map<string, MergeOutcome>();
  /** How many merges git was asked for, all told. */
  asked = 0;

  /** The ID of the snapshot commit of `tree` on `head` (written when a merge needs it). */
  commit(tree: string, head: string): string {
    const text = commitText(tree, head);
    const id = objectId(text, tree);
    if (!this.commits.has(id)) this.commits.set(id, { text, written: false });
    return id;
  }

  /** The outcome of each pair of commits, all merged by one `git merge-tree --stdin` run in `checkout`. */
  async predict(checkout: string, pairs: ReadonlyArray<readonly [string, string]>): Promise<MergeOutcome[]> {
    const key = ([x, y]: readonly [string, string]): string => `${x} ${y}`;
    const todo = [...new Map(pairs.filter((p) => !this.outcomes.has(key(p))).map((p) => [key(p), p])).values()];
    const failed = new Map<string, MergeOutcome>();
    this.asked += todo.length;
    if (todo.length > 0) {
      try {
        await this.written;
        await this.write(checkout, todo.flat());
        const results = await this.mergeAll(checkout, todo).catch(() => undefined);
        for (const [i, p] of todo.entries()) this.outcomes.set(key(p), results?.[i] ?? (await this.mergeOne(checkout, p)));
      } catch (err) {
        // Not remembered: the next look asks again.
        for (const p of todo) failed.set(key(p), { error: err instanceof Error ? err.message : String(err) });
      }
    }
    return pairs.map((p) => this.outcomes.get(key(p)) ?? failed.get(key(p))!);
  }

  /** A write started ahead of the merges (`prewrite`). */
  private written: Promise<unknown> = Promise.resolve();

  /**
   * Starts writing the commits `ids` now, beside other work, for merges about to be asked (a
   * look that read checkouts afresh: their merges cannot be carried). `predict` waits for it.
   */
  prewrite(checkout: string, ids: readonly string[]): void {
    this.written = Promise.all([this.written, this.write(checkout, ids).catch(() => undefined)]);
  }

  /**
   * Writes the commits among `ids` not written yet: one `git hash-object -t commit -w --stdin-paths`
   * (it reads each from a file; --no-filters: a commit is never a file's content to clean). git's
   * ID for each must be the one computed here.
   */
  private async write(checkout: string, ids: readonly string[]): Promise<void> {
    const pending = [...new Set(ids)].filter((id) => this.commits.get(id)?.written === false);
    if (pending.length === 0) return;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mam-commits-'));
    try {
      const files = pending.map((id, i) => {
        const file = path.join(dir, String(i));
        fs.writeFileSync(file, this.commits.get(id)!.text);
        return file;
      });
      const r = await gitExec(checkout, ['hash-object', '-t', 'commit', '-w', '--no-filters', '--stdin-paths'], { input: `${files.join('\n')}\n` });
      if (r.exitCode !== 0) throw new Error(`git hash-object failed: ${r.stderr.trim().split('\n')[0]}`);
      const written = r.stdout.split('\n').filter((l) => l !== '');
      if (written.join(' ') !== pending.join(' ')) throw new Error(`git wrote snapshot commits ${written.join(' ')}, expected ${pending.join(' ')}`);
      for (const id of pending) this.commits.get(id)!.written = true;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
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
    for (const id of this.commits.keys()) if (!commits.has(id)) this.commits.delete(id);
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
