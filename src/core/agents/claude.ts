import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { AgentAdapter, StoreContext, StoredConversation } from './adapter';
import { readJsonLines } from '../base/jsonLines';
import { anyObject } from '../base/schema';
import { listDir, mtimeOf, newestFirst, parseDate } from './store';

/**
 * claude (Claude Code). Verified against 2.1.197 (docs/agent-clis.md): `--session-id <uuid>`
 * pre-assigns the conversation, `--resume <uuid>` continues it, conversations live in
 * `~/.claude/projects/<slug of cwd>/<uuid>.jsonl` from the first message on.
 */
export const claude: AgentAdapter = {
  name: 'claude',
  program: ['claude'],
  defaultArgs: ['--dangerously-skip-permissions'],
  environment() {
    // As root claude refuses the bypass flag unless told it runs in a sandbox; and left alone it
    // updates itself with `npm install --global` in the middle of a session.
    return { DISABLE_AUTOUPDATER: '1', ...(process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}) };
  },
  // Its prompt's footer: "⏵⏵ bypass permissions on" in bypass mode (no "? for shortcuts" then).
  readySign: /bypass permissions on|\? for shortcuts/,
  // Seen on 2.1.197 in a tmux pane (docs/agent-clis.md). Each pre-answer is a key of claude's own config.
  blockingScreens: [
    {
      id: 'bypass_warning',
      name: 'its Bypass Permissions warning',
      answer: 'Attach and choose "Yes, I accept" (Enter alone chooses "No, exit"), or pre-answer it for good with "skipDangerousModePermissionPrompt": true in ~/.claude/settings.json.',
      sign: /Bypass Permissions mode/,
    },
    {
      id: 'folder_trust',
      name: 'its folder-trust question',
      answer: 'Attach and choose "Yes, I trust this folder" (claude remembers it for this folder).',
      sign: /Is this a project you created or one you trust\?|Do you trust the files in this folder\?/,
    },
    {
      id: 'api_key',
      name: 'its question whether to use the API key in your environment',
      answer: 'Attach and choose "Yes" (the default is "No", after which claude is not logged in), or unset ANTHROPIC_API_KEY to log in instead.',
      sign: /Detected a custom API key in your environment/,
    },
    {
      id: 'first_run',
      name: 'its first-run setup (theme and security notes)',
      answer: 'Attach and finish it once; claude then skips it ("hasCompletedOnboarding" in ~/.claude.json).',
      sign: /Choose the text style that looks best with your terminal|Security notes:/,
    },
    {
      id: 'not_logged_in',
      name: 'that it is not logged in (every message would be refused)',
      answer: 'Attach and run /login, or set ANTHROPIC_API_KEY and accept it when claude asks.',
      sign: /Not logged in · (Please )?[Rr]un \/login/,
    },
  ],
  exitSteps: [{ text: '/exit' }],
  preassignId: () => randomUUID(),
  spawnArgv: (program, args, id) => [...program, ...args, ...(id ? ['--session-id', id] : [])],
  resumeArgv: (program, args, id) => [...program, ...args, '--resume', id],
  async listConversations(ctx, cwd) {
    const dir = path.join(configDir(ctx), 'projects', claudeSlug(cwd));
    const found: StoredConversation[] = [];
    for (const name of listDir(dir)) {
      if (!name.endsWith('.jsonl')) continue;
      const file = path.join(dir, name);
      const records = readJsonLines(file, anyObject, { limit: 50 });
      const recordedCwd = records.map((r) => r.cwd).find((c): c is string => typeof c === 'string');
      const stamp = parseDate(records.find((r) => typeof r.timestamp === 'string')?.timestamp);
      found.push({ id: name.slice(0, -'.jsonl'.length), cwd: recordedCwd ?? cwd, createdAt: stamp ?? mtimeOf(file) });
    }
    return newestFirst(found);
  },
  async purgePlan(ctx, id, cwd) {
    // No per-conversation command exists (`claude project purge` removes a whole project).
    const dir = path.join(configDir(ctx), 'projects', claudeSlug(cwd));
    return { files: [path.join(dir, `${id}.jsonl`), path.join(dir, id)] };
  },
};

function configDir(ctx: StoreContext): string {
  return ctx.env.CLAUDE_CONFIG_DIR || path.join(ctx.home, '.claude');
}

/** claude's project folder name: every non-alphanumeric character becomes '-'; long paths get a hash. */
export function claudeSlug(cwd: string): string {
  const slug = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  if (slug.length <= 200) return slug;
  let h = 0;
  for (let i = 0; i < cwd.length; i++) h = ((h << 5) - h + cwd.charCodeAt(i)) | 0;
  return `${slug.slice(0, 200)}-${Math.abs(h).toString(36)}`;
}
