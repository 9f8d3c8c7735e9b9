import * as fs from 'node:fs';
import * as path from 'node:path';
import { systemClock } from '../base/clock';
import { CorruptStoreError, errorMessage } from '../base/errors';
import { list, lit, obj, parse, str, type Infer } from '../base/schema';
import { readIfExists, writeFileAtomic } from '../store/atomicFile';
import { withLock } from '../store/lock';
import type { ControlPlanePaths } from '../store/paths';

const seenFile = obj({
  version: lit(1),
  seen: list(
    obj({
      job_id: str(),
      nonce: str(),
      seen_at: str(),
      /** After this the dispatch is refused as expired anyway, so the entry can go. */
      expires_at: str(),
    }),
  ),
});
type SeenFile = Infer<typeof seenFile>;
type SeenEntry = SeenFile['seen'][number];

/**
 * The dispatches a runner has taken, `.mam/remote/<runner>/seen.json`, so that a dispatch
 * published again — by an attacker who recorded it, or by a broker redelivering it — never runs
 * twice. A signed dispatch cannot be altered, and one past its expiry is refused on its age, so
 * entries are kept only until then. Written atomically under a lock: two runners of one name
 * (a mistake, but a possible one) still agree on what was taken.
 */
export class SeenDispatches {
  readonly file: string;

  constructor(
    private readonly paths: ControlPlanePaths,
    runner: string,
  ) {
    this.file = path.join(paths.dir, 'remote', runner, 'seen.json');
  }

  /**
   * Records the dispatch as taken and resolves true, or resolves false when its job or its nonce
   * was taken before. An unreadable file throws: refusing every dispatch is safer than forgetting.
   */
  async remember(d: { job_id: string; nonce: string }, expiresAt: number, now = systemClock.now()): Promise<boolean> {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    return withLock(this.paths.lock(`remote-seen-${path.basename(path.dirname(this.file))}`), () => {
      const seen = this.read().filter((e) => Date.parse(e.expires_at) >= now);
      if (seen.some((e) => e.job_id === d.job_id || e.nonce === d.nonce)) return false;
      seen.push({ job_id: d.job_id, nonce: d.nonce, seen_at: new Date(now).toISOString(), expires_at: new Date(expiresAt).toISOString() });
      const data: SeenFile = { version: 1, seen };
      writeFileAtomic(this.file, `${JSON.stringify(data, null, 1)}\n`, { mode: 0o600 });
      return true;
    }, { what: `the seen dispatches of ${this.file}` });
  }

  private read(): SeenEntry[] {
    const bytes = readIfExists(this.file);
    if (bytes === undefined) return [];
    try {
      return parse(seenFile, JSON.parse(bytes.toString('utf8')), undefined, 'the file').seen;
    } catch (err) {
      throw new CorruptStoreError(`${this.file}: ${errorMessage(err)}; every dispatch is refused until it is repaired or removed (removing it lets a recorded dispatch run again until it expires)`);
    }
  }
}
