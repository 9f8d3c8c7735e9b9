/** What `mam init` did with one file: the result's rows, shared by every part of init that writes one. */
export type InitAction = 'created' | 'appended' | 'updated' | 'removed' | 'unchanged' | 'outdated' | 'kept' | 'gone';

export interface InitItem {
  /** Workspace-relative, `/`-separated (absolute for a path outside the workspace). */
  path: string;
  action: InitAction;
  note?: string;
}
