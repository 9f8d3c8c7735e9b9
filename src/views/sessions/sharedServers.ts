import type { FolderEngine } from '../host/engineHost';

/** Folders of the window whose sessions would run on one multiplexer server. */
export interface SharedServer {
  mux: string;
  server: string;
  folders: FolderEngine[];
}

/**
 * Each folder that uses MAM has its own server (`mam-<folder>-<hash>`) unless a setting or
 * MAM_TMUX_SERVER / MAM_HERDR_SESSION names one for the whole window. Folders may share a tmux
 * server: each tmux pane records the folder that placed it, and no folder's monitor adopts another's.
 * A herdr pane records no such thing, so on a shared herdr server each folder's monitor would
 * register the other's panes as its own sessions. Returns each herdr server more than one folder
 * would use.
 */
export function sharedServers(folders: readonly FolderEngine[]): SharedServer[] {
  const byServer = new Map<string, SharedServer>();
  for (const fe of folders) {
    if (!fe.engine.trusted) continue;
    const mux = fe.engine.core.config.values.mux;
    if (mux !== 'herdr') continue;
    const server = fe.engine.core.sessions.defaultServer(mux);
    const key = `${mux}\u0000${server}`;
    const shared = byServer.get(key) ?? { mux, server, folders: [] };
    shared.folders.push(fe);
    byServer.set(key, shared);
  }
  return [...byServer.values()].filter((s) => s.folders.length > 1);
}
