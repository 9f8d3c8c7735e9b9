import * as fs from 'node:fs';
import { nameProblem } from '../base/ids';
import { isAgentName } from '../agents';
import type { NamedScreen } from '../mux/inject';
import { isUsersOwnServer, type PaneInfo } from '../mux/multiplexer';
import type { SessionRegistry } from '../store/sessionRegistry';
import type { MuxKind, SessionRow } from '../store/sessionSchema';
import { abandonedStart, type SessionService } from './sessionService';

/** Ways the registry and the multiplexer can disagree. */
export type Drift =
  /** The registry says running, but the pane is gone or dead. */
  | 'pane_gone'
  /** A live pane on the workspace's server that no session row names. */
  | 'unregistered_pane'
  /** The pane's current directory is not the session's. */
  | 'cwd_changed'
  /** The registry says stopped, but the pane is still alive. */
  | 'stopped_but_alive'
  /** The pane runs a different process than the one registered. */
  | 'pid_changed';

export interface SessionState {
  /** The registry row; null for an unregistered pane. */
  session: SessionRow | null;
  /** The pane as the multiplexer reports it; null when there is none. */
  pane: (PaneInfo & { mux: MuxKind; server: string }) | null;
  drift: Drift[];
  /** A screen the running agent shows that only a person should answer (a first-run dialog). */
  attention: NamedScreen | null;
}

/**
 * A read-only snapshot: every session with its pane's liveness, command and cwd (one batched query
 * per server), every drift, and the blocking screen a running agent shows (one capture per agent
 * that has such screens). Never starts a server and never writes.
 */
export async function sessionStatus(service: SessionService, sessions: readonly SessionRow[], options: { /** Read the screens of running agents for blocking dialogs (default true). */ attention?: boolean } = {}): Promise<SessionState[]> {
  const servers = new Map<string, { mux: MuxKind; server: string }>();
  const key = (mux: MuxKind, server: string) => `${mux}\u0000${server}`;
  for (const s of sessions) servers.set(key(s.mux, s.server), { mux: s.mux, server: s.server });
  for (const mux of ['tmux', 'herdr'] as const) {
    // The workspace's own servers are always looked at, for panes nobody registered.
    if (mux === 'tmux' || sessions.some((s) => s.mux === 'herdr')) servers.set(key(mux, service.defaultServer(mux)), { mux, server: service.defaultServer(mux) });
  }
  const panes = new Map<string, Array<PaneInfo & { mux: MuxKind; server: string }>>();
  await Promise.all(
    [...servers.entries()].map(async ([k, s]) => {
      const list = await service.muxOf(s).listPanes();
      panes.set(k, list.map((p) => ({ ...p, ...s })));
    }),
  );

  const claimed = new Set<string>();
  const states: SessionState[] = await Promise.all(sessions.map(async (session) => {
    const onServer = panes.get(key(session.mux, session.server)) ?? [];
    const pane = session.target ? onServer.find((p) => p.id === session.target) ?? null : null;
    if (pane) claimed.add(`${key(session.mux, session.server)}\u0000${pane.id}`);
    const drift: Drift[] = [];
    const alive = pane?.alive === true;
    if ((session.status === 'running' || session.status === 'starting') && !alive) drift.push('pane_gone');
    if ((session.status === 'stopped' || session.status === 'terminated' || session.status === 'failed') && alive) drift.push('stopped_but_alive');
    // tmux reports the cwd the kernel resolved: the same string is the same folder, without a realpath per pane.
    if (alive && pane.cwd && pane.cwd !== session.cwd && realPath(pane.cwd) !== session.cwd) drift.push('cwd_changed');
    if (alive && pane.pid !== null && session.pid !== null && pane.pid !== session.pid) drift.push('pid_changed');
    const screen = alive && options.attention !== false ? await service.attentionOf(session) : null;
    const attention = screen ? { id: screen.id, name: screen.name, answer: screen.answer } : null;
    return { session, pane, drift, attention };
  }));
  for (const [k, list] of panes) {
    for (const pane of list) {
      // On the user's own server, the panes MAM did not start are the user's, not drift; on a
      // server several workspaces share, another workspace's panes are its own.
      if (isUsersOwnServer(pane.server) || (pane.owner && pane.owner !== service.workspace)) continue;
      if (pane.alive && !claimed.has(`${k}\u0000${pane.id}`)) states.push({ session: null, pane, drift: ['unregistered_pane'], attention: null });
    }
  }
  return states;
}

