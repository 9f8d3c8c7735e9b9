import { createHash, randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { AgentAdapter, StoredConversation } from './adapter';
import { listDir, newestFirst, parseDate, readFirstLine } from './store';
import { isRecord } from '../base/schema';

/**
 * gemini (Gemini CLI). Verified against 0.61.0, driven by the tests (docs/agent-clis.md):
 * `--session-id` pre-assigns, `--resume <uuid>` continues (only from the same project folder),
 * chats live in `~/.gemini/tmp/<slug>/chats/session-<time>-<id8>.jsonl` whose first line names the
 * session and the sha256 of the project path.
 *
 * Self-update: only `"general": {"enableAutoUpdate": false}` in its settings turns it off; no flag
 * or variable does (docs/agent-clis.md).
 */
export const gemini: AgentAdapter = {
  name: 'gemini',
  program: ['gemini'],
  defaultArgs: ['--yolo'],
  // gemini runs headless when CI or GITHUB_ACTIONS is "true" (it prints an auth error and exits at
  // once: seen on a CI machine); in a pane it is interactive, wherever MAM itself runs.
  environment: (env) => Object.fromEntries(['CI', 'GITHUB_ACTIONS'].filter((k) => env[k] === 'true').map((k) => [k, 'false'])),
  // Its input box under its YOLO mode line, below either the tips of a new session or a reply of
  // the model ("✦ …"). Not the input box alone ("Type your message", "? for shortcuts"): gemini
  // draws it for a second or two before its folder-trust question replaces it, and, when
  // resuming, before "Resuming session..." does — a line typed then is lost. In a folder it does
  // not trust gemini turns YOLO off; a resumed conversation always holds a reply (gemini resumes no
  // other), shown with a spinner in place of the input box until it has loaded; the tips come
  // only once a new session has started.
  readySign: /(Tips for getting started|^✦ )[\s\S]*YOLO Ctrl\+Y[\s\S]*Type your message/m,
  // Seen on 0.61.0 in a tmux pane (docs/agent-clis.md).
  blockingScreens: [
    {
      id: 'folder_trust',
      name: 'its folder-trust question',
      answer: 'Attach and trust the folder, or add it to ~/.gemini/trustedFolders.json ({"<folder>": "TRUST_FOLDER"}).',
      sign: /Do you trust the files in this folder\?/,
    },
    {
      id: 'auth',
      name: 'its sign-in choice',
      answer: 'Attach and choose how to sign in, or set GEMINI_API_KEY and "security.auth.selectedType": "gemini-api-key" in ~/.gemini/settings.json.',
      sign: /How would you like to authenticate for this project\?/,
    },
  ],
  exitSteps: [{ text: '/quit' }],
  preassignId: () => randomUUID(),
  spawnArgv: (program, args, id) => [...program, ...args, ...(id ? ['--session-id', id] : [])],
  resumeArgv: (program, args, id) => [...program, ...args, '--resume', id],
  async listConversations(ctx, cwd) {
    const root = path.join(ctx.home, '.gemini', 'tmp');
    const projectHash = createHash('sha256').update(cwd).digest('hex');
    const byId = new Map<string, StoredConversation>();
    for (const slug of listDir(root)) {
      const chats = path.join(root, slug, 'chats');
      for (const name of listDir(chats)) {
        if (!name.startsWith('session-') || !name.endsWith('.jsonl')) continue;
        const meta = parse(readFirstLine(path.join(chats, name)));
        if (!meta || meta.projectHash !== projectHash) continue;
        const found = { id: meta.sessionId, cwd, createdAt: parseDate(meta.startTime) ?? new Date(0) };
        const seen = byId.get(found.id);
        // A resumed session gets a second file with the same id; keep the earliest start.
        if (!seen || seen.createdAt > found.createdAt) byId.set(found.id, found);
      }
    }
    return newestFirst([...byId.values()]);
  },
  async purgePlan(ctx, id, cwd) {
    return { argv: [...ctx.program, '--delete-session', id], cwd };
  },
};

function parse(line: string | undefined): { sessionId: string; projectHash: string; startTime: unknown } | undefined {
  if (!line) return undefined;
  try {
    const r: unknown = JSON.parse(line);
    return isRecord(r) && typeof r.sessionId === 'string' && typeof r.projectHash === 'string' ? { sessionId: r.sessionId, projectHash: r.projectHash, startTime: r.startTime } : undefined;
  } catch {
    return undefined;
  }
}
