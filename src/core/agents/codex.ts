import * as path from 'node:path';
import type { AgentAdapter, StoredConversation } from './adapter';
import { listDir, newestFirst, parseDate, readFirstLine } from './store';
import { anything, lit, obj, parse, str } from '../base/schema';

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
  // The footer of its ready screen. Not "Ask Codex to do anything" nor "? for shortcuts" alone:
  // its loading splash (~0.5 s) shows both before a trust, sign-in or update screen replaces it,
  // and its composer's placeholder changes from turn to turn.
  readySign: /← for agents/,
  // Seen on 0.171.0 in a tmux pane (docs/agent-clis.md).
  blockingScreens: [
    {
      id: 'folder_trust',
      name: 'its folder-trust question',
      answer: 'Attach and choose "Trust and continue", or add [projects."<folder>"] with trust_level = "trusted" to ~/.codex/config.toml.',
      sign: /Trust this folder\? Codex can read, edit, and run files here|Do you trust the contents of this directory\?/,
    },
    {
      id: 'login',
      name: 'its sign-in screen',
      answer: "Attach and sign in, or run 'codex login' once (with an API key: 'codex login --with-api-key').",
      sign: /Welcome to Codex, OpenAI's command-line coding agent|Choose how you want to use Codex|Sign in with ChatGPT/,
    },
    {
      id: 'update',
      name: 'an offer to update itself',
      answer: 'Attach and press Esc to skip it (Enter would run npm install -g), or set check_for_update_on_startup = false in ~/.codex/config.toml.',
      sign: /Update available · [\d.]+ → [\d.]+/,
    },
  ],
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
  conversationOfFile(ctx, file) {
    const root = path.join(ctx.env.CODEX_HOME || path.join(ctx.home, '.codex'), 'sessions') + path.sep;
    if (!file.startsWith(root) || !/\/rollout-[^/]*\.jsonl$/.test(file)) return undefined;
    return sessionMeta(file)?.id;
  },
  async purgePlan(ctx, id, cwd) {
    return { argv: [...ctx.program, 'delete', id, '--force'], cwd };
  },
};

/** A rollout's first line: its session's meta. */
const sessionMetaLine = obj({ type: lit('session_meta'), payload: obj({ id: str(), cwd: anything, timestamp: anything }) });

function sessionMeta(file: string): StoredConversation | undefined {
  const line = readFirstLine(file);
  if (!line) return undefined;
  try {
    const { payload } = parse(sessionMetaLine, JSON.parse(line));
    return { id: payload.id, cwd: typeof payload.cwd === 'string' ? payload.cwd : null, createdAt: parseDate(payload.timestamp) ?? new Date(0) };
  } catch {
    return undefined; // not JSON, or not a session_meta line
  }
}
