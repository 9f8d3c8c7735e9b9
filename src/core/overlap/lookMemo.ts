import * as fs from 'node:fs';
import * as path from 'node:path';
import { custom, list, lit, obj, parse, record, reject, str } from '../base/schema';
import { writeFileAtomic } from '../store/atomicFile';
import type { LineRange } from './overlapReport';

/**
 * What a one-look checker (`mam conflicts`, the MCP tool) leaves for the next process's look at
 * the same repository, in its shared git folder (`mam-overlap/memo.json`): merge outcomes by pair
 * of snapshot commits, and line ranges by base, tree and file. Both are functions of their keys
 * alone (a snapshot commit's ID names its tree and HEAD), so a look after one checkout changed
 * asks git only for that checkout's merges and ranges, as a watched checker does; what the memo
 * holds is only what the last look used, so it stays the size of one report. Two processes at once
 * each replace it whole (the last one's stays); a memo that cannot be read is none.
 */
export interface LookMemo {
  /** Conflicted paths by `COMMIT COMMIT` (a merge git could not do is not kept: it is asked again). */
  merges: Record<string, string[]>;
  /** Base-side line ranges by `BASE TREE`, then by file. */
  ranges: Record<string, Record<string, LineRange[]>>;
}

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** Two object IDs, as the memo's keys are. */
const idPair = (k: string): string | undefined => (k.split(' ').length === 2 && k.split(' ').every((id) => OBJECT_ID.test(id)) ? undefined : 'must be two object IDs');
const lineRange = custom<LineRange>((v, at) => {
  const [from, to] = Array.isArray(v) && v.length === 2 ? v : [];
  return typeof from === 'number' && typeof to === 'number' && Number.isInteger(from) && Number.isInteger(to) && from >= 0 && to >= 0 ? [from, to] : reject(at, 'must be two line numbers');
});
const memoSchema = obj({
  v: lit(1),
  merges: record(list(str()), { key: idPair }),
  ranges: record(record(list(lineRange)), { key: idPair }),
});

function memoFile(commonDir: string): string {
  return path.join(commonDir, 'mam-overlap', 'memo.json');
}

/** The memo the last look left, or an empty one. */
export function readLookMemo(commonDir: string): LookMemo {
  try {
    const memo = parse(memoSchema, JSON.parse(fs.readFileSync(memoFile(commonDir), 'utf8')));
    return { merges: memo.merges, ranges: memo.ranges };
  } catch {
    return { merges: {}, ranges: {} };
  }
}

/** Leaves `memo` for the next look (a git folder MAM cannot write to keeps none). */
export function writeLookMemo(commonDir: string, memo: LookMemo): void {
  try {
    fs.mkdirSync(path.dirname(memoFile(commonDir)), { recursive: true });
    writeFileAtomic(memoFile(commonDir), JSON.stringify({ v: 1, ...memo }), { durable: false });
  } catch {
    // the next look asks git again
  }
}
