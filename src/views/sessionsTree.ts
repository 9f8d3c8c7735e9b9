import * as vscode from 'vscode';
import type { SessionRow } from '../core/store/sessionSchema';
import type { WorkspaceCore } from './workspaceCore';

const STATUS_ICON: Record<SessionRow['status'], [string, string | undefined]> = {
  running: ['play-circle', 'testing.iconPassed'],
  starting: ['loading~spin', undefined],
  stopped: ['debug-pause', 'disabledForeground'],
  terminated: ['circle-slash', 'disabledForeground'],
  failed: ['error', 'testing.iconFailed'],
};

/** The Sessions view: one row per registered session, read from the registry. */
export class SessionsTreeProvider implements vscode.TreeDataProvider<SessionRow> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly cores: () => readonly WorkspaceCore[]) {}

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(element?: SessionRow): Promise<SessionRow[]> {
    if (element) return [];
    const rows = await Promise.all(this.cores().map((c) => c.controlPlane.sessions.list().catch(() => [])));
    return rows.flat();
  }

  getTreeItem(session: SessionRow): vscode.TreeItem {
    const item = new vscode.TreeItem(session.name, vscode.TreeItemCollapsibleState.None);
    const [icon, color] = STATUS_ICON[session.status];
    item.id = `session:${session.server}:${session.name}`;
    item.description = `${session.agent} · ${session.role} · ${session.status}`;
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    item.tooltip = new vscode.MarkdownString(
      [`**${session.name}** (${session.agent}, ${session.role})`, `status: ${session.status}`, `cwd: \`${session.cwd}\``,
        `pane: ${session.mux}:${session.server} ${session.target ?? '-'}`, `conversation: ${session.conversation_id ?? '-'}`].join('\n\n'),
    );
    item.contextValue = `mam.session.${session.status}`;
    return item;
  }
}
