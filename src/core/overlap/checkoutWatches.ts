import type { Clock } from '../base/clock';
import type { Disposable } from '../base/disposable';
import { Emitter, type Event } from '../base/emitter';
import type { CheckoutLocation } from './checkouts';
import { RepositoryWatch } from './repositoryWatch';
import { TreeWatch, type TreeMoves } from './treeWatch';
import { onWatchFlood } from './watchFlood';

export interface CheckoutWatchOptions {
  clock: Clock;
  /** A checkout with more folders (not counting ignored ones) is read on every look instead (default 5,000). */
  maxFolders?: number;
  /** A look this long after the last full one reads everything again (default 5 minutes). */
  fullEveryMs?: number;
}

/**
 * The overlap checker's watches: one TreeWatch per checkout compared, one RepositoryWatch per
 * repository, so that a look asks git only about what moved since the last one. What a watch
 * cannot see falls back to reading everything:
 * - a burst of events that may have overflowed the kernel's queue (watchFlood.ts): every checkout
 *   is read and walked again, every repository's HEADs listed again;
 * - every `fullEveryMs`, a full look (for a change no event tells: a file written through a hard
 *   link from outside the checkout, or through a memory map; ignore rules from the user's own git
 *   config; a watcher of other code in this process that filled the queue alone);
 * - a checkout or repository that cannot be watched (treeWatch.ts) is read on every look.
 */
export class CheckoutWatches implements Disposable {
  private readonly moved = new Emitter<void>();
  /** Something watched moved: a look now would read it. Fires once until the next look takes it. */
  readonly onDidMove: Event<void> = this.moved.event;
  private readonly trees = new Map<string, { watch: TreeWatch; location: CheckoutLocation }>();
  private readonly repositories = new Map<string, RepositoryWatch>();
  private readonly maxFolders: number;
  private readonly fullEveryMs: number;
  private lastFull = Number.NEGATIVE_INFINITY;
  private readonly stopFlood: () => void;

  constructor(private readonly options: CheckoutWatchOptions) {
    this.maxFolders = options.maxFolders ?? 5_000;
    this.fullEveryMs = options.fullEveryMs ?? 5 * 60_000;
    this.stopFlood = onWatchFlood(() => this.markAll());
  }

  /** At the start of each look: a full one when the last was `fullEveryMs` ago. */
  beginLook(): void {
    const now = this.options.clock.now();
    if (now - this.lastFull < this.fullEveryMs) return;
    this.lastFull = now;
    for (const r of this.repositories.values()) r.retry();
    for (const { watch } of this.trees.values()) watch.retry();
  }

  /** Whether the repository's HEADs may have moved since the last call (then they are listed again). */
  headsMoved(commonDir: string): boolean {
    return this.repository(commonDir).takeHeads();
  }

  /**
   * Whether the checkout must be read: something in it moved since the last call (and where, when
   * known), or it is not watched. Call it right before git reads the checkout: a change from then
   * on is the next look's.
   */
  async checkoutMoved(location: CheckoutLocation): Promise<TreeMoves> {
    const repository = this.repository(location.commonDir);
    let entry = this.trees.get(location.toplevel);
    if (entry === undefined) {
      const watch = new TreeWatch(location, () => this.moved.fire(), this.maxFolders);
      entry = { watch, location };
      this.trees.set(location.toplevel, entry);
      repository.addCheckout(location.gitDir, () => watch.mark(false));
    }
    const moves = await entry.watch.take();
    return repository.unwatched !== undefined ? { moved: true } : moves;
  }

  /** After reading the checkout failed: read it again next time. */
  markCheckout(toplevel: string): void {
    this.trees.get(toplevel)?.watch.mark(false);
  }

  /** Why a checkout is read on every look, if it is. */
  unwatched(location: CheckoutLocation): string | undefined {
    return this.repositories.get(location.commonDir)?.unwatched ?? this.trees.get(location.toplevel)?.watch.unwatched;
  }

  /** Closes the watches of checkouts not in `live` (and of repositories left without one). */
  retain(live: ReadonlySet<string>): void {
    for (const [top, { watch, location }] of this.trees) {
      if (live.has(top)) continue;
      watch.dispose();
      this.trees.delete(top);
      this.repositories.get(location.commonDir)?.removeCheckout(location.gitDir);
    }
    for (const [commonDir, r] of this.repositories) {
      if (r.size > 0) continue;
      r.dispose();
      this.repositories.delete(commonDir);
    }
  }

  dispose(): void {
    this.stopFlood();
    this.retain(new Set());
    this.moved.dispose();
  }

  private repository(commonDir: string): RepositoryWatch {
    let r = this.repositories.get(commonDir);
    if (r === undefined) {
      const created = new RepositoryWatch(commonDir, () => this.moved.fire(), () => this.markRepository(commonDir));
      this.repositories.set(commonDir, created);
      r = created;
    }
    return r;
  }

  private markRepository(commonDir: string): void {
    for (const { watch, location } of this.trees.values()) if (location.commonDir === commonDir) watch.mark(true);
  }

  private markAll(): void {
    for (const r of this.repositories.values()) r.markHeads(true);
    for (const { watch } of this.trees.values()) watch.mark(true);
  }
}
