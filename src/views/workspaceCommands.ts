import * as path from 'node:path';
import * as vscode from 'vscode';
import { BROKER_PASSWORD_SECRET, Commands, ContextKeys } from './commandIds';
import type { EngineHost } from './engineHost';
import { pickFolder, reportErrors } from './picks';

/** Broker settings, the monitor, doctor, the .mam folder, refresh. */
export function registerWorkspaceCommands(host: EngineHost, context: vscode.ExtensionContext, channel: vscode.LogOutputChannel): vscode.Disposable[] {
  const setMonitoring = () => vscode.commands.executeCommand('setContext', ContextKeys.monitoring, host.current.some((e) => e.engine.monitoring));
  return [
    vscode.commands.registerCommand(Commands.refresh, () => host.refresh()),

    vscode.commands.registerCommand(Commands.startMonitor, () =>
      reportErrors('starting the monitor', async () => {
        for (const { engine } of await host.ready()) {
          await engine.start();
          engine.startMonitor();
        }
        await setMonitoring();
      }),
    ),

    vscode.commands.registerCommand(Commands.stopMonitor, async () => {
      for (const { engine } of host.current) engine.stopMonitor();
      await setMonitoring();
    }),

    vscode.commands.registerCommand(Commands.runDoctor, () =>
      reportErrors('running doctor', async () => {
        for (const { folder, engine } of await host.ready()) {
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

    vscode.commands.registerCommand(Commands.openControlPlane, () =>
      reportErrors('opening .mam', async () => {
        const fe = await pickFolder(host);
        if (!fe) return;
        await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(path.join(fe.folder.uri.fsPath, '.mam')));
      }),
    ),

    vscode.commands.registerCommand(Commands.configureBroker, () => reportErrors('configuring the broker', () => configureBroker(context))),
  ];
}

/** Embedded broker, or your own: URL and user in settings, the password in SecretStorage. */
async function configureBroker(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration('mam');
  const choice = await vscode.window.showQuickPick(
    [
      { label: 'Use the embedded broker', description: 'recommended', detail: 'MAM runs a private MQTT broker for this workspace on 127.0.0.1 with generated credentials.', own: false },
      { label: 'Use my own MQTT broker…', detail: 'A broker you run (e.g. Mosquitto), for remote runners on other hosts. Never a public one.', own: true },
    ],
    { title: 'Configure Broker' },
  );
  if (!choice) return;
  const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  if (!choice.own) {
    await config.update('broker.host', undefined, target);
    await context.secrets.delete(BROKER_PASSWORD_SECRET);
    void vscode.window.showInformationMessage('MAM: using the embedded broker.');
    return;
  }
  const url = await vscode.window.showInputBox({
    title: 'Broker (1/3): address',
    prompt: 'A host name, or mqtt://host:port, or mqtts://host:port for TLS',
    value: config.get<string>('broker.host') || 'mqtts://',
    validateInput: (v) => (/^(mqtts?:\/\/)?[A-Za-z0-9.[\]:-]+(:\d+)?\/?$/.test(v.trim()) ? undefined : 'mqtt[s]://host[:port] or a host name'),
  });
  if (url === undefined) return;
  const user = await vscode.window.showInputBox({ title: 'Broker (2/3): user name', prompt: 'Empty for none', value: config.get<string>('broker.username') ?? '' });
  if (user === undefined) return;
  const password = user ? await vscode.window.showInputBox({ title: 'Broker (3/3): password', prompt: 'Kept in VS Code’s secret storage, never in settings', password: true }) : '';
  if (password === undefined) return;
  await config.update('broker.host', url.trim(), target);
  await config.update('broker.username', user, target);
  // Tied to this broker: a folder whose settings or .mam.env name another host never gets it.
  const port = config.get<number>('broker.port') ?? 0;
  if (password) await context.secrets.store(BROKER_PASSWORD_SECRET, JSON.stringify({ host: url.trim(), port, password }));
  else await context.secrets.delete(BROKER_PASSWORD_SECRET);
  void vscode.window.showInformationMessage(`MAM: using the broker at ${url.trim()}.`);
}
