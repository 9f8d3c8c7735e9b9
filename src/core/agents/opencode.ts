import { exec } from '../base/exec';
import type { AgentAdapter, StoredConversation } from './adapter';
import { newestFirst, parseDate } from './store';
import { isRecord } from '../base/schema';

/**
 * opencode. Verified against 1.18.33: no way to choose the ID; sessions live in a SQLite database
 * that may hold recent rows only in its write-ahead log, so they are listed through opencode itself
 * (`opencode session list --format json`, run in the project folder); `--session <id>` continues.
 */
export const opencode: AgentAdapter = {
  name: 'opencode',
  program: ['opencode'],
  defaultArgs: ['--auto'],
  environment: () => ({}),
  readySign: /Ask anything|ctrl\+p commands/,
  exitSteps: [{ keys: ['C-c'] }],
  spawnArgv: (program, args) => [...program, ...args],
  resumeArgv: (program, args, id) => [...program, ...args, '--session', id],
  async listConversations(ctx, cwd) {
    const [file, ...rest] = ctx.program;
    if (!file) return [];
    const r = await exec(file, [...rest, 'session', 'list', '--format', 'json'], { cwd, env: { ...ctx.env, HOME: ctx.home }, timeoutMs: 20_000 }).catch(() => undefined);
    if (!r || r.exitCode !== 0) return [];
    let rows: unknown;
    try {
      rows = JSON.parse(r.stdout);
    } catch {
      return [];
    }
    if (!Array.isArray(rows)) return [];
    const found: StoredConversation[] = [];
    for (const row of rows.filter(isRecord)) {
      if (typeof row.id !== 'string' || row.directory !== cwd) continue;
      found.push({ id: row.id, cwd, createdAt: parseDate(row.created) ?? new Date(0) });
    }
    return newestFirst(found);
  },
  async purgePlan(ctx, id, cwd) {
    return { argv: [...ctx.program, 'session', 'delete', id], cwd };
  },
};