/** A session being created or resumed has this long to get its pane before it counts as dead. */
const PLACEMENT_GRACE_MS = 120_000;

export interface ReconcileReport {
  terminated: string[];
  registered: string[];
  revived: string[];
  pidUpdated: string[];
  /** `starting` rows a create or resume killed midway left: given their pane, or cleared. */
  repaired: string[];
}

/**
 * Repairs drift (SPEC §4 monitor): a session whose pane is gone becomes `terminated`; a live pane on
 * the workspace's server that nobody registered is registered; a stopped session whose pane is
 * alive is running again. A changed cwd is only reported: the session's folder is where it resumes.
 */
export async function reconcile(service: SessionService, registry: SessionRegistry): Promise<ReconcileReport> {
  const report: ReconcileReport = { terminated: [], registered: [], revived: [], pidUpdated: [], repaired: [] };
  const states = await sessionStatus(service, await registry.list(), { attention: false });
  // Nothing to repair: no lock, no write (a monitor ticks every few seconds; and a workspace whose
  // .mam/ was deleted is not brought back by one).
  const repairs = states.filter((st) => (st.session ? abandonedStart(st.session) || st.drift.some((d) => d === 'pane_gone' || d === 'stopped_but_alive' || d === 'pid_changed') : st.pane !== null));
  if (repairs.length === 0) return report;
  const now = new Date().toISOString();
  await registry.mutate((tx) => {
    for (const state of states) {
      const s = state.session;
      const current = s ? tx.get(s.name) : undefined;
      // Re-check inside the transaction: another writer may have changed the row since we looked.
      if (s && current && current.target === s.target && current.status === s.status) {
        if (abandonedStart(s)) {
          // A create or resume killed midway: its pane, if it got one, is the session's; else it never ran.
          const pane = states.find((o) => o.session === null && o.pane?.alive && o.pane.label === s.name && o.pane.mux === s.mux && o.pane.server === s.server)?.pane;
          if (pane) tx.update(s.name, { status: 'running', target: pane.id, pid: pane.pid });
          else if (s.created_at === s.updated_at) tx.remove(s.name);
          else tx.update(s.name, { status: 'terminated', pid: null, resumable: s.agent === 'shell' ? (s.command?.length ?? 0) > 0 : s.conversation_id !== null });
          report.repaired.push(s.name);
          continue;
        }
        if (s.status === 'starting' && Date.now() - Date.parse(s.updated_at) < PLACEMENT_GRACE_MS) continue; // being created right now
        if (state.drift.includes('pane_gone')) {
          tx.update(s.name, { status: 'terminated', target: null, pid: null, resumable: s.agent === 'shell' ? (s.command?.length ?? 0) > 0 : s.conversation_id !== null });
          report.terminated.push(s.name);
        } else if (state.drift.includes('stopped_but_alive')) {
          tx.update(s.name, { status: 'running', pid: state.pane?.pid ?? s.pid });
          report.revived.push(s.name);
        } else if (state.drift.includes('pid_changed') && state.pane?.pid) {
          tx.update(s.name, { pid: state.pane.pid });
          report.pidUpdated.push(s.name);
        }
      } else if (!s && state.pane) {
        const pane = state.pane;
        if (tx.list().some((r) => r.mux === pane.mux && r.server === pane.server && (r.target === pane.id || (r.status === 'starting' && r.name === pane.label)))) continue;
        const name = adoptedName(pane, (n) => tx.get(n) !== undefined);
        const agent = pane.command && isAgentName(pane.command) ? pane.command : 'shell';
        tx.insert({
          name, agent, role: 'worker', mux: pane.mux, server: pane.server, target: pane.id, cwd: pane.cwd ? realPath(pane.cwd) : '/', status: 'running',
          resumable: false, conversation_id: null, pid: pane.pid, created_at: now, updated_at: now, current_job: null, command: null,
        });
        report.registered.push(name);
      }
    }
  });
  return report;
}

/** The pane's own MAM label when it is a free, valid name; else `pane-<id>`. */
function adoptedName(pane: PaneInfo, taken: (name: string) => boolean): string {
  if (pane.label && !nameProblem(pane.label) && !taken(pane.label)) return pane.label;
  const base = `pane-${pane.id.replace(/[^A-Za-z0-9]/g, '')}`;
  if (!taken(base)) return base;
  for (let i = 2; ; i++) if (!taken(`${base}-${i}`)) return `${base}-${i}`;
}

function realPath(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return dir;
  }
}
