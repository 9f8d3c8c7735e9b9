import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { AgentAdapter, StoredConversation } from './adapter';
import { listDir, newestFirst, parseDate, readJson } from './store';
import { isRecord } from '../base/schema';

/**
 * grok (xAI's official Grok CLI, npm `@xai-official/grok`). Verified against 1.0.41, driven by the
 * tests (docs/agent-clis.md): `--session-id <uuid>` pre-assigns, `--resume <id>` continues, each
 * session is a folder `~/.grok/sessions/<url-encoded cwd>/<id>/` with a `summary.json` naming its
 * id and cwd (written at start) and `updates.jsonl`, its log.
 */
export const grok: AgentAdapter = {
  name: 'grok',
  program: ['grok'],
  defaultArgs: ['--always-approve'],
  environment: () => ({ GROK_DISABLE_AUTOUPDATER: '1' }),
  // Its prompt box's border ("<model> · always-approve") and footer. Its welcome card comes with
  // them; a suggested next prompt may stand in the box as ghost text, which typing replaces.
  readySign: /always-approve|Ctrl\+x:shortcuts/,
  // Seen on 1.0.41 in a tmux pane with no API key: the sign-in choice, nothing drawn before it.
  blockingScreens: [
    {
      id: 'login',
      name: 'its sign-in screen',
      answer: 'Attach and log in (l), or set XAI_API_KEY before starting it.',
      sign: /Login with Grok/,
    },
  ],
  exitSteps: [{ text: '/quit' }],
  preassignId: () => randomUUID(),
  spawnArgv: (program, args, id) => [...program, ...args, ...(id ? ['--session-id', id] : [])],
  resumeArgv: (program, args, id) => [...program, ...args, '--resume', id],
  async listConversations(ctx, cwd) {
    const root = path.join(ctx.env.GROK_HOME || path.join(ctx.home, '.grok'), 'sessions');
    const found: StoredConversation[] = [];
    // Read the cwd from each summary rather than re-deriving grok's folder encoding.
    for (const project of listDir(root)) {
      for (const id of listDir(path.join(root, project))) {
        const summary = readJson(path.join(root, project, id, 'summary.json'));
        const info = summary?.info;
        if (!isRecord(info) || typeof info.id !== 'string' || info.cwd !== cwd) continue;
        found.push({ id: info.id, cwd, createdAt: parseDate(summary?.created_at) ?? new Date(0) });
      }
    }
    return newestFirst(found);
  },
  async purgePlan(ctx, id, cwd) {
    return { argv: [...ctx.program, 'sessions', 'delete', id], cwd };
  },
};
