import * as vscode from 'vscode';
import { Commands, ContextKeys } from '../host/commandIds';
import type { EngineHost } from '../host/engineHost';
import { isOpen } from '../jobs/jobItems';
import { pickFolders, reportErrors, type FolderRef } from '../shared/picks';

/**
 * Start / Stop Broker: the embedded broker of each folder that uses one (a folder with a broker of
 * its own has nothing to start). Two context keys say whether some folder's broker runs and
 * whether some folder's is stopped, so the menus offer only what can be done; they follow
 * `.mam/broker.json`, which the daemon writes when it starts and clears when it stops.
 */
export function registerBrokerCommands(host: EngineHost): vscode.Disposable[] {
  const update = () => {
    // The folders that use MAM: a folder without .mam/ has no broker to start.
    const states = host.mamFolders.map((fe) => fe.engine.embeddedBroker()).filter((s) => s !== undefined);
    void vscode.commands.executeCommand('setContext', ContextKeys.brokerRunning, states.some((s) => s.running));
    void vscode.commands.executeCommand('setContext', ContextKeys.brokerStopped, states.some((s) => !s.running));
  };
  const watcher = vscode.workspace.createFileSystemWatcher('**/.mam/broker.json');
  // After activation builds the engines, and whenever they are rebuilt (settings, folders, trust).
  setImmediate(() => void host.ready().then(update));
  return [
    watcher,
    watcher.onDidCreate(update),
    watcher.onDidChange(update),
    watcher.onDidDelete(update),
    host.onDidReset(update),

    vscode.commands.registerCommand(Commands.startBroker, (ref?: FolderRef) =>
      reportErrors('starting the broker', async () => {
        // Only folders whose embedded broker is stopped are offered (a folder with a broker of its own has none to start).
        const stopped = await pickFolders(host, ref, 'Start Broker', (fe) => fe.engine.embeddedBroker()?.running === false);
        if (stopped.length === 0) {
          update();
          return void vscode.window.showInformationMessage(brokerNote(host, ref, 'running'));
        }
        const started = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${stopped.length === 1 ? host.where(stopped[0]!.folder.index) : ''}starting the broker…` }, () => Promise.all(stopped.map((fe) => fe.engine.startBroker())));
        update();
        void vscode.window.setStatusBarMessage(`MAM: broker running on ${started.map((s, i) => `${host.where(stopped[i]!.folder.index)}127.0.0.1:${s.port}`).join(', ')}`, 5000);
      }),
    ),

    vscode.commands.registerCommand(Commands.stopBroker, (ref?: FolderRef) =>
      reportErrors('stopping the broker', async () => {
        const running = await pickFolders(host, ref, 'Stop Broker', (fe) => fe.engine.embeddedBroker()?.running === true);
        if (running.length === 0) {
          update();
          return void vscode.window.showInformationMessage(brokerNote(host, ref, 'stopped'));
        }
        const open = running.reduce((n, fe) => n + fe.engine.core.jobs.index.list().filter(isOpen).length, 0);
        if (open > 0) {
          const yes = 'Stop Broker';
          const where = running.length === 1 && host.multiRoot ? ` of ${running[0]!.folder.name}` : running.length > 1 ? 's' : '';
          const answer = await vscode.window.showWarningMessage(
            `Stop the broker${where} while ${open} job${open === 1 ? ' is' : 's are'} open?`,
            { modal: true, detail: 'Nothing is lost: their events wait in the agents’ outboxes until the broker runs again.' },
            yes,
          );
          if (answer !== yes) return;
        }
        await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MAM: ${running.length === 1 ? host.where(running[0]!.folder.index) : ''}stopping the broker…` }, () => Promise.all(running.map((fe) => fe.engine.stopBroker())));
        update();
        void vscode.window.setStatusBarMessage(`MAM: ${running.length === 1 ? host.where(running[0]!.folder.index) : ''}broker${running.length > 1 ? 's' : ''} stopped`, 5000);
      }),
    ),
  ];
}

/** Why there was nothing to do: every embedded broker (of the row's folder) is already `state`, or none is used here. */
function brokerNote(host: EngineHost, ref: FolderRef | undefined, state: 'running' | 'stopped'): string {
  const named = ref && typeof ref.folderIndex === 'number' ? host.byFolderIndex(ref.folderIndex) : undefined;
  const engines = named ? [named] : host.mamFolders.length > 0 ? host.mamFolders : host.current;
  const where = named ? host.where(named.folder.index) : '';
  const embedded = engines.filter((fe) => fe.engine.embeddedBroker() !== undefined);
  if (embedded.length === 0) {
    return vscode.workspace.isTrusted ? `MAM: ${where}this workspace uses a broker of its own (Configure Broker…); MAM starts and stops none here.` : 'MAM: this workspace is not trusted; MAM runs no broker here.';
  }
  if (embedded.length > 1) return state === 'running' ? 'MAM: every folder’s broker is already running.' : 'MAM: no folder’s broker is running.';
  return state === 'running' ? `MAM: ${where}the broker is already running.` : `MAM: ${where}the broker is not running.`;
}
