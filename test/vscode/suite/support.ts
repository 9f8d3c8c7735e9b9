import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import { stopEmbeddedBroker } from '../../../src/core/messaging/embeddedBroker';
import { TmuxBackend } from '../../../src/core/mux/tmux';
import { waitFor } from '../waitFor';

export const EXTENSION_ID = 'mam-dev.multi-agent-mux';
/** The placeholder of the question "which workspace folder?" (src/views/shared/picks.ts), as a user sees it. */
export const FOLDER_QUESTION = 'In which workspace folder?';
/** The repository: this file runs from out/test/vscode/suite/. */
export const REPO_ROOT = path.resolve(__dirname, '../../../..');
const FAKE_AGENT = path.join(REPO_ROOT, 'test/fixtures/fake-agent.js');

/** The running extension's API, once it has activated on its own and built its engines. */
export async function mamApi(): Promise<MamApi> {
  const ext = vscode.extensions.getExtension<MamApi>(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not loaded`);
  await waitFor('the extension to activate', () => ext.isActive, 20_000);
  await ext.exports.host.ready();
  return ext.exports;
}

/** The fake agent impersonating claude (so its ready sign is claude's), or the CLI `as` names, in a job `mode`. */
export function fakeAgentCommand(mode: string, extra: string[] = [], as = 'claude'): string[] {
  return [process.execPath, FAKE_AGENT, '--as', as, '--mode', mode, ...extra];
}

/** Stops what the tests started: the agents' tmux server and the embedded broker. */
export async function cleanUp(api: MamApi): Promise<void> {
  for (const { engine } of api.host.current) {
    engine.core.monitor.stop();
    await new TmuxBackend({ server: engine.core.sessions.defaultServer('tmux'), env: process.env }).killServer();
    await stopEmbeddedBroker(engine.core.controlPlane.paths);
  }
}
