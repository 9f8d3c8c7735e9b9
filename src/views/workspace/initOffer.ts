import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { InitMode, InitResult } from '../../core/init/initWorkspace';
import { printable } from '../../core/base/ids';
import { readManifest } from '../../core/init/manifest';
import { Commands } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { DisposableBase } from '../../core/base/disposable';
import { folderFor, reportErrors } from '../shared/picks';

/** Folders whose offer the user put off in this workspace ("Not Now"). */
const NOT_NOW_KEY = 'mam.init.notNow';
/** Folders never to offer again, in any workspace ("Don't Ask Again"). */
const NEVER_KEY = 'mam.init.neverAsk';
const NEVER = 'Don’t Ask Again';

/**
 * "MAM: Initialize Workspace" (`mam init` for a folder), and the offer to run it in a trusted git
 * folder that has no `.mam/` yet: made once per folder, put off for this workspace with "Not Now",
 * or for good with "Don't Ask Again".
 */
export class InitOffer extends DisposableBase {
  /** Folder indexes offered, in order (the extension-host tests read it). */
  readonly offered: number[] = [];
  /** Folder indexes whose installed skills name a CLI that is gone, offered a refresh. */
  readonly refreshes: number[] = [];
  private readonly asked = new Set<string>();

  constructor(
    private readonly host: EngineHost,
    private readonly workspaceState: vscode.Memento,
    private readonly globalState: vscode.Memento,
    /** The CLI this extension carries: what the skills should name. */
    private readonly cliPath: string,
  ) {
    super();
    this._register(vscode.commands.registerCommand(Commands.initWorkspace, async (ref?: { folderIndex: number; mode?: InitMode }) => {
      let result: InitResult | undefined;
      await reportErrors('initializing the workspace', async () => {
        // Any folder of the window, set up or not: this is how a folder starts using MAM.
        const fe = await folderFor(this.host, ref, 'Initialize Workspace', { everyFolder: true });
        if (fe) result = await this.init(fe, ref?.mode === 'update' || ref?.mode === 'remove' ? ref.mode : 'install');
      });
      return result;
    }));
  }

  /**
   * Offers, for each git folder without `.mam/` that the user has not put off, in a trusted
   * workspace, to initialize it; and, for one whose skills name a CLI that is gone, to refresh
   * them. Reads only the folders: the engines are built when the user says yes.
   */
  async check(): Promise<void> {
    if (!vscode.workspace.isTrusted) return;
    const putOff = [...this.workspaceState.get<string[]>(NOT_NOW_KEY, []), ...this.globalState.get<string[]>(NEVER_KEY, [])];
    for (const folder of (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file')) {
      const dir = folder.uri.fsPath;
      const key = folder.uri.toString();
      if (this.asked.has(key) || putOff.includes(key)) continue;
      if (this.offerRefresh(folder)) continue;
      if (!fs.existsSync(path.join(dir, '.git')) || fs.existsSync(path.join(dir, '.mam'))) continue;
      this.asked.add(key);
      this.offered.push(folder.index);
      this.ask(
        key,
        `MAM: set ${folder.name} up for a team of agents? This adds .mam/ and a .mam.env template (both kept out of git), skills and AGENTS.md rules that agents read, and MAM's MCP server in their project configs.`,
        { label: 'Initialize', mode: 'install', doing: 'initializing the workspace' },
        NEVER,
      );
    }
  }

  /**
   * A folder whose skills and rules name a MAM CLI that is no longer there (the extension was
   * updated, so its folder name changed) is offered a refresh: agents following them would fail.
   */
  private offerRefresh(folder: vscode.WorkspaceFolder): boolean {
    const installed = readManifest(folder.uri.fsPath).manifest?.cli;
    if (!installed || installed === this.cliPath || fs.existsSync(installed)) return false;
    const key = folder.uri.toString();
    this.asked.add(key);
    this.refreshes.push(folder.index);
    this.ask(
      key,
      `MAM: the skills and AGENTS.md rules in ${folder.name} name a MAM CLI that is no longer installed (${printable(installed, 120)}). Refresh them to name this one?`,
      { label: 'Refresh', mode: 'update', doing: 'refreshing the workspace setup' },
    );
    return true;
  }

  /** Asks about folder `key`; the action runs init for it, "Not Now" and `more` ("Don't Ask Again") are remembered. */
  private ask(key: string, message: string, action: { label: string; mode: InitMode; doing: string }, ...more: string[]): void {
    void vscode.window.showInformationMessage(message, action.label, 'Not Now', ...more).then(async (answer) => {
      if (answer === action.label) {
        await reportErrors(action.doing, async () => {
          const fe = (await this.host.ready()).find((e) => e.folder.uri.toString() === key);
          if (fe) await this.init(fe, action.mode);
        });
      }
      if (answer === 'Not Now') await this.workspaceState.update(NOT_NOW_KEY, [...this.workspaceState.get<string[]>(NOT_NOW_KEY, []), key]);
      if (answer === NEVER) await this.globalState.update(NEVER_KEY, [...this.globalState.get<string[]>(NEVER_KEY, []), key]);
    });
  }

  private async init(fe: FolderEngine, mode: InitMode): Promise<InitResult> {
    const result = await fe.engine.initWorkspace(mode);
    // A folder that now has a control plane gets its engine started (broker, monitor, views).
    if (result.items.some((i) => i.path === '.mam/' && i.action === 'created')) await this.host.rebuild();
    const outdated = result.items.some((i) => i.action === 'outdated');
    void vscode.window.showInformationMessage(`MAM: ${fe.folder.name}: ${describe(result)}`, ...(outdated ? ['Refresh'] : [])).then(async (answer) => {
      if (answer === 'Refresh') await reportErrors('refreshing the workspace setup', () => this.init(fe, 'update'));
    });
    return result;
  }
}

/** One line for a notification: what changed, and what was left as the user had it. */
function describe(r: InitResult): string {
  const count = (action: string) => r.items.filter((i) => i.action === action).length;
  const done = r.mode === 'remove' ? count('removed') : count('created') + count('appended') + count('updated');
  const kept = count('kept');
  const outdated = count('outdated');
  const what = r.mode === 'remove' ? `took back ${done} change${done === 1 ? '' : 's'}` : done ? `${r.mode === 'update' ? 'refreshed' : 'set up'} ${done} file${done === 1 ? '' : 's'} (skills in .agents/skills/ and .claude/skills/, AGENTS.md, the agents' MCP configs)` : 'already set up; nothing changed';
  return `${what}${kept ? `; ${kept} kept as you left ${kept === 1 ? 'it' : 'them'}` : ''}${outdated ? `; ${outdated} installed file${outdated === 1 ? ' is' : 's are'} outdated: Refresh updates what you did not edit` : ''}.`;
}
