import type { Logger } from '../base/log';
import { sleep } from '../base/process';
import { adapterFor } from '../agents';
import type { StoreContext } from '../agents/adapter';
import type { SessionRegistry } from '../store/sessionRegistry';
import type { SessionRow } from '../store/sessionSchema';
import { discoverConversation } from './conversations';
import { openFilesOf } from './openFiles';
import type { OrchestratorRegistry } from './orchestrators';

/** What learning a session's conversation needs of the session service. */
export interface LearningDeps {
  registry: SessionRegistry;
  orchestrators: OrchestratorRegistry;
  logger: Logger;
  require(name: string): Promise<SessionRow>;
  storeContext(row: Pick<SessionRow, 'agent' | 'command'>): StoreContext;
}

/**
 * Records the conversation of an agent that cannot be given an ID (codex), from its own store:
 * one that ran in the session's folder, began no earlier than the session (the agent dates its
 * conversation from its own start, not from the first message), and no other session or the
 * orchestrator owns. Polls until it appears, within `boundMs` (0: look once). With
 * `onlyIfUnique`, two candidates yield nothing rather than a guess.
 */
export async function learnConversation(deps: LearningDeps, name: string, options: { boundMs?: number; onlyIfUnique?: boolean; quiet?: boolean } = {}): Promise<string | undefined> {
  const deadline = Date.now() + (options.boundMs ?? 10_000);
  for (;;) {
    const row = await deps.require(name);
    if (row.conversation_id || !adapterFor(row.agent).listConversations) return row.conversation_id ?? undefined;
    const found = await findConversation(deps, row, { onlyIfUnique: options.onlyIfUnique ?? false });
    if (found) {
      const id = await deps.registry.mutate((tx) => {
        const now = tx.get(name);
        if (!now || now.conversation_id) return now?.conversation_id ?? undefined;
        tx.update(name, { conversation_id: found.id });
        return found.id;
      });
      if (id === found.id) deps.logger.info(`session '${name}': ${row.agent} conversation ${found.id}`);
      return id;
    }
    if (Date.now() >= deadline) {
      if (!options.quiet) deps.logger.warn(`session '${name}': no ${row.agent} conversation of its own appeared in ${row.cwd} yet; it cannot be resumed until one does`);
      return undefined;
    }
    await sleep(400); // a look walks a store's folders or snapshots its database: not too often
  }
}

/** The session's conversation as its agent's store shows it (the file its process holds open, else by folder and time), without recording it. */
export async function findConversation(deps: LearningDeps, row: SessionRow, options: { onlyIfUnique?: boolean }): Promise<{ id: string } | undefined> {
  // Exact, while the agent runs here: the conversation file its process holds open.
  const adapter = adapterFor(row.agent);
  if (adapter.conversationOfFile && row.pid && row.status === 'running') {
    const ctx = deps.storeContext(row);
    const ids = new Set(openFilesOf(row.pid).map((f) => adapter.conversationOfFile!(ctx, f)).filter((id): id is string => id !== undefined));
    if (ids.size === 1) return { id: [...ids][0]! };
  }
  const owned = new Set<string>([
    ...(await deps.registry.list()).filter((s) => s.name !== row.name && s.conversation_id).map((s) => s.conversation_id!),
    ...deps.orchestrators.list().map((o) => o.conversation_id),
  ]);
  return discoverConversation(adapter, deps.storeContext(row), row.cwd, new Date(row.created_at), owned, options);
}
