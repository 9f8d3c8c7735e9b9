import type { FolderEngine } from './engineHost';

/** Folders of the window whose sessions would run on one multiplexer server. */
export interface SharedServer {
  mux: string;
  server: string;
  folders: FolderEngine[];
}

/**
 * Each folder that uses MAM has its own tmux server (`mam-<folder>-<hash>`) unless a setting or
 * MAM_TMUX_SERVER names one for the whole window. Then the folders share it, and each folder's
 * monitor would register the other's panes as its own sessions (it adopts every live pane on its
 * server that its registry does not know). Returns each server more than one folder would use.
 */
export function sharedServers(folders: readonly FolderEngine[]): SharedServer[] {
  const byServer = new Map<string, SharedServer>();
  for (const fe of folders) {
    if (!fe.engine.trusted) continue;
    const mux = fe.engine.config.values.mux;
    const server = fe.engine.sessions.defaultServer(mux);
    const key = `${mux}\u0000${server}`;
    const shared = byServer.get(key) ?? { mux, server, folders: [] };
    shared.folders.push(fe);
    byServer.set(key, shared);
  }
  return [...byServer.values()].filter((s) => s.folders.length > 1);
}
