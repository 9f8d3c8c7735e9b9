import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Commands } from '../host/commandIds';
import type { EngineHost, FolderEngine } from '../host/engineHost';
import { DisposableBase } from '../../core/base/disposable';
import { folderFor, reportErrors } from '../shared/picks';

const NEVER_KEY = 'mam.gitignore.neverAsk';

/**
 * SPEC §3: `.mam/` and `.mam.env` stay out of the user's commits. When git does not ignore them in
 * a trusted folder, the extension offers to add them to its .gitignore — once per window, and
 * never again for a folder where the user said so. The command does the same on demand.
 */
export class GitignoreOffer extends DisposableBase {
  /** The offers made, newest last (the extension-host tests read it). */
  readonly offered: Array<{ folderIndex: number; missing: string[] }> = [];

  constructor(
    private readonly host: EngineHost,
    private readonly state: vscode.Memento,
  ) {
    super();
    this._register(vscode.commands.registerCommand(Commands.addToGitignore, (ref?: { folderIndex: number }) =>
      reportErrors('updating .gitignore', async () => {
        const fe = await folderFor(this.host, ref, 'Add .mam to .gitignore');
        if (fe) await this.add(fe);
      }),
    ));
  }

  /** Offers, for each trusted folder whose git does not ignore MAM's files. */
  async check(): Promise<void> {
    const never = this.state.get<string[]>(NEVER_KEY, []);
    for (const fe of await this.host.ready()) {
      if (!fe.engine.trusted || never.includes(fe.folder.uri.toString())) continue;
      // A folder without .mam/ has nothing of MAM's to leak yet; the offer to initialize it comes instead.
      if (!fs.existsSync(path.join(fe.folder.uri.fsPath, '.mam'))) continue;
      const missing = await fe.engine.missingIgnores().catch(() => undefined);
      if (!missing?.length) continue;
      this.offered.push({ folderIndex: fe.folder.index, missing });
      const what = missing.join(' and ');
      void vscode.window
        .showInformationMessage(`MAM: git does not ignore ${what} in ${fe.folder.name}; agent state and broker credentials could end up in commits.`, 'Add to .gitignore', 'Don’t Ask Again')
        .then(async (answer) => {
          if (answer === 'Add to .gitignore') await reportErrors('updating .gitignore', () => this.add(fe));
          if (answer === 'Don’t Ask Again') await this.state.update(NEVER_KEY, [...this.state.get<string[]>(NEVER_KEY, []), fe.folder.uri.toString()]);
        });
    }
  }

  private async add(fe: FolderEngine): Promise<void> {
    const added = await fe.engine.addIgnores();
    void vscode.window.showInformationMessage(added.length ? `MAM: added ${added.join(' and ')} to ${fe.folder.name}/.gitignore.` : `MAM: git already ignores .mam/ and .mam.env in ${fe.folder.name}.`);
  }
}
