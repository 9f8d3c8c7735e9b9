import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { AgentAdapter, StoreContext, StoredConversation } from './adapter';
import { listDir, newestFirst, parseDate, readFirstLine } from './store';

/**
 * copilot (GitHub Copilot CLI, npm `@github/copilot`). Verified against 1.0.102
 * (docs/agent-clis.md): `--session-id <uuid>` names a new conversation, `--resume=<uuid>`
 * continues one, each lives in `~/.copilot/session-state/<uuid>/events.jsonl` from the start,
 * whose first line (`session.start`) names it, its folder and its start.
 */
export const copilot: AgentAdapter = {
  name: 'copilot',
  program: ['copilot'],
  // = --allow-all-tools --allow-all-paths --allow-all-urls: no question before each command.
  defaultArgs: ['--yolo'],
  // Left alone it downloads newer versions of itself and runs them.
  environment: () => ({ COPILOT_AUTO_UPDATE: 'false' }),
  // Its footer under the input box. Nothing draws it before the trust question replaces the banner.
  readySign: /\/ commands · \? help/,
  // Seen on 1.0.102 in a tmux pane (docs/agent-clis.md).
  blockingScreens: [
    {
      id: 'folder_trust',
      name: 'its folder-trust question',
      answer: 'Attach and choose "Yes, and remember this folder for future sessions", or add the folder to "trustedFolders" in ~/.copilot/config.json.',
      sign: /Confirm folder trust/,
    },
    {
      id: 'not_logged_in',
      name: 'that it is not signed in (every message would be refused)',
      answer: 'Attach and run /login, or start it with COPILOT_GITHUB_TOKEN set (or a model provider: COPILOT_PROVIDER_BASE_URL).',
      sign: /Please use \/login to sign in to use Copilot/,
    },
  ],
  exitSteps: [{ text: '/exit' }],
  preassignId: () => randomUUID(),
  spawnArgv: (program, args, id) => [...program, ...args, ...(id ? ['--session-id', id] : [])],
  resumeArgv: (program, args, id) => [...program, ...args, `--resume=${id}`],
  async listConversations(ctx, cwd) {
    const root = sessionState(ctx);
    const found: StoredConversation[] = [];
    for (const id of listDir(root)) {
      const start = sessionStart(path.join(root, id, 'events.jsonl'));
      if (start && start.id === id && start.cwd === cwd) found.push(start);
    }
    return newestFirst(found);
  },
  async purgePlan(ctx, id) {
    // Its CLI deletes no session (`copilot sessions` only imports); the folder is the conversation.
    return { files: [path.join(sessionState(ctx), id)] };
  },
};

function sessionState(ctx: StoreContext): string {
  return path.join(ctx.env.COPILOT_HOME || path.join(ctx.home, '.copilot'), 'session-state');
}

/** The `session.start` record: {"type":"session.start","data":{"sessionId","startTime","context":{"cwd"}}}. */
function sessionStart(file: string): StoredConversation | undefined {
  const line = readFirstLine(file);
  if (!line) return undefined;
  try {
    const r = JSON.parse(line) as { type?: unknown; data?: { sessionId?: unknown; startTime?: unknown; context?: { cwd?: unknown } } };
    if (r.type !== 'session.start' || typeof r.data?.sessionId !== 'string') return undefined;
    return { id: r.data.sessionId, cwd: typeof r.data.context?.cwd === 'string' ? r.data.context.cwd : null, createdAt: parseDate(r.data.startTime) ?? new Date(0) };
  } catch {
    return undefined;
  }
}
