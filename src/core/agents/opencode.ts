import * as path from 'node:path';
import type { AgentAdapter, StoreContext, StoredConversation } from './adapter';
import { openSnapshot } from './sqliteSnapshot';
import { newestFirst } from './store';

/**
 * opencode. Verified against 1.18.33, driven by the tests (docs/agent-clis.md): no way to choose
 * the ID, so it is learned at the first delivery, from its store: one SQLite database in WAL mode
 * (table `session`: id, directory, parent_id, time_created in epoch ms), read as a snapshot with
 * its write-ahead log laid over it — its recent rows are only there — without asking opencode
 * (`opencode session list` takes a second or more per call). `--session <id>` continues.
 */
export const opencode: AgentAdapter = {
  name: 'opencode',
  program: ['opencode'],
  defaultArgs: ['--auto'],
  // Left alone it upgrades itself in the background.
  environment: () => ({ OPENCODE_DISABLE_AUTOUPDATE: '1' }),
  // Its input box's placeholder (a new session) and footer (any). It has no first-run screens.
  readySign: /Ask anything|ctrl\+p commands/,
  exitSteps: [{ keys: ['C-c'] }],
  spawnArgv: (program, args) => [...program, ...args],
  resumeArgv: (program, args, id) => [...program, ...args, '--session', id],
  async listConversations(ctx, cwd) {
    const db = await openSnapshot(opencodeDatabase(ctx));
    if (!db) return [];
    try {
      // A session with a parent is a subagent's (its task tool), not a conversation of its own.
      const rows = db.exec('SELECT id, time_created FROM session WHERE directory = ? AND parent_id IS NULL', [cwd])[0]?.values ?? [];
      const found: StoredConversation[] = rows.map(([id, created]) => ({ id: String(id), cwd, createdAt: new Date(Number(created)) }));
      return newestFirst(found);
    } catch {
      return []; // not the schema we know
    } finally {
      db.close();
    }
  },
  async purgePlan(ctx, id, cwd) {
    return { argv: [...ctx.program, 'session', 'delete', id], cwd };
  },
};

/** opencode's database: $OPENCODE_DB, else `$XDG_DATA_HOME or ~/.local/share` / opencode / opencode.db. */
export function opencodeDatabase(ctx: Pick<StoreContext, 'home' | 'env'>): string {
  if (ctx.env.OPENCODE_DB) return path.resolve(ctx.home, ctx.env.OPENCODE_DB);
  return path.join(ctx.env.XDG_DATA_HOME || path.join(ctx.home, '.local', 'share'), 'opencode', 'opencode.db');
}
