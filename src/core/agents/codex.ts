import * as path from 'node:path';
import type { AgentAdapter, StoredConversation } from './adapter';
import { listDir, newestFirst, parseDate, readFirstLine } from './store';

/**
 * codex (OpenAI Codex CLI). Verified against 0.171.0: no way to choose the conversation ID, so it
 * is discovered from `~/.codex/sessions/YYYY/MM/DD/rollout-…-<uuid>.jsonl`, whose first line is a
 * `session_meta` record with the id, cwd and time; `codex resume <id>` continues it. `--no-daemon`
 * keeps codex from leaving a background server running after its pane closes.
 */
export const codex: AgentAdapter = {
  name: 'codex',
  program: ['codex'],
  defaultArgs: ['--no-daemon', '--dangerously-bypass-approvals-and-sandbox'],
  environment: () => ({}),
  readySign: /Ask Codex to do anything|\? for shortcuts/,
  exitSteps: [{ text: '/exit' }],
  spawnArgv: (program, args) => [...program, ...args],
  resumeArgv: (program, args, id) => [...program, 'resume', id, ...args],
  async listConversations(ctx, cwd) {
    const root = path.join(ctx.env.CODEX_HOME || path.join(ctx.home, '.codex'), 'sessions');
    const found: StoredConversation[] = [];
    // Date folders are in local time; walk them all (there is one file per conversation).
    for (const y of listDir(root)) {
      for (const m of listDir(path.join(root, y))) {
        for (const d of listDir(path.join(root, y, m))) {
          const dir = path.join(root, y, m, d);
          for (const name of listDir(dir)) {
            if (!name.startsWith('rollout-') || !name.endsWith('.jsonl')) continue;
            const meta = sessionMeta(path.join(dir, name));
            if (meta && meta.cwd === cwd) found.push(meta);
          }
        }
      }
    }
    return newestFirst(found);
  },
  async purgePlan(ctx, id, cwd) {
    return { argv: [...ctx.program, 'delete', id, '--force'], cwd };
  },
};

function sessionMeta(file: string): StoredConversation | undefined {
  const line = readFirstLine(file);
  if (!line) return undefined;
  try {
    const record = JSON.parse(line) as { type?: string; payload?: { id?: unknown; cwd?: unknown; timestamp?: unknown } };
    if (record.type !== 'session_meta' || typeof record.payload?.id !== 'string') return undefined;
    return {
      id: record.payload.id,
      cwd: typeof record.payload.cwd === 'string' ? record.payload.cwd : null,
      createdAt: parseDate(record.payload.timestamp) ?? new Date(0),
    };
  } catch {
    return undefined;
  }
}
