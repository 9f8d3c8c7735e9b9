import * as path from 'node:path';
import { MemoryLogger } from '../../src/core/base/log';
import { resolveConfig } from '../../src/core/config/settings';
import { ControlPlane } from '../../src/core/store/controlPlane';
import { realMuxFactory } from '../../src/core/mux';
import { TmuxBackend } from '../../src/core/mux/tmux';
import { SessionService } from '../../src/core/sessions/sessionService';
import { FAKE_AGENT, tempDir, tempWorkspace } from './helpers';

let serial = 0;

export interface SessionFixture {
  workspace: string;
  env: NodeJS.ProcessEnv;
  server: string;
  /** The fake agent's log (every line it received, its argv at each start). */
  log: string;
  logger: MemoryLogger;
  service: SessionService;
  controlPlane: ControlPlane;
  tmux: TmuxBackend;
  dispose(): Promise<void>;
}

/**
 * A workspace with its own tmux server, and the claude and codex adapters pointed at the fake agent
 * (impersonating each, with the real store layout under the run's temp HOME).
 */
export function sessionFixture(extraEnv: Record<string, string> = {}): SessionFixture {
  const workspace = tempWorkspace();
  const log = path.join(tempDir('agentlog'), 'agent.log');
  const server = `mam-test-${process.pid}-${serial++}`;
  const fake = (persona: string) => `${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE_AGENT)} --as ${persona} --log ${JSON.stringify(log)}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MAM_TMUX_SERVER: server,
    MAM_AGENT_COMMAND_CLAUDE: fake('claude'),
    MAM_AGENT_COMMAND_CODEX: fake('codex'),
    ...extraEnv,
  };
  const logger = new MemoryLogger();
  const controlPlane = new ControlPlane(workspace, { logger });
  const service = new SessionService({ controlPlane, config: resolveConfig({ workspace, env }), logger, env, muxFactory: realMuxFactory(env) });
  const tmux = new TmuxBackend({ server, env });
  return { workspace, env, server, log, logger, service, controlPlane, tmux, dispose: () => tmux.killServer() };
}

/** A shell-agent command that runs until killed, optionally in another folder. */
export function idleCommand(chdir?: string): string[] {
  const script = `${chdir ? `process.chdir(${JSON.stringify(chdir)});` : ''}setInterval(() => {}, 1000)`;
  return [process.execPath, '-e', script];
}
