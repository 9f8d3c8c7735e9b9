import type * as vscode from 'vscode';
import type { Logger } from '../core/base/log';
import { ControlPlane } from '../core/controlPlane';

/** The core built for one workspace folder. */
export class WorkspaceCore {
  readonly controlPlane: ControlPlane;

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    logger: Logger,
  ) {
    this.controlPlane = new ControlPlane(folder.uri.fsPath, { logger });
  }
}

/** Adapts the engine's Logger to a VS Code LogOutputChannel. */
export function channelLogger(channel: vscode.LogOutputChannel): Logger {
  return {
    debug: (m) => channel.debug(m),
    info: (m) => channel.info(m),
    warn: (m) => channel.warn(m),
    error: (m) => channel.error(m),
  };
}
