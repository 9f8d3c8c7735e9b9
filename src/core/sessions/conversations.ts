import * as fs from 'node:fs';
import * as path from 'node:path';
import { exec } from '../base/exec';
import type { Logger } from '../base/log';
import type { AgentAdapter, StoreContext, StoredConversation } from '../agents/adapter';

/**
 * Finds the conversation a session's agent started, in the agent's own store: one that ran in the
 * session's folder, began no earlier than `since`, and is not owned by another session or by the
 * orchestrator. With `onlyIfUnique`, an ambiguous store (two candidates) yields nothing rather
 * than a guess.
 */
export async function discoverConversation(
  adapter: AgentAdapter,
  ctx: StoreContext,
  cwd: string,
  since: Date,
  owned: ReadonlySet<string>,
  options: { onlyIfUnique?: boolean } = {},
): Promise<StoredConversation | undefined> {
  if (!adapter.listConversations) return undefined;
  const slackMs = 2000; // store clocks and ours can disagree by a little
  const candidates = (await adapter.listConversations(ctx, cwd))
    .filter((c) => c.createdAt.getTime() >= since.getTime() - slackMs && !owned.has(c.id))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  if (options.onlyIfUnique && candidates.length > 1) return undefined;
  return candidates[0];
}

/** True when the agent's store holds the conversation (it may not until the first message). */
export async function isStored(adapter: AgentAdapter, ctx: StoreContext, cwd: string, id: string): Promise<boolean> {
  if (!adapter.listConversations) return false;
  return (await adapter.listConversations(ctx, cwd)).some((c) => c.id === id);
}

/** Deletes a stored conversation the agent's own way; resolves with what was done, for the log. */
export async function purgeConversation(adapter: AgentAdapter, ctx: StoreContext, id: string, cwd: string, logger: Logger): Promise<string> {
  const plan = await adapter.purgePlan(ctx, id, cwd);
  if ('unsupported' in plan) throw new Error(plan.unsupported);
  if ('files' in plan) {
    const removed = plan.files.filter((f) => fs.existsSync(f));
    for (const f of removed) fs.rmSync(f, { recursive: true, force: true });
    return removed.length > 0 ? `removed ${removed.map((f) => path.basename(f)).join(', ')}` : 'nothing was stored';
  }
  const [file, ...args] = plan.argv;
  const r = await exec(file!, args, { cwd: plan.cwd, env: { ...ctx.env, HOME: ctx.home }, timeoutMs: 60_000 });
  if (r.exitCode !== 0) throw new Error(`${plan.argv.slice(0, 3).join(' ')} … exited ${r.exitCode}: ${(r.stderr || r.stdout).trim().split('\n')[0]}`);
  logger.info(`purged conversation ${id}: ${r.stdout.trim().split('\n')[0] ?? ''}`);
  return `ran ${[...plan.argv.slice(0, 2), '…'].join(' ')}`;
}
