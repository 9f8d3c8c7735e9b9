import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { AgentAdapter, StoreContext, StoredConversation } from './adapter';
import { listDir, newestFirst, parseDate, readFirstLine } from './store';

/**
 * qwen (Qwen Code, npm `@qwen-code/qwen-code`). Verified against 0.15.10 on Node 20 (0.24 needs
 * Node 22; docs/agent-clis.md): `--session-id <uuid>` names the conversation, `--resume <uuid>`
 * continues it, each lives in `~/.qwen/projects/<cwd, every non-alphanumeric as ->/chats/<uuid>.jsonl`
 * from the first message on, each line naming the session and its folder.
 *
 * Self-update: qwen runs `npm install --global` of a newer qwen-code in the background unless
 * `"general": {"enableAutoUpdate": false}` is in its settings; no flag or variable turns it off,
 * so MAM cannot (docs/agent-clis.md says so, and what to set).
 */
export const qwen: AgentAdapter = {
  name: 'qwen',
  program: ['qwen'],
  defaultArgs: ['--yolo'],
  environment: () => ({}),
  // Its input box. It shows "Initializing..." beneath it for a moment; a line typed then is kept.
  // No screen of its own is preceded by it: the sign-in choice is drawn instead of it.
  readySign: /Type your message or @path\/to\/file/,
  // Seen on 0.15.10 in a tmux pane (docs/agent-clis.md).
  blockingScreens: [
    {
      id: 'auth',
      name: 'its sign-in choice ("Select Authentication Method")',
      answer: 'Attach and choose how to sign in, or set "security": {"auth": {"selectedType": …}} (with an API key and base URL) in ~/.qwen/settings.json.',
      sign: /Select Authentication Method/,
    },
  ],
  exitSteps: [{ text: '/quit' }],
  preassignId: () => randomUUID(),
  spawnArgv: (program, args, id) => [...program, ...args, ...(id ? ['--session-id', id] : [])],
  resumeArgv: (program, args, id) => [...program, ...args, '--resume', id],
  async listConversations(ctx, cwd) {
    const dir = chatsDir(ctx, cwd);
    const found: StoredConversation[] = [];
    for (const name of listDir(dir)) {
      if (!name.endsWith('.jsonl')) continue;
      const first = parse(readFirstLine(path.join(dir, name)));
      if (first && `${first.sessionId}.jsonl` === name) found.push({ id: first.sessionId, cwd: first.cwd ?? cwd, createdAt: parseDate(first.timestamp) ?? new Date(0) });
    }
    return newestFirst(found);
  },
  async purgePlan(ctx, id, cwd) {
    // Its CLI deletes no session; the file is the conversation.
    return { files: [path.join(chatsDir(ctx, cwd), `${id}.jsonl`)] };
  },
};

/** Where qwen keeps a folder's conversations: its runtime folder (QWEN_RUNTIME_DIR, else QWEN_HOME, else ~/.qwen). */
export function qwenChatsDir(ctx: Pick<StoreContext, 'home' | 'env'>, cwd: string): string {
  const runtime = ctx.env.QWEN_RUNTIME_DIR || ctx.env.QWEN_HOME || path.join(ctx.home, '.qwen');
  return path.join(runtime, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats');
}
const chatsDir = qwenChatsDir;

function parse(line: string | undefined): { sessionId: string; cwd: string | undefined; timestamp: unknown } | undefined {
  if (!line) return undefined;
  try {
    const r = JSON.parse(line) as Record<string, unknown>;
    return typeof r.sessionId === 'string' ? { sessionId: r.sessionId, cwd: typeof r.cwd === 'string' ? r.cwd : undefined, timestamp: r.timestamp } : undefined;
  } catch {
    return undefined;
  }
}
