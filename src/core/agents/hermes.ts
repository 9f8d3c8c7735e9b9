import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadSqlJs } from '../store/sqlite';
import type { AgentAdapter, StoredConversation } from './adapter';
import { newestFirst } from './store';

/**
 * hermes (Nous Research Hermes Agent). Not installable here; from its documentation only:
 * `--resume <id>` continues, sessions are rows of `~/.hermes/state.db` (table `sessions`: id,
 * started_at in epoch seconds, cwd), `hermes sessions delete <id> --yes` deletes one.
 */
export const hermes: AgentAdapter = {
  name: 'hermes',
  program: ['hermes'],
  defaultArgs: ['--yolo'],
  environment: () => ({}),
  exitSteps: [{ text: '/quit' }],
  spawnArgv: (program, args) => [...program, ...args],
  resumeArgv: (program, args, id) => [...program, ...args, '--resume', id],
  async listConversations(ctx, cwd) {
    const file = path.join(ctx.env.HERMES_HOME || path.join(ctx.home, '.hermes'), 'state.db');
    if (!fs.existsSync(file)) return [];
    const SQL = await loadSqlJs();
    const db = new SQL.Database(fs.readFileSync(file));
    try {
      const rows = db.exec('SELECT id, started_at FROM sessions WHERE cwd = ?', [cwd])[0]?.values ?? [];
      const found: StoredConversation[] = rows.map(([id, started]) => ({ id: String(id), cwd, createdAt: new Date(Number(started) * 1000) }));
      return newestFirst(found);
    } catch {
      return [];
    } finally {
      db.close();
    }
  },
  async purgePlan(ctx, id, cwd) {
    return { argv: [...ctx.program, 'sessions', 'delete', id, '--yes'], cwd };
  },
};
