import { UsageError } from '../base/errors';
import { printable } from '../base/ids';
import { custom, matches, obj, parse, str, type Schema } from '../base/schema';
import { adapterFor } from '../agents';
import { readIfExists, writeFileAtomic } from '../store/atomicFile';
import { withLock } from '../store/lock';
import type { ControlPlanePaths } from '../store/paths';

export interface OrchestratorEntry {
  agent: string;
  conversation_id: string;
  registered_at: string;
}

// The conversation ID is what matters (it is never taken for a sub-agent's); the rest is for people.
const said = custom((v) => (typeof v === 'string' ? v : ''));
const entry: Schema<OrchestratorEntry> = obj({ agent: said, conversation_id: str(), registered_at: said });
const entries = custom((v, at) => (Array.isArray(v) ? v.filter((e) => matches(entry, e)).map((e, i) => entry.read(e, `${at}[${i}]`)) : []));

const CONVERSATION_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

export function checkConversationId(id: string): void {
  if (!CONVERSATION_ID.test(id)) throw new UsageError(`'${printable(id, 40)}' is not a conversation ID`, 'bad_conversation');
}

/** `orchestrators.json`: conversations that are the orchestrator's own, never taken as a sub-agent's. */
export class OrchestratorRegistry {
  constructor(private readonly paths: ControlPlanePaths) {}

  list(): OrchestratorEntry[] {
    const bytes = readIfExists(this.paths.orchestratorsFile);
    if (!bytes) return [];
    // Entries that are not an orchestrator's (edited by hand) are left out; an unreadable file is none.
    try {
      return parse(entries, JSON.parse(bytes.toString('utf8')));
    } catch {
      return [];
    }
  }

  /** Records a conversation as the orchestrator's; registering it again changes nothing. */
  async register(agent: string, conversationId: string): Promise<{ entry: OrchestratorEntry; added: boolean }> {
    adapterFor(agent);
    checkConversationId(conversationId);
    this.paths.ensureDir();
    return withLock(this.paths.lock('orchestrators'), () => {
      const entries = this.list();
      const existing = entries.find((e) => e.agent === agent && e.conversation_id === conversationId);
      if (existing) return { entry: existing, added: false };
      const entry = { agent, conversation_id: conversationId, registered_at: new Date().toISOString() };
      writeFileAtomic(this.paths.orchestratorsFile, `${JSON.stringify([...entries, entry], null, 2)}\n`);
      return { entry, added: true };
    });
  }
}
