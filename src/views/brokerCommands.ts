import * as vscode from 'vscode';
import { Commands, ContextKeys } from './commandIds';
import type { EngineHost, FolderEngine } from './engineHost';
import { isOpen } from './jobItems';
import { reportErrors } from './picks';

/**
 * Start / Stop Broker: the embedded broker of each folder that uses one (a folder with a broker of
 * its own has nothing to start). Two context keys say whether some folder's broker runs and
 * whether some folder's is stopped, so the menus offer only what can be done; they follow
 * `.mam/broker.json`, which the daemon writes when it starts and clears when it stops.
 */
export function registerBrokerCommands(host: EngineHost): vscode.Disposable[] {
  const update = () => {
    const states = host.current.map((fe) => fe.engine.embeddedBroker()).filter((s) => s !== undefined);
    void vscode.commands.executeCommand('setContext', ContextKeys.brokerRunning, states.some((s) => s.running));
    void vscode.commands.executeCommand('setContext', ContextKeys.brokerStopped, states.some((s) => !s.running));
  };
  const watcher = vscode.workspace.createFileSystemWatcher('**/.mam/broker.json');
  // After activation builds the engines, and whenever they are rebuilt (settings, folders, trust);
  // not on every job change, which host.onDidChange also reports.
  let engines: readonly FolderEngine[] | undefined;
  const rebuilt = () => {
    if (host.current === engines) return;
    engines = host.current;
    update();
  };
  setImmediate(() => void host.ready().then(rebuilt));
  return [
    watcher,
    watcher.onDidCreate(update),
    watcher.onDidChange(update),
    watcher.onDidDelete(update),
    host.onDidChange(rebuilt),

    vscode.commands.registerCommand(Commands.startBroker, () =>
      reportErrors('starting the broker', async () => {
        const stopped = (await host.ready()).filter((fe) => fe.engine.embeddedBroker()?.running === false);
        if (stopped.length === 0) {
          update();
          return void vscode.window.showInformationMessage(brokerNote(await host.ready(), 'running'));
        }
        const started = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'MAM: starting the broker…' }, () => Promise.all(stopped.map((fe) => fe.engine.startBroker())));
        update();
        void vscode.window.setStatusBarMessage(`MAM: broker running on 127.0.0.1:${started.map((s) => s.port).join(', ')}`, 5000);
      }),
    ),

    vscode.commands.registerCommand(Commands.stopBroker, () =>
      reportErrors('stopping the broker', async () => {
        const running = (await host.ready()).filter((fe) => fe.engine.embeddedBroker()?.running);
        if (running.length === 0) {
          update();
          return void vscode.window.showInformationMessage(brokerNote(await host.ready(), 'stopped'));
        }
        const open = running.reduce((n, fe) => n + fe.engine.listJobs().filter(isOpen).length, 0);
        if (open > 0) {
          const yes = 'Stop Broker';
          const answer = await vscode.window.showWarningMessage(
            `Stop the broker while ${open} job${open === 1 ? ' is' : 's are'} open?`,
            { modal: true, detail: 'Nothing is lost: their events wait in the agents’ outboxes until the broker runs again.' },
            yes,
          );
          if (answer !== yes) return;
        }
        await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'MAM: stopping the broker…' }, () => Promise.all(running.map((fe) => fe.engine.stopBroker())));
        update();
        void vscode.window.setStatusBarMessage('MAM: broker stopped', 5000);
      }),
    ),
  ];
}

/** Why there was nothing to do: every embedded broker is already `state`, or none is used here. */
function brokerNote(engines: readonly FolderEngine[], state: 'running' | 'stopped'): string {
  if (engines.every((fe) => fe.engine.embeddedBroker() === undefined)) {
    return vscode.workspace.isTrusted ? 'MAM: this workspace uses a broker of its own (Configure Broker…); MAM starts and stops none here.' : 'MAM: this workspace is not trusted; MAM runs no broker here.';
  }
  return state === 'running' ? 'MAM: the broker is already running.' : 'MAM: the broker is not running.';
}
