import * as path from 'node:path';
import * as vscode from 'vscode';
import { registerBrokerCommands } from './brokerCommands';
import { BROKER_PASSWORD_SECRET, Commands } from '../host/commandIds';
import type { EngineHost } from '../host/engineHost';
import { runSteps } from '../shared/multiStep';
import { folderFor, pickFolders, reportErrors, type FolderRef } from '../shared/picks';

/** Broker settings and start/stop, the monitor, doctor, the .mam folder, refresh. */
export function registerWorkspaceCommands(host: EngineHost, context: vscode.ExtensionContext, channel: vscode.LogOutputChannel): vscode.Disposable[] {
  const setMonitoring = () => host.updateMonitoring();
  return [
    vscode.commands.registerCommand(Commands.refresh, () => host.refresh()),

    vscode.commands.registerCommand(Commands.startMonitor, (ref?: FolderRef) =>
      reportErrors('starting the monitor', async () => {
        for (const { engine } of await pickFolders(host, ref, 'Start Monitor', (fe) => !fe.engine.core.monitor.running)) {
          await engine.start();
          engine.core.monitor.start();
        }
        await setMonitoring();
      }),
    ),

    vscode.commands.registerCommand(Commands.stopMonitor, (ref?: FolderRef) =>
      reportErrors('stopping the monitor', async () => {
        // Only the folders whose monitor runs are offered: stopping one that does not is nothing.
        for (const { engine } of await pickFolders(host, ref, 'Stop Monitor', (fe) => fe.engine.core.monitor.running)) engine.core.monitor.stop();
        await setMonitoring();
      }),
    ),

    vscode.commands.registerCommand(Commands.runDoctor, (ref?: FolderRef) =>
      reportErrors('running doctor', async () => {
        for (const { folder, engine } of await pickFolders(host, ref, 'Run Doctor')) {
          channel.info(`doctor: ${folder.name} (${folder.uri.fsPath})`);
          for (const c of await engine.doctor()) {
            const line = `${c.ok ? (c.warning ? '!' : '✓') : '✗'} ${c.name}: ${c.detail}${c.fix && (!c.ok || c.warning) ? ` → ${c.fix}` : ''}`;
            if (!c.ok) channel.error(line);
            else if (c.warning) channel.warn(line);
            else channel.info(line);
          }
        }
        channel.show(true);
      }),
    ),

    vscode.commands.registerCommand(Commands.openControlPlane, (ref?: FolderRef) =>
      reportErrors('opening .mam', async () => {
        const fe = await folderFor(host, ref, 'Open the .mam Folder');
        if (!fe) return;
        await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(path.join(fe.folder.uri.fsPath, '.mam')));
      }),
    ),

    vscode.commands.registerCommand(Commands.configureBroker, () => reportErrors('configuring the broker', () => configureBroker(context))),
    ...registerBrokerCommands(host),
  ];
}

/** Embedded broker, or your own: URL and user in settings, the password in SecretStorage. */
async function configureBroker(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration('mam');
  const choices = [
    { label: 'Use the embedded broker', description: 'recommended', detail: 'MAM runs a private MQTT broker for this workspace on 127.0.0.1 with generated credentials.', own: false },
    { label: 'Use my own MQTT broker…', detail: 'A broker you run (e.g. Mosquitto), for remote runners on other hosts. Never a public one.', own: true },
  ];
  const chosen: { choice?: (typeof choices)[number]; url?: string; user?: string; password?: string } = {};
  const own = () => chosen.choice?.own !== false;
  const done = await runSteps('Configure Broker', [
    { run: async (input) => void (chosen.choice = await input.pick({ placeholder: 'Which MQTT broker should MAM use?', items: choices, active: chosen.choice })) },
    {
      when: own,
      run: async (input) =>
        void (chosen.url = await input.input({
          placeholder: 'Its address, e.g. mqtts://broker.example.com:8883',
          prompt: 'A host name, or mqtt://host:port, or mqtts://host:port for TLS',
          value: chosen.url ?? (config.get<string>('broker.host') || 'mqtts://'),
          validate: (v) => (/^(mqtts?:\/\/)?[A-Za-z0-9.[\]:-]+(:\d+)?\/?$/.test(v.trim()) ? undefined : 'mqtt[s]://host[:port] or a host name'),
        })),
    },
    { when: own, run: async (input) => void (chosen.user = await input.input({ placeholder: 'User name (empty for none)', value: chosen.user ?? config.get<string>('broker.username') ?? '' })) },
    { when: () => own() && chosen.user !== '', run: async (input) => void (chosen.password = await input.input({ placeholder: 'Password', prompt: 'Kept in VS Code’s secret storage, never in settings', password: true })) },
  ]);
  if (!done) return;
  const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  if (!chosen.choice!.own) {
    await config.update('broker.host', undefined, target);
    await context.secrets.delete(BROKER_PASSWORD_SECRET);
    void vscode.window.showInformationMessage('MAM: using the embedded broker.');
    return;
  }
  const [url, user] = [chosen.url!.trim(), chosen.user!];
  const password = user ? chosen.password ?? '' : '';
  await config.update('broker.host', url, target);
  await config.update('broker.username', user, target);
  // Tied to this broker: a folder whose settings or .mam.env name another host never gets it.
  const port = config.get<number>('broker.port') ?? 0;
  if (password) await context.secrets.store(BROKER_PASSWORD_SECRET, JSON.stringify({ host: url, port, password }));
  else await context.secrets.delete(BROKER_PASSWORD_SECRET);
  void vscode.window.showInformationMessage(`MAM: using the broker at ${url}.`);
}
